"""The contract between a kind of world and the harness.

Every world kind (LLM-simulated, executable, workplace, or a third party's) provides a :class:`SuiteDefinition`,
registered under the entry-point group ``occubench.suites`` or named as ``--suite package.module:attribute``. It
says everything the harness needs to know about it — its tasks and the model roles it needs (:class:`SuitePlan`),
how to list and validate it, and the tables it adds to a run's summary and to a report — so no code outside a suite
tests a suite's name. The plan's :class:`Suite` gives a fresh environment per task and a verifier for a finished
trajectory; the episode engine knows nothing else about the world.
"""

from __future__ import annotations

import hashlib
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from occubench.core.environment import Environment
from occubench.core.task import Task, category_named
from occubench.core.trajectory import Trajectory
from occubench.core.verifier import Verdict
from occubench.errors import ConfigError
from occubench.util.aio import off_loop
from occubench.util.text import markup
from occubench.util.untrusted import check_file, read_chunks
from occubench.util.untrusted import folder_files as folder_files  # the listing a digest is made of

#: The model roles only some suites call.
SUITE_ROLES = ("world", "verifier", "npc", "reflection")

if TYPE_CHECKING:
    from rich.console import Console  # not at run time: sandbox workers import this module, and rich is heavy

    from occubench.config import RunConfig
    from occubench.core.agent import Agent
    from occubench.core.options import SuiteOptions
    from occubench.core.results import Result
    from occubench.core.tables import Chart, Table
    from occubench.llm import Model


class Suite(ABC):
    #: Whether making and closing a world runs code that blocks (a sandbox worker's start, a database): an episode
    #: then does it in a thread off the loop. A simulated world is made of text and says False.
    worlds_block: ClassVar[bool] = True

    @abstractmethod
    def tasks(self) -> list[Task]:
        """Every task of the suite, in a stable order."""

    @abstractmethod
    def world(self, task: Task) -> Environment:
        """A fresh, isolated environment for one episode of ``task``."""

    @abstractmethod
    def verify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        """Judge the finished episode; ``env`` is in its final state."""

    async def averify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        """:meth:`verify` for an episode on an event loop: in a thread off the loop, since a verifier may run world
        code; a suite whose verifier only waits on a model overrides this to await it on the loop."""
        return await off_loop(self.verify, task, trajectory, env)


@dataclass(frozen=True)
class TaskSet:
    """What a run evaluates, for its identity: ``identity`` names the content of its tasks (a hash of what they are
    made from, never a path) and the settings that make them; ``ids`` is every task id a run of it may hold results
    for (every phase, before ``--task-ids``, ``--limit`` and the like choose among them). Two runs whose task sets
    differ never share a run directory, and a results line for a task outside ``ids`` is left out on load."""

    identity: dict[str, Any]
    ids: frozenset[Any]


def content_digest(files: Mapping[str, Path]) -> str:
    """A hash of the files' contents under the given names (names relative to what they belong to, not where they
    are on disk), each read by :func:`~occubench.util.untrusted.read_chunks` (no link, a size limit, in chunks). A
    file that breaks its rules or cannot be read is a :class:`ConfigError` naming it."""
    digest = hashlib.sha256()
    for name in sorted(files):
        size = check_file(files[name])  # framed by its size as whole reads were: run identities stay
        digest.update(f"{len(name)}:{name}{size}:".encode())
        for chunk in read_chunks(files[name]):
            digest.update(chunk)
    return digest.hexdigest()[:16]


def task_set(tasks: Iterable[Task], identity: dict[str, Any], extra_ids: Iterable[Any] = ()) -> TaskSet:
    return TaskSet(identity, frozenset([*(task.task_id for task in tasks), *extra_ids]))


@dataclass
class SuitePlan:
    """What one run needs from the suite it evaluates."""

    tasks: list[Task]
    #: Model name per role the suite itself needs (the agent's is added by the run); None for a role it needs
    #: whose model was not given (the run stops, naming the flag).
    roles: dict[str, str | None]
    #: Builds the suite once the models exist; gets them and the simulator's fault rules (prompt mode).
    make: Callable[[dict[str, Model], str | None], Suite]
    #: The results' ``world_model`` (None for worlds that are code).
    world_label: str | None
    #: Whether its worlds are simulated by a model (and can be told to misbehave: prompt-mode faults).
    simulated: bool
    #: Extra facts for ``args.json`` (data paths, say).
    settings: dict[str, Any] = field(default_factory=dict)
    #: Plays each task's reference solution, where the suite has them (``--agent reference``).
    reference: Agent | None = None
    #: A second phase that depends on the first phase's results (the workplace's day two).
    follow_up: Callable[[dict[Any, Result]], SuitePlan] | None = None
    #: The run's task set (see :class:`TaskSet`); a suite that gives none is identified by its name alone.
    task_set: TaskSet | None = None


