"""Robustness: completion at each fault level (:data:`occubench.config.FAULT_LEVELS`) relative to the clean one,
from run directories.

The score is OccuBench's worst-case retention, ``R = min(CR_E1, CR_E2, CR_E3) / CR_E0``: the levels R takes in are
those the table marks (:attr:`~occubench.config.FaultLevel.in_robustness`).

A row is one (suite, agent model, world model, guidance tier): runs of different suites (an executable E1 run and a
workplace E0 run of the same agent, say), or of different workplace guidance tiers, are never joined into one row.
Two things a row cannot show are reported as warnings (:attr:`RobustnessRow.warnings`, one line each, naming the
runs):

- its fault levels cover different tasks (E0 has results for 382 tasks, E2 for 2): R then compares rates over
  different tasks. A task counts as covered when it has a result, an error included: errors are counted apart and
  retried, and warning about each would bury the warnings that matter;
- one of its levels pools results of several runs that share (task, trial) pairs — the same run repeated into a
  second directory, say. Such results are **kept pooled**: every run's result counts, so a shared task counts once
  per run. Dropping one of them would mean choosing a run silently, and refusing would stop a report over
  ``results/*`` for a directory left over from a retry; the warning gives each run's own rate next to the pooled
  one, so the reader sees how much the overlap moves it.
"""

from __future__ import annotations

import functools
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from occubench.config import CLEAN_LEVEL, FAULT_LEVELS
from occubench.core.results import Result, with_live_label
from occubench.core.suite import SuiteDefinition
from occubench.core.tables import percent
from occubench.engine.registry import installed_suites
from occubench.errors import ConfigError
from occubench.store import RESULTS_FILE, RunRecords, latest_by_task, run_records
from occubench.util.text import terminal

#: The suite of a result that names none (a file of the original OccuBench harness, or of another one).
UNKNOWN_SUITE = "-"


def suite_of(result: Result) -> str:
    """The suite a result belongs to: the one it records, else the installed suite that claims it (a line of the
    original OccuBench harness names none), else ``-``."""
    if result.suite:
        return result.suite
    return next((definition.name for definition in _claiming()
                 if definition.claims is not None and definition.claims(result)), UNKNOWN_SUITE)


@functools.cache
def _claiming() -> list[SuiteDefinition]:
    return [definition for definition in installed_suites().values() if definition.claims is not None]


def with_guidance(text: str, tier: int) -> str:
    """``text`` naming the guidance tier when there is one: how a row or setting of tier N > 0 is told apart."""
    return f"{text}, guidance {tier}" if tier else text


def warn(message: str, warnings: list[str] | None = None) -> None:
    """One warning line on stderr, also appended to ``warnings`` when given (so a report can show it)."""
    # One line, though it may name a file or quote a results line.
    print(f"warning: {terminal(message, newlines=False)}", file=sys.stderr)
    if warnings is not None:
        warnings.append(message)


def r_formula() -> str:
    """How R is computed, for table titles: ``min(E1, E2, E3) / E0`` for the paper's levels (read from the table
    when asked, so a level added to it is named)."""
    return f"min({', '.join(level.name for level in FAULT_LEVELS.values() if level.in_robustness)}) / {CLEAN_LEVEL}"


def robustness_score(rates: Mapping[str, float | None]) -> float | None:
    """R: the worst completion rate of the levels R takes in (:attr:`FaultLevel.in_robustness`) over the clean
    level's; None unless each of them is known and the clean rate is above 0."""
    clean = rates.get(CLEAN_LEVEL)
    faulted = [rates.get(level.name) for level in FAULT_LEVELS.values() if level.in_robustness]
    if not clean or any(rate is None for rate in faulted):
        return None
    return min(rate for rate in faulted if rate is not None) / clean


@dataclass
class RunTally:
    """What one run contributed to one level of a row."""

    run: str
    passed: int = 0
    evaluated: int = 0

    @property
    def rate(self) -> float | None:
        return self.passed / self.evaluated if self.evaluated else None


