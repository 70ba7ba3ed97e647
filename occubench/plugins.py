"""Suites and agents as plugins.

A suite is a :class:`SuiteDefinition` registered under the entry-point group ``occubench.suites`` (the three
built-in suites are registered that way too), or named directly as ``--suite package.module:attribute``. It says
everything the harness needs to know about it — its tasks and the model roles it needs (:class:`SuitePlan`), how
to list and validate it, and the tables it adds to a run's summary and to a report over several runs — so no code
outside a suite tests a suite's name. An agent is anything with ``run(task, env, trajectory)``
(:class:`occubench.agent.Agent`); ``--agent package.module:attribute`` names one, or a factory that takes an
:class:`AgentContext` and returns one.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import random
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rich.console import Console

from occubench.errors import ConfigError
from occubench.task import CATEGORY_ABBREVIATIONS, Task

if TYPE_CHECKING:
    from occubench.agent import Agent
    from occubench.config import RunConfig
    from occubench.llm import Model
    from occubench.report.tables import Table
    from occubench.results import Result
    from occubench.suite import Suite

GROUP = "occubench.suites"


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
    are on disk). An unreadable file is a :class:`ConfigError` naming it."""
    digest = hashlib.sha256()
    for name in sorted(files):
        try:
            data = files[name].read_bytes()
        except OSError as exc:
            raise ConfigError(f"{files[name]}: cannot read it ({exc.strerror})") from None
        digest.update(f"{len(name)}:{name}{len(data)}:".encode())
        digest.update(data)
    return digest.hexdigest()[:16]


def folder_files(folder: Path, prefix: str = "") -> dict[str, Path]:
    """Every file under ``folder`` by its relative path (after ``prefix``), bytecode caches left out."""
    return {prefix + path.relative_to(folder).as_posix(): path for path in folder.rglob("*")
            if path.is_file() and "__pycache__" not in path.parts}


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


def _load(spec: str, what: str) -> Any:
    """What ``spec`` names: ``package.module:attribute`` (the current folder is on the import path, as for
    ``python -m``), or ``path/to/file.py:attribute`` (its folder too, so it can import its neighbours)."""
    source, _, attribute = spec.rpartition(":") if spec.partition(":")[0].endswith(".py") else spec.partition(":")
    try:
        value: Any = _module_of_file(Path(source)) if source.endswith(".py") else _module(source)
        for part in attribute.split("."):
            value = getattr(value, part)
    except ImportError as exc:
        raise ConfigError(f"{what} {spec!r}: cannot import {source!r} ({exc})") from None
    except SyntaxError as exc:
        raise ConfigError(f"{what} {spec!r}: {exc.filename}:{exc.lineno}: {exc.msg}") from None
    except AttributeError:
        raise ConfigError(f"{what} {spec!r}: {source} has no attribute {attribute!r}") from None
    return value


def _module(name: str) -> Any:
    if os.getcwd() not in sys.path:  # a console script's path lacks the folder it was started in
        sys.path.append(os.getcwd())
    return importlib.import_module(name)


def _module_of_file(path: Path) -> Any:
    if not path.is_file():
        raise ImportError(f"no file {path}")
    path = path.resolve()
    if str(path.parent) not in sys.path:
        sys.path.append(str(path.parent))
    name = f"occubench_user_{path.stem}_{hashlib.sha256(str(path).encode()).hexdigest()[:8]}"
    if name not in sys.modules:
        found = importlib.util.spec_from_file_location(name, path)
        if found is None or found.loader is None:
            raise ImportError(f"{path} is not a Python file")
        module = importlib.util.module_from_spec(found)
        sys.modules[name] = module
        try:
            found.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[name]


def installed_suites() -> dict[str, SuiteDefinition]:
    """Every suite registered under the ``occubench.suites`` entry-point group, by name."""
    found = {}
    for point in entry_points(group=GROUP):
        definition = point.load()
        if not isinstance(definition, SuiteDefinition) or definition.name != point.name:
            raise ConfigError(f"entry point {point.name} = {point.value} in {GROUP} must be a SuiteDefinition "
                              f"named {point.name!r}")
        found[point.name] = definition
    if not found:
        raise ConfigError(f"no suite is registered under the entry-point group {GROUP}: install occubench "
                          "(pip install -e .) rather than running it from a source folder")
    return found


def load_suite(name: str) -> SuiteDefinition:
    """A registered suite by name, or ``package.module:attribute`` naming a :class:`SuiteDefinition`."""
    if ":" in name:
        definition = _load(name, "--suite")
        if not isinstance(definition, SuiteDefinition):
            raise ConfigError(f"--suite {name!r} is a {type(definition).__name__}, not a SuiteDefinition")
        return definition
    suites = installed_suites()
    if name not in suites:
        raise ConfigError(f"--suite: unknown suite {name!r}; installed: {', '.join(sorted(suites))} "
                          "(or give package.module:attribute)")
    return suites[name]


@dataclass(frozen=True)
class AgentContext:
    """What a user's agent factory gets: the run's settings and, with ``--agent-model``, the model to use."""

    config: RunConfig
    model: Model | None
    date: str


def load_agent(spec: str, context: AgentContext) -> Agent:
    value = _load(spec, "--agent")
    agent: Any = value if hasattr(value, "run") and not isinstance(value, type) else None
    if agent is None and callable(value):
        agent = value(context) if _takes_an_argument(value) else value()
    if not callable(getattr(agent, "run", None)):
        raise ConfigError(f"--agent {spec!r} must name an object with run(task, env, trajectory), or a factory "
                          "taking an AgentContext that returns one")
    return cast("Agent", agent)


def _takes_an_argument(factory: Callable[..., Any]) -> bool:
    """Whether ``factory`` (a class, a function) can be given the AgentContext, or is called with nothing."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # no signature to read (a builtin): give it the context
        return True
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in parameters)


def select_tasks(tasks: list[Task], config: RunConfig, console: Console) -> list[Task]:
    """The tasks a run evaluates: those of the chosen categories (names or abbreviations), ids and difficulty
    levels, then shuffled with ``--seed`` if asked, then the first ``--limit``. Unknown ids are warned about (all
    unknown: an error)."""
    selected = tasks
    if config.categories:
        lookup = {name.lower(): name for name in CATEGORY_ABBREVIATIONS}
        lookup.update({abbr.lower(): name for name, abbr in CATEGORY_ABBREVIATIONS.items()})
        wanted = set()
        for item in config.categories:
            if item.lower() not in lookup:
                raise ConfigError(f"--categories: unknown category {item!r}; choose from "
                                  f"{', '.join(f'{n} ({a})' for n, a in CATEGORY_ABBREVIATIONS.items())}")
            wanted.add(lookup[item.lower()])
        selected = [task for task in selected if task.category in wanted]
    if config.task_ids:
        known = {str(task.task_id) for task in tasks}
        unknown = [item for item in config.task_ids if item not in known]
        if unknown and len(unknown) == len(config.task_ids):  # nothing to run: one error, not a warning and one
            raise ConfigError(f"--task-ids: no task with id {', '.join(unknown)}")
        if unknown:
            console.print(f"[yellow]warning: --task-ids: no task with id {', '.join(unknown)}; "
                          "they are ignored[/yellow]")
        selected = [task for task in selected if str(task.task_id) in set(config.task_ids)]
    if config.difficulty:
        selected = [task for task in selected if task.difficulty in config.difficulty]
    if config.shuffle:
        selected = list(selected)
        random.Random(config.seed).shuffle(selected)
    return selected[:config.limit]
