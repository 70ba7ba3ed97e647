"""``occubench.run(config)``: one evaluation run, as a library call.

The command line only parses flags into a :class:`RunConfig` and calls :func:`run`; the matrix, rescoring and
synthesis's calibration call it the same way. A run builds its episodes with an
:class:`~occubench.engine.factory.EpisodeFactory`, hands each phase's pending ones to an executor
(:mod:`occubench.engine.executor`) and summarizes what its directory holds. Re-running a config resumes: tasks
already ``ok`` in the run directory are skipped, tasks that ended in an error are retried. One run at a time works
in a directory.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from occubench import __version__, telemetry
from occubench.config import RunConfig, is_outside
from occubench.core.hints import create_token
from occubench.core.results import Result, live_groups
from occubench.core.suite import SuitePlan
from occubench.core.tables import Table
from occubench.engine.executor import Executor, Job
from occubench.engine.factory import EpisodeFactory, today
from occubench.engine.identity import check_same_config, recorded_config, refuse_moved_worlds
from occubench.engine.models import RunGroup, connection_limit, preflight, with_server_profile
from occubench.engine.progress import RunProgress
from occubench.engine.registry import load_executor
from occubench.engine.rescore import SavedEpisodes
from occubench.engine.summary import Price, Summary, load_prices, summarize
from occubench.errors import ConfigError
from occubench.hub.worlds import resolved
from occubench.store import ResultStore, latest_by_task, pending, pending_tasks, read_args, run_records
from occubench.util.console import rich_console
from occubench.util.lock import DirectoryLock
from occubench.util.log import LogRoute, end_logging, setup_logging
from occubench.util.openfiles import ensure_open_files
from occubench.util.redact import Redactor
from occubench.util.text import markup

if TYPE_CHECKING:
    from occubench.llm import Model, ResponseCache


@dataclass
class RunSummary:
    """What a finished run holds: the latest result of every (task, trial) in its directory and their summary."""

    run_name: str
    run_dir: Path
    config_hash: str
    results: list[Result]
    summary: Summary
    #: Tables the suite adds (the workplace's figures, say).
    tables: list[Table] = field(default_factory=list)
    #: Episodes not started because the run reached ``max_cost``; the same config resumes them.
    not_started: int = 0
    #: When some results got live hints (``--live-hints``): the summary of the results without and of those with,
    #: by the suffix their group's name takes (:func:`occubench.core.results.live_groups`); else empty.
    apart: dict[str, Summary] = field(default_factory=dict)

    @property
    def passed(self) -> int:
        return self.summary.overall.passed

    @property
    def evaluated(self) -> int:
        return self.summary.overall.evaluated

    @property
    def errors(self) -> int:
        return len(self.summary.errors)

    @property
    def completion_rate(self) -> float | None:
        return self.summary.overall.rate


def run(config: RunConfig, *, console: Console | None = None, group: RunGroup | None = None) -> RunSummary:
    """Evaluate ``config``'s agent on its suite; returns the summary of every result in the run directory.

    Progress goes to ``console`` (stderr by default; ``rich_console(quiet=True)`` for none). Raises
    :class:`ConfigError` for bad input, before any request is paid for; no error message carries a secret. A
    ``KeyboardInterrupt`` leaves every finished result on disk; the same config resumes. Runs of one ``group``
    share their endpoints' clients and caches.
    """
    redactor = Redactor(config.secrets())
    with redactor.errors():
        _check(config)
        console = console or rich_console(stderr=True)
        return _Run(with_server_profile(config, console), console, redactor, group).execute()


def _check(config: RunConfig) -> None:
    """Bad combinations of settings, before anything is read."""
    if config.agent == "llm" and not config.agent_model:
        raise ConfigError("--agent-model is required (or --agent reference/noop on a suite with reference "
                          "solutions, or --agent module:Callable)")
    if config.replay and not config.cache:
        raise ConfigError("--replay needs --cache PATH: the cache to replay from")
    if config.max_cost is not None and config.prices is None:
        raise ConfigError("--max-cost needs --prices FILE: the prices to count the cost with")
    # An executor that does not say its episodes run in this process is taken not to.
    in_process = getattr(load_executor(config.executor), "in_process", False)
    if not in_process and config.rescore:
        raise ConfigError("rescoring reads the source run directory, so it runs in one process: drop "
                          f"--executor {config.executor}")
    if config.live_hints and not in_process:
        # The viewer and the episodes meet in the run folder: workers on other hosts never see it.
        raise ConfigError(f"--live-hints needs the episodes in this process, beside the run folder the viewer "
                          f"writes hints to: drop --executor {config.executor} or --live-hints")
    if config.live_hints and config.rescore:
        raise ConfigError("--live-hints with rescoring: no agent runs, so no hint could reach one; drop --live-hints")
    if not in_process and is_outside(config.agent):
        raise ConfigError(f"--agent {config.agent.partition(':')[0]}: its episodes are served from this process, "
                          f"so it runs in one: drop --executor {config.executor}")


def _refuse_moved_worlds(config: RunConfig) -> None:
    """Stop a run whose folder holds results of another package than the one its --worlds version names now (the
    tag was moved) before that package is downloaded and installed. Once it is installed, planning the run finds
    its folder and :func:`check_same_config` refuses; until then the folder is found as the run would find it,
    with the package it ran (still installed here, or left to that later check)."""
    from occubench.hub.install import installed

    digest = config.worlds_digest
    if digest is None or installed(digest) is not None:
        return
    output = Path(config.output_dir)
    if config.run_name:
        folders = [output / config.run_name]
    else:
        folders = sorted(path for path in output.iterdir() if path.is_dir()) if output.is_dir() else []
    for folder in folders:
        previous = read_args(folder)
        was = recorded_config(previous).get("worlds_digest")
        if not was or was == digest:
            continue
        if not config.run_name:  # the folder this command names, planned with the package the folder ran
            if config.rescore or previous.get("worlds") != config.worlds or installed(was) is None or \
                    EpisodeFactory.create(config.model_copy(update={"worlds_digest": was})).folder_name() \
                    != folder.name:
                continue
        if run_records(folder, quiet=True).results:
            refuse_moved_worlds(folder, previous, digest)


class _Run:
    """One run, from its config to its summary: what it is made of is settled on construction (bad input raises
    before the run directory is touched), :meth:`execute` runs it."""

    def __init__(self, config: RunConfig, console: Console, redactor: Redactor, group: RunGroup | None) -> None:
        self.config, self.console, self.redactor, self.group = config, console, redactor, group
        self.prices = load_prices(Path(config.prices)) if config.prices else None
        config = resolved(config)  # the digest of its --worlds package, nothing downloaded yet
        _refuse_moved_worlds(config)
        self.factory = factory = EpisodeFactory.create(config, console)
        self.config = config = factory.config  # with what it resolved: the --worlds package's digest and folder
        self.rescored = SavedEpisodes.read(Path(config.rescore), factory.plan, factory.definition.name, console,
                                            config.agent_images) \
            if config.rescore else None
        self.run_name = config.run_name or factory.folder_name(self.rescored)
        self.run_dir = Path(config.output_dir) / self.run_name
        if self.run_dir.exists() and not self.run_dir.is_dir() or Path(config.output_dir).is_file():
            raise ConfigError(f"--output-dir: {config.output_dir} holds a file where the run directory "
                              f"{self.run_dir} should be")
        self.store = ResultStore(self.run_dir, redactor)
        self.date = config.date or self.store.previous_args().get("date") or today()
        if self.prices is not None and config.max_cost is not None and \
                (unpriced := set(factory.roles.values()) - set(self.prices)):
            raise ConfigError(f"--max-cost: no price for {', '.join(sorted(unpriced))} in {config.prices}: their "
                              "cost could not be counted")
        self.cache = self._cache()
        self.models = self._models()
        self.agent = self.rescored.agent if self.rescored else factory.agent(self.models, self.date)
        self.run_fields, self.meaning = factory.describe(self.date, self.rescored)
        self.digest: str = self.run_fields["config_hash"]
        # Rescoring calls only the judge: a simulated world's model is built for the suite but never asked.
        self.called = {role: model for role, model in self.models.items()
                       if not self.rescored or role == "verifier"}
        self.preflown = config.skip_preflight or config.replay or not self.called
        self.executor: Executor = load_executor(config.executor)(config)
        telemetry.configure(config.otel, config.secrets())
        if getattr(self.executor, "in_process", False) and not config.replay and self.called:
            endpoints = {config.endpoint(role) for role in self.called}
            flag = f"--max-connections {config.max_connections}" if config.max_connections \
                else f"--max-concurrency {config.max_concurrency}"
            ensure_open_files(len(endpoints) * connection_limit(config), f"{flag} on {len(endpoints)} endpoint(s)")

    def _cache(self) -> ResponseCache | None:
        config = self.config
        if not config.cache:
            return None
        if self.group:
            return self.group.cache(config.cache, config.replay)
        from occubench.llm import ResponseCache

        return ResponseCache(config.cache, replay=config.replay)

    def _models(self) -> dict[str, Model]:
        if not self.group:
            return self.factory.models(cache=self.cache)
        with self.group.lock:
            return self.factory.models(cache=self.cache, clients=self.group.clients)

    def _preflight(self) -> None:
        if not self.preflown:
            preflight(self.called, {role: self.config.endpoint(role) for role in self.called},
                      self.config.retry_budget, self.console)
            self.preflown = True

    def execute(self) -> RunSummary:
        config, run_dir, store = self.config, self.run_dir, self.store
        created = next((folder for folder in [*reversed(run_dir.parents), run_dir] if not folder.exists()), None)
        # The folder is locked and its results checked against this run before any request is sent: a second run
        # into it, or one with another configuration, stops at once.
        lock = DirectoryLock(run_dir).acquire()
        preflight_failed = False
        logging_to: LogRoute | None = None
        try:
            if lock.taken_over:
                self.console.print(f"note: taking over {markup(run_dir)} from process {lock.taken_over}, which ended "
                                   "without releasing it")
            belongs = check_same_config(store, self.meaning, self.digest, config.force, self.factory.plan.task_set,
                                        self.console)
            if pending(self.factory.plan.tasks, latest_by_task(store.load()), config.trials):
                preflight_failed = True
                self._preflight()
                preflight_failed = False
            logging_to = setup_logging(run_dir, debug=config.debug, redactor=self.redactor,
                                       tag_tasks=config.max_concurrency > 1)
            store.write_args({**config.record(), "occubench_version": __version__, "date": self.date,
                              "config": self.meaning, "config_hash": self.digest, **belongs,
                              **self.factory.plan.settings})
            if (live := self.factory.live_dir) is not None:
                create_token(live)
                self.console.print(f"Live hints: `occubench view {markup(str(run_dir))}` prints the URL (with this "
                                   "run's token) where a person watching can send the agent hints")
            not_started = self._phases()
        finally:
            telemetry.flush()
            if logging_to:
                end_logging(logging_to)
            lock.release()
            if preflight_failed and created is not None:  # a failed preflight leaves nothing behind
                shutil.rmtree(created, ignore_errors=True)
            if self.cache and not self.group:
                self.cache.close()
        return self._summary(not_started)

    def _phases(self) -> int:
        """Every phase of the suite in turn (a follow-up is planned from the results before it); returns how many
        episodes were not started for ``--max-cost``."""
        config = self.config
        budget = CostBudget(config.max_cost, self.prices, self.store.load()) \
            if config.max_cost is not None and self.prices is not None else None
        follow_ups: list[dict[tuple[Any, int], Result]] = []  # the results each follow-up phase was made from
        phase: SuitePlan | None = self.factory.plan
        not_started = 0
        while phase is not None:
            not_started += self._phase(phase, follow_ups, budget)
            if not phase.follow_up or not_started:
                break
            follow_ups.append(latest_by_task(self.store.load()))
            phase = phase.follow_up(follow_ups[-1])
        if not_started and budget:
            self.console.print(f"[yellow]--max-cost {config.max_cost:g} USD reached ({budget.spent:.4f} USD spent in "
                               f"{markup(self.run_dir)}): {not_started} episode(s) not started; run again with a "
                               "higher --max-cost to go on[/yellow]")
        return not_started

    def _phase(self, phase: SuitePlan, follow_ups: list[dict[tuple[Any, int], Result]],
               budget: CostBudget | None) -> int:
        config, store = self.config, self.store
        todo, kept = pending_tasks(phase.tasks, store, config.trials)
        total = len(phase.tasks) * config.trials
        if self.rescored:  # only the episodes the source run evaluated
            todo, total = self.rescored.todo(todo), len(self.rescored.agent.episodes)
        self.console.print(f"Run directory: {markup(self.run_dir)}  ({total} episode(s): {len(phase.tasks)} task(s) × "
                           f"{config.trials} trial(s); {total - len(todo)} already done, {len(todo)} to run)")
        if todo:
            self._preflight()
        progress = RunProgress(len(todo), self.console, live=False if config.debug or self.group else None,
                               label=self.run_name if self.group else None, earlier=kept)
        job = Job(self.factory, self.date, list(follow_ups),
                  lambda: self.factory.episodes(self.models, self.agent, self.run_fields, phase, self.run_name))
        try:
            with progress:
                return self.executor.run(job, todo, store, on_result=budget.counting(progress.add) if budget
                                         else progress.add, may_start=budget.open if budget else None)
        except KeyboardInterrupt:
            self.console.print(f"\nInterrupted: {progress.done} result(s) saved in {markup(store.path)}. Run the same "
                               "command to resume.")
            raise

    def _summary(self, not_started: int) -> RunSummary:
        latest = list(latest_by_task(self.store.load()).values())
        if "agent" in self.models and any(r.ok for r in latest) and not any(r.tool_calls for r in latest if r.ok):
            self.console.print("[yellow]warning: the agent made no tool call in any task: if its endpoint drops the "
                               "tools (see the preflight's warning and docs/guides/endpoints.md), every score here "
                               "is meaningless[/yellow]")
        definition, groups = self.factory.definition, live_groups(latest) or [("", latest)]
        # The suite's tables never pool results with live hints and without: a set of tables each, titled apart.
        tables = [replace(table, title=table.title + suffix) for suffix, group in groups
                  for table in (definition.report_tables(group) if definition.report_tables else [])]
        apart = {suffix: summarize(group, self.prices) for suffix, group in groups} \
            if any(suffix for suffix, _ in groups) else {}
        return RunSummary(self.run_name, self.run_dir, self.digest, latest, summarize(latest, self.prices), tables,
                          not_started, apart)


class CostBudget:
    """``--max-cost``: what the run directory's results cost so far (every record, errors included, as the
    summary counts them); new episodes start only below the limit, those under way finish."""

    def __init__(self, limit: float, prices: dict[str, Price], results: list[Result]) -> None:
        self.limit, self.prices = limit, prices
        self.spent = summarize(results, prices).cost_total
        self._lock = threading.Lock()

    def open(self) -> bool:
        with self._lock:
            return self.spent < self.limit

    def counting(self, on_result: Callable[[Result], None]) -> Callable[[Result], None]:
        def add(result: Result) -> None:
            with self._lock:  # what the attempts it replaced spent is counted already
                self.spent += summarize([replace(result, earlier_usage={})], self.prices).cost_total
            on_result(result)
        return add