@dataclass
class RobustnessRow:
    agent_model: str
    world_model: str
    #: Completion rate (0–1) per level, over the tasks evaluated at that level.
    rates: dict[str, float | None] = field(default_factory=dict)
    evaluated: dict[str, int] = field(default_factory=dict)
    #: The row's suite (see :func:`suite_of`).
    suite: str = UNKNOWN_SUITE
    #: Per level, the ids (as text) of the tasks it covers: those with a result, an error included (an error is
    #: retried by the next run; it does not make the task set differ).
    tasks: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)
    #: Per level, what each run pooled into it contributed, in run order (run names are "" when not known).
    runs: dict[str, list[RunTally]] = field(default_factory=dict)
    #: Per level, how many (task, trial) pairs were evaluated by more than one run (they count once per run).
    overlapping: dict[str, int] = field(default_factory=dict)
    #: The workplace guidance tier of the row's results (:attr:`Result.guidance`).
    guidance: int = 0

    @property
    def score(self) -> float | None:
        return robustness_score(self.rates)

    @property
    def label(self) -> str:
        return with_guidance(f"agent {self.agent_model}, world model {self.world_model}, suite {self.suite}",
                             self.guidance)

    @property
    def warnings(self) -> list[str]:
        """One line per problem the rates hide: levels over different tasks, runs pooled over the same tasks."""
        messages = []
        covered = [level for level in FAULT_LEVELS if self.tasks.get(level)]
        if len({self.tasks[level] for level in covered}) > 1:
            shared = frozenset.intersection(*(self.tasks[level] for level in covered))
            parts = [f"{level}: {len(self.tasks[level])} tasks{_run_names(self.runs.get(level, []))}"
                     for level in covered]
            messages.append(f"{self.label}: the fault levels cover different tasks ({', '.join(parts)}; "
                            f"{len(shared)} tasks at every level): their rates and R compare different task sets")
        for level in FAULT_LEVELS:
            if not self.overlapping.get(level):
                continue
            runs = [t for t in self.runs.get(level, []) if t.evaluated]
            source = "results" if len(runs) < 2 else f"{len(runs)} runs (" + ", ".join(
                f"{t.run} {t.passed}/{t.evaluated} = {percent(t.rate)}" for t in runs) + ")"
            messages.append(f"{self.label}, {level}: {source} evaluated the same {self.overlapping[level]} (task, "
                            f"trial) pairs; pooled as they are, a shared task counting once per run: "
                            f"{percent(self.rates.get(level))} over {self.evaluated.get(level, 0)} results")
        return messages


def _run_names(tallies: list[RunTally]) -> str:
    names = [t.run for t in tallies if t.run]
    return f" ({', '.join(names)})" if names else ""


