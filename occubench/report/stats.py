"""Statistics over result records: completion with a Wilson score confidence interval (on the effective sample size
when tasks were repeated), breakdowns, judge unanimity, pass@k and pass^k over repeated trials.

Every function expects the latest record of each (task, trial) (``occubench.store.latest_by_task``). Records with
``status: "error"`` are counted apart and never scored.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from math import comb, sqrt
from statistics import NormalDist
from typing import Any

from occubench.core.results import Result
from occubench.engine.summary import Price, Summary, Tally, summarize
from occubench.report.robustness import suite_of
from occubench.report.runs import Run


@dataclass
class Count(Tally):
    """Passed and evaluated tasks, and the ones that ended in an error (in neither)."""

    errors: int = 0


@dataclass
class Group(Count):
    """One value of a :func:`breakdown`: its count and completion interval (:func:`completion_ci`)."""

    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Interval:
    """A rate and its confidence interval (``low``/``high`` are 0–1)."""

    passed: int
    evaluated: int
    low: float | None
    high: float | None
    level: float = 0.95

    @property
    def rate(self) -> float | None:
        return self.passed / self.evaluated if self.evaluated else None


def _quantile(ordered: list[float], q: float) -> float:
    # Linear interpolation between the closest ranks (numpy's default), so small resample counts stay smooth.
    position = q * (len(ordered) - 1)
    below = int(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def wilson_interval(successes: float, n: float, level: float = 0.95) -> tuple[float | None, float | None]:
    """Wilson score interval of successes / n; (None, None) when n is 0. Unlike the normal approximation or a
    bootstrap it stays within 0–1 and is not degenerate at 0 or n successes. ``n`` may be an effective sample size
    (not a whole number)."""
    if not n:
        return None, None
    z = NormalDist().inv_cdf((1 + level) / 2)
    p = successes / n
    scale = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / scale
    half = z / scale * sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # Clamped: at 0 or n successes rounding can put the bound a hair outside 0–1.
    return max(0.0, centre - half), min(1.0, centre + half)


def effective_size(tasks: Sequence[tuple[int, int]]) -> float:
    """Effective number of independent trials behind sum(x) / sum(n), one (passed x, trials n) per task with n > 0:
    the trials divided by the design effect, the cluster-robust variance of the ratio over the variance it would
    have if every trial were independent. Trials of one task share its difficulty, so they count for less than
    independent ones, down to one per task when they always agree.

    Bounds: at most the trials (a trial never counts for more than an independent one) and at least
    sum(n)² / sum(n²), the count when a task's trials are copies of each other (the number of tasks when every task
    has as many trials). When every trial passed or none did there is no spread to estimate the correlation from,
    and the lower bound is taken: the cautious choice. With one trial per task both bounds are the number of tasks,
    so the interval is the textbook Wilson one."""
    trials = sum(n for _, n in tasks)
    clustered = trials * trials / sum(n * n for _, n in tasks)
    rate = sum(x for x, _ in tasks) / trials
    if rate in (0, 1):
        return clustered
    # Linearised variance of a ratio estimator over clusters (times trials², with the usual c / (c − 1) correction
    # for c clusters: without it the interval undercovers with few tasks), against p(1 − p) · trials. No spread at
    # all (every task at the same rate): nothing is shared between a task's trials, they count in full.
    spread = sum((x - rate * n) ** 2 for x, n in tasks) * len(tasks) / max(len(tasks) - 1, 1)
    return min(trials, max(clustered, rate * (1 - rate) * trials * trials / spread)) if spread else trials


def completion_ci(results: Iterable[Result], *, level: float = 0.95) -> Interval:
    """Passed / evaluated with a Wilson score interval. With one trial per task that is the textbook Wilson interval
    over tasks; with repeated trials, Wilson's on the effective sample size (:func:`effective_size`), since trials of
    one task are correlated. A percentile bootstrap was used before: it collapses to [rate, rate] at 0 % and 100 %
    and jumps to 0–100 % with a handful of tasks, where per-category and per-difficulty rates live; Wilson's interval
    keeps its coverage there (30 of 30 passed: 88.6–100 %)."""
    per_task: dict[Any, list[int]] = defaultdict(lambda: [0, 0])
    for result in results:
        if result.ok:
            tally = per_task[result.task_id]
            tally[0] += result.passed
            tally[1] += 1
    passed = sum(p for p, _ in per_task.values())
    evaluated = sum(e for _, e in per_task.values())
    if not evaluated:
        return Interval(0, 0, None, None, level)
    size = effective_size([(p, e) for p, e in per_task.values()])
    low, high = wilson_interval(passed / evaluated * size, size, level)
    return Interval(passed, evaluated, low, high, level)


def bootstrap_ratio(tasks: Sequence[tuple[int, int]], *, level: float = 0.95, resamples: int = 2000,
                    seed: int = 0) -> tuple[float, float]:
    """Percentile-bootstrap interval of sum(x) / sum(n) over ``tasks``, one (x, n) per task with n > 0: each
    resample draws whole tasks with replacement, so whatever a task's trials (or a pair's two agents) share stays
    together."""
    rng = random.Random(seed)
    rates = []
    for _ in range(resamples):
        sample = rng.choices(tasks, k=len(tasks))
        rates.append(sum(x for x, _ in sample) / sum(n for _, n in sample))
    rates.sort()
    tail = (1 - level) / 2
    return _quantile(rates, tail), _quantile(rates, 1 - tail)


def _natural(key: str) -> tuple[int, int, str]:
    return (0, int(key), "") if key.isdigit() else (1, 0, key)


def breakdown(results: Iterable[Result], field: str) -> dict[str, Group]:
    """Completion per value of ``field`` (``category``, ``domain``, ``difficulty_level``...), in natural order, with
    the same interval as the run's completion; a missing value is ``?``."""
    groups: dict[str, list[Result]] = defaultdict(list)
    for result in results:
        value = getattr(result, field)
        groups["?" if value in (None, "") else str(value)].append(result)
    counts = {}
    for key in sorted(groups, key=_natural):
        ci = completion_ci(groups[key])
        counts[key] = Group(ci.passed, ci.evaluated, sum(not r.ok for r in groups[key]), ci.low, ci.high)
    return counts