@dataclass(frozen=True)
class ValidateOptions:
    days: int = 50
    seed: int = 0
    #: Executable worlds: validate the world folders in this folder instead of the built-in ones.
    worlds_dir: str | None = None
    #: Executable worlds: run outside worlds without a sandbox where none is available.
    trust_world_code: bool = False
    #: AWM-format sets: the folder of the set's files.
    data_dir: str | None = None
    #: Trainee-Bench: the benchmark config, and the reference's files (None: the downloaded copy).
    traineebench_config: str | None = None
    reference_dir: str | None = None


@dataclass(frozen=True)
class SuiteDefinition:
    name: str
    #: One line for ``occubench suites``.
    description: str
    plan: Callable[[RunConfig, Console], SuitePlan]
    #: Tables describing the suite's worlds for ``occubench suites``, and the same as JSON.
    listing: Callable[[], tuple[list[Table], Any]] | None = None
    #: Checks every task is solvable and not trivially passed; prints its findings; True when all are valid.
    validate: Callable[[ValidateOptions, Console], bool] | None = None
    #: Tables the suite adds to a run's summary and report.
    report_tables: Callable[[list[Result]], list[Table]] | None = None
    #: Tables over all of the suite's results across the runs of a report or a matrix run (the workplace's scores
    #: per guidance tier, say).
    overview_tables: Callable[[list[Result]], list[Table]] | None = None
    #: Charts over the same results, drawn in the HTML report beside those tables (Trainee-Bench's Figure 4, say).
    overview_charts: Callable[[list[Result]], list[Chart]] | None = None
    #: Whether a result that names no suite (a line of another harness's file) is this suite's.
    claims: Callable[[Result], bool] | None = None
    #: The model roles of :data:`SUITE_ROLES` it calls (``npc`` for ``--npc-model``...) and whether it shows
    #: guidance tiers (``guidance``), and the classes of its own options: a run that sets another model, its request
    #: parameters or option is refused. None: a suite that does not say (an older plugin), whose settings are not
    #: checked.
    reads: frozenset[str] | None = None
    options: tuple[type[SuiteOptions], ...] = ()

    def refuse_unread(self, config: RunConfig) -> None:
        """A :class:`ConfigError` naming the first setting of ``config`` this suite would record and ignore: a model
        role it never calls (with its endpoint and parameters), a guidance tier, one of another suite's options."""
        if self.reads is None:
            return
        given = [f"{role}_{part}" for role in SUITE_ROLES if role not in self.reads
                 for part in ("model", "params") if getattr(config, f"{role}_{part}")]
        given += ["guidance"] if config.guidance and "guidance" not in self.reads else []
        given += [key for key, value in config.suite_options.items() if value not in (None, False)
                  and not any(key in options.model_fields for options in self.options)]
        if given:
            raise ConfigError(f"--{given[0].replace('_', '-')} is not an option of --suite {self.name}: it would be "
                              "recorded and change nothing")


def select_tasks(tasks: list[Task], config: RunConfig, console: Console) -> list[Task]:
    """The tasks a run evaluates: those of the chosen categories (names or abbreviations), ids and difficulty
    levels, then shuffled with ``--seed`` if asked, then the first ``--limit``. Unknown ids are warned about (all
    unknown: an error)."""
    selected = tasks
    if config.categories:
        try:
            wanted = {category_named(item) for item in config.categories}
        except ValueError as exc:
            raise ConfigError(f"--categories: {exc}") from None
        selected = [task for task in selected if task.category in wanted]
    if config.task_ids:
        known = {str(task.task_id) for task in tasks}
        unknown = [item for item in config.task_ids if item not in known]
        if unknown and len(unknown) == len(config.task_ids):  # nothing to run: one error, not a warning and one
            raise ConfigError(f"--task-ids: no task with id {', '.join(unknown)}")
        if unknown:
            console.print(f"[yellow]warning: --task-ids: no task with id {markup(', '.join(unknown))}; "
                          "they are ignored[/yellow]")
        selected = [task for task in selected if str(task.task_id) in set(config.task_ids)]
    if config.difficulty:
        selected = [task for task in selected if task.difficulty in config.difficulty]
    if config.shuffle:
        selected = list(selected)
        random.Random(config.seed).shuffle(selected)
    return selected[:config.limit]