def robustness_table(results: Iterable[Result] | Mapping[str, Iterable[Result]]) -> list[RobustnessRow]:
    """One row per (suite, agent model, world model, guidance tier) with the completion rate of each level; errors
    are left out.

    ``results`` are results, or results by run name (a run directory's): given names, the rows say which runs
    they pool and their warnings name them.
    """
    named = results.items() if isinstance(results, Mapping) else [("", results)]
    # (suite, agent, world, tier) -> level -> run -> [((task id, trial), passed)] of its evaluated results
    groups: dict[tuple[str, str, str, int], dict[str, dict[str, list[tuple[tuple[str, int], bool]]]]] = \
        defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    covered: dict[tuple[str, str, str, int], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for run, records in named:
        for result in records:
            key = (suite_of(result), str(result.agent_model), result.world_model or "-", result.guidance)
            covered[key][result.env_mode].add(str(result.task_id))
            verdicts = groups[key][result.env_mode][run]  # a run with errors only is named too
            if result.ok:
                verdicts.append(((str(result.task_id), result.trial), result.passed))
    rows = []
    for (suite, agent, world, tier), levels in sorted(groups.items()):
        row = RobustnessRow(agent, world, suite=suite, guidance=tier)
        for level in FAULT_LEVELS:
            by_run = levels.get(level, {})
            row.runs[level] = [RunTally(run, sum(passed for _, passed in v), len(v)) for run, v in by_run.items()]
            row.evaluated[level] = sum(t.evaluated for t in row.runs[level])
            row.rates[level] = sum(t.passed for t in row.runs[level]) / row.evaluated[level] \
                if row.evaluated[level] else None
            row.tasks[level] = frozenset(covered[(suite, agent, world, tier)].get(level, ()))
            # A run directory holds one result per (task, trial): a repeat comes from another run (or, when the
            # results carry no run names, from anywhere).
            seen = Counter(task for verdicts in by_run.values() for task, _ in verdicts)
            row.overlapping[level] = sum(n > 1 for n in seen.values())
        if any(row.evaluated.values()):  # a group whose every result is an error has no rates to show
            rows.append(row)
    return rows


def robustness_warnings(rows: Iterable[RobustnessRow]) -> list[str]:
    return [message for row in rows for message in row.warnings]


def is_inspect_log(path: Path) -> bool:
    """Whether ``path`` is an Inspect log file (``inspect eval`` of our tasks), which reports read as a run."""
    return path.suffix == ".eval" and path.is_file()


def run_dirs_with_results(run_dirs: Iterable[Path | str], warnings: list[str] | None = None) -> list[Path]:
    """The directories of ``run_dirs`` that hold a results file, and the Inspect logs among them or in them (a
directory of ``.eval`` files: each is a run), in order.

    A directory without one (a failed preflight of an older version left only ``args.json``) or a path that is not
    a directory is skipped with a one-line warning on stderr (appended to ``warnings`` too); a path that does not
    exist is an error (a typo, most likely), and so is a list in which no directory holds results.
    """
    dirs = [Path(d) for d in run_dirs]
    found = []
    for run_dir in dirs:
        if not run_dir.exists():
            raise ConfigError(f"run directory not found: {run_dir}")
        if is_inspect_log(run_dir):
            found.append(run_dir)
        elif not run_dir.is_dir():
            warn(f"skipped {run_dir}: not a run directory", warnings)
        elif (run_dir / RESULTS_FILE).is_file():
            found.append(run_dir)
        elif logs := sorted(path for path in run_dir.iterdir() if is_inspect_log(path)):
            found += logs  # an Inspect log directory: each log is a run
        else:
            warn(f"skipped {run_dir}: no {RESULTS_FILE} (a run that stopped before its first task?)", warnings)
    if not found:
        raise ConfigError(f"no {RESULTS_FILE} in any of {', '.join(map(str, dirs))}: nothing to report")
    return found


def load_run_records(run_dir: Path, warnings: list[str] | None = None) -> RunRecords:
    """The latest result of every (task, trial) in one run directory, or in an Inspect log of our tasks. Lines that
    are not the run's are left out (:func:`occubench.store.run_records`) with one warning."""
    if is_inspect_log(Path(run_dir)):
        from occubench.inspect.logs import read_log

        return RunRecords(list(latest_by_task(read_log(Path(run_dir))).values()))
    if not (Path(run_dir) / RESULTS_FILE).is_file():
        raise ConfigError(f"no {RESULTS_FILE} in {run_dir}: is it a run directory?")
    records = run_records(Path(run_dir))
    if records.warning:
        warn(records.warning, warnings)
    # Labelled as every report shows them: results with live hints are never pooled with results without.
    records.results = [with_live_label(result) for result in latest_by_task(records.results).values()]
    return records


def load_run_results(run_dir: Path, warnings: list[str] | None = None) -> list[Result]:
    """:func:`load_run_records`' results."""
    return load_run_records(run_dir, warnings).results


def load_named_runs(run_dirs: Iterable[Path | str], warnings: list[str] | None = None) -> dict[str, list[Result]]:
    """The latest results of each run directory that has any (see :func:`run_dirs_with_results`), by its name (its
    whole path when two directories share a name)."""
    dirs = run_dirs_with_results(run_dirs, warnings)
    names = [d.name for d in dirs]
    return {(d.name if names.count(d.name) == 1 else str(d)): load_run_results(d, warnings) for d in dirs}


def load_runs(run_dirs: Iterable[Path | str], warnings: list[str] | None = None) -> list[Result]:
    """The latest result of every task in each run directory that has results (see :func:`run_dirs_with_results`)."""
    return [result for results in load_named_runs(run_dirs, warnings).values() for result in results]