@dataclass(frozen=True)
class Unanimity:
    """Evaluated tasks whose parsable judge votes all agree, among those with at least two parsable votes."""

    unanimous: int
    judged: int
    #: Evaluated tasks with any vote: none when the suite has no voting judge (code checks decide), and then
    #: unanimity means nothing.
    voted: int

    @property
    def share(self) -> float | None:
        return self.unanimous / self.judged if self.judged else None


def unanimity(results: Iterable[Result]) -> Unanimity:
    unanimous = judged = voted = 0
    for result in results:
        if not result.ok:
            continue
        voted += bool(result.votes)
        # An unparsable vote is null: it says nothing.
        verdicts = [vote.is_correct for vote in result.votes if isinstance(vote.is_correct, bool)]
        if len(verdicts) < 2:  # one vote cannot disagree with itself
            continue
        judged += 1
        unanimous += len(set(verdicts)) == 1
    return Unanimity(unanimous, judged, voted)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chance that at least one of k trials drawn without replacement from n (c correct) passes."""
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 < k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")
    return 1 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: chance that all of k trials drawn without replacement from n (c correct) pass."""
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"pass^k needs 0 < k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")
    return comb(c, k) / comb(n, k)


def trial_counts(results: Iterable[Result]) -> dict[Any, tuple[int, int]]:
    """(evaluated trials, correct trials) per task; errored trials are left out of both."""
    counts: dict[Any, list[int]] = defaultdict(lambda: [0, 0])
    for result in results:
        if result.ok:
            tally = counts[result.task_id]
            tally[0] += 1
            tally[1] += result.passed
    return {task: (n, c) for task, (n, c) in counts.items()}


@dataclass(frozen=True)
class PassK:
    k: int
    #: Tasks with at least k evaluated trials: the ones averaged over.
    tasks: int
    pass_at_k: float | None
    pass_hat_k: float | None


def pass_k(results: Iterable[Result], k: int) -> PassK:
    """pass@k and pass^k averaged over the tasks with at least ``k`` evaluated trials."""
    counts = [(n, c) for n, c in trial_counts(results).values() if n >= k]
    if not counts:
        return PassK(k, 0, None, None)
    return PassK(k, len(counts), sum(pass_at_k(n, c, k) for n, c in counts) / len(counts),
                 sum(pass_hat_k(n, c, k) for n, c in counts) / len(counts))


def _distinct(results: list[Result], field: str) -> str:
    values = {"-" if (value := getattr(r, field)) is None else str(value) for r in results}
    return ", ".join(sorted(values)) or "-"


def _suites(results: list[Result]) -> str:
    return ", ".join(sorted({suite_of(r) for r in results})) or "-"


def task_set_of(results: list[Result]) -> str:
    """A short digest of the run's suite(s) and the ids of the tasks it has results for (errors included): runs
    with the same one were evaluated on the same tasks, and only such runs are ranked against each other."""
    tasks = sorted({f"{suite_of(r)}\x00{r.task_id}" for r in results})
    return hashlib.sha256("\x01".join(tasks).encode()).hexdigest()[:8]


@dataclass
class RunStats:
    name: str
    agent_model: str
    world_model: str
    env_mode: str
    #: The most evaluated trials of any task (1 for a run without repetitions).
    trials: int
    completion: Interval
    errors: int
    by_category: dict[str, Group]
    by_difficulty: dict[str, Group]
    by_domain: dict[str, Group]
    unanimity: Unanimity
    #: pass@k and pass^k for k = 1..trials when tasks were repeated, else empty.
    pass_k: list[PassK]
    #: Tokens and cost per role (errors included: their tokens were spent).
    summary: Summary
    #: The run's suite(s) (``occubench.report.robustness.suite_of``), comma-separated if it mixes several.
    suite: str = "-"
    #: Lines of its results file left out as not the run's (see :func:`occubench.store.run_records`).
    left_out: int = 0
    #: The run's task set (:func:`task_set_of`) and how many tasks it holds.
    task_set: str = ""
    tasks: int = 0
    #: The world package the run's worlds came from: its reference and digest (see :mod:`occubench.hub`).
    worlds: str = ""
    worlds_digest: str = ""


def run_stats(run: Run, prices: Mapping[str, Price] | None = None) -> RunStats:
    results = run.results
    trials = max((n for n, _ in trial_counts(results).values()), default=0)
    summary = summarize(results, prices)
    return RunStats(
        name=run.name, agent_model=_distinct(results, "agent_model"), world_model=_distinct(results, "world_model"),
        env_mode=_distinct(results, "env_mode"), trials=max(trials, 1),
        completion=completion_ci(results), errors=len(summary.errors),
        by_category=breakdown(results, "category"), by_difficulty=breakdown(results, "difficulty_level"),
        by_domain=breakdown(results, "domain"), unanimity=unanimity(results),
        pass_k=[pass_k(results, k) for k in range(1, trials + 1)] if trials > 1 else [], summary=summary,
        suite=_suites(results), left_out=run.left_out, task_set=task_set_of(results),
        tasks=len({r.task_id for r in results}), worlds=run.worlds, worlds_digest=run.worlds_digest)

