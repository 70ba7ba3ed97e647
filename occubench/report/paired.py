"""Paired comparison of two agents on the same tasks: is their difference in completion more than run-to-run noise?

Two agents are compared within one :class:`PairedSetting` (suite, world model, fault level, fault count and
duration, workplace guidance tier), so that their results differ only in the agent. A *pair* is one (task id, trial)
evaluated under both agents; a pair with an error on either side is dropped and counted (``errors``), a (task, trial)
only one agent has is no pair, and only tasks with at least one pair count. Trials pair by their number: both sides
then have the same trials of every task, and each agent's completion is taken over the same pairs.

- Difference: A's completion minus B's over the pairs, with a percentile bootstrap over tasks that keeps each
  task's pairs — all its trials, both agents — together. A hard task pulls both agents down alike; resampling the
  tasks (not each agent apart) lets that shared part cancel, which is what makes the interval narrower than two
  separate intervals suggest.
- McNemar's exact test, over tasks: ``b`` counts the tasks on which A passed more of the paired trials than B,
  ``c`` the reverse, and p = min(1, 2·P(X ≤ min(b, c))) with X ~ Binomial(b + c, 1/2); p = 1 when b + c = 0. With
  one trial per task this is McNemar's test on (A, B) verdict pairs exactly; with several it is the sign test on
  the tasks' differences. The pairs are tasks, not (task, trial): trials of one task share its difficulty, so
  they are not independent, and counting k trials as k pairs would make p too small.
- Trials needed: :func:`trials_needed`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations
from statistics import NormalDist

from occubench.core.results import Result
from occubench.report.compare import group_name
from occubench.report.robustness import suite_of, warn, with_guidance
from occubench.report.stats import bootstrap_ratio

#: Per task: (paired trials, A's passes, B's passes).
TaskPairs = tuple[int, int, int]
#: One agent's verdicts by (task id, trial): passed, or None for an error.
Verdicts = dict[tuple[str, int], bool | None]


@dataclass(frozen=True, order=True)
class PairedSetting:
    """What must be the same for two agents' results to be compared."""

    suite: str
    world_model: str
    env_mode: str
    fault_count: int
    fault_duration: int
    #: The workplace guidance tier (:attr:`occubench.core.results.Result.guidance`): hints change what is compared.
    guidance: int = 0

    @classmethod
    def of(cls, result: Result) -> PairedSetting:
        return cls(suite_of(result), result.world_model or "-", result.env_mode, result.fault_count,
                   result.fault_duration, result.guidance)


@dataclass(frozen=True)
class TrialsNeeded:
    """Trials per task that would separate two agents (see :func:`trials_needed`): ``k``, or None and why not."""

    k: int | None
    reason: str = ""
    #: The variance components the estimate used; None when they could not be estimated.
    between: float | None = None
    within: float | None = None


@dataclass(frozen=True)
class PairedComparison:
    setting: PairedSetting
    agent_a: str
    agent_b: str
    #: Tasks with at least one pair, and the pairs.
    tasks: int
    pairs: int
    passed_a: int
    passed_b: int
    #: McNemar's b and c: tasks on which A passed more of the paired trials than B, and the reverse.
    a_only: int
    b_only: int
    #: (task, trial) pairs dropped because either side ended in an error.
    errors: int
    #: Paired-bootstrap interval of the difference (−1 to 1).
    low: float | None
    high: float | None
    p_value: float
    trials_needed: TrialsNeeded
    level: float = 0.95

    @property
    def difference(self) -> float | None:
        """A's completion minus B's over the pairs."""
        return (self.passed_a - self.passed_b) / self.pairs if self.pairs else None


def mcnemar_p(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: min(1, 2·P(X ≤ min(b, c))), X ~ Binomial(b + c, 1/2), in exact arithmetic
    (1 when b + c = 0)."""
    n = b + c
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2 ** n)))


def trials_needed(tasks: Sequence[TaskPairs], *, level: float = 0.95, max_trials: int = 100) -> TrialsNeeded:
    """How many trials per task would make the ``level`` interval of A − B exclude 0, if each task kept its
    observed pass rates — a normal approximation, for planning the next run, not a test.

    Task t has n_t paired trials with pass rates p_A,t and p_B,t and difference d_t = p_A,t − p_B,t; d is the mean
    of the d_t over the n tasks. With k trials on every task the mean difference has the variance

        Var(d̄_k) = σ²_between / n + σ²_within / (n·k)

    - σ²_within = mean over the tasks with n_t ≥ 2 of (p_A,t(1 − p_A,t) + p_B,t(1 − p_B,t))·n_t / (n_t − 1): the
      variance of one trial's difference around its task's (unbiased; A's and B's episodes independent given the
      task);
    - σ²_between = max(0, s² − σ²_within·mean(1/n_t)), s² the sample variance of the d_t: how much the tasks' own
      differences spread, which no number of trials shrinks.

    k is the smallest k ≤ ``max_trials`` with z·sqrt(Var(d̄_k)) < |d| (z = 1.96 at 95 %). None, with the reason,
    when d = 0 or z·sqrt(σ²_between/n) ≥ |d| (no number of trials separates them: that takes more tasks), when
    even ``max_trials`` is not enough, and when there are fewer than two tasks or no task has two paired trials
    (one trial per task cannot tell the two variances apart).
    """
    n = len(tasks)
    repeated = [(m, a / m, b / m) for m, a, b in tasks if m >= 2]
    if n < 2 or not repeated:
        return TrialsNeeded(None, "needs 2+ tasks" if n < 2 else "needs 2+ trials")
    diffs = [(a - b) / m for m, a, b in tasks]
    d = sum(diffs) / n
    spread = sum((x - d) ** 2 for x in diffs) / (n - 1)
    within = sum((pa * (1 - pa) + pb * (1 - pb)) * m / (m - 1) for m, pa, pb in repeated) / len(repeated)
    between = max(0.0, spread - within * sum(1 / m for m, _, _ in tasks) / n)
    z = NormalDist().inv_cdf((1 + level) / 2)
    if z * math.sqrt(between / n) >= abs(d):  # d = 0 included
        return TrialsNeeded(None, "not separable", between, within)
    k = next((k for k in range(1, max_trials + 1) if z * math.sqrt(between / n + within / (n * k)) < abs(d)), None)
    return TrialsNeeded(k, "" if k else f"> {max_trials}", between, within)


def paired_comparisons(results: Iterable[Result], *, level: float = 0.95, resamples: int = 2000, seed: int = 0,
                       max_trials: int = 100, warnings: list[str] | None = None) -> list[PairedComparison]:
    """Every pair of agents (in name order: A before B) that shares an evaluated task within a setting, setting by
    setting.

    An agent's runs of different configurations (``config_hash``; say, two --agent-params temperatures) that
    evaluated the same (task, trial) are agents of their own, named with their configuration; runs over different
    tasks pool. An agent with two results for one (task, trial) of one configuration (a run directory given twice,
    say) has no single verdict to pair: it is left out of that setting, with a warning on stderr (appended to
    ``warnings`` too)."""
    # setting -> agent -> config hash -> verdicts
    runs: dict[PairedSetting, dict[str, dict[str | None, Verdicts]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(dict)))
    repeated: set[tuple[PairedSetting, str]] = set()
    for result in results:
        setting, agent = PairedSetting.of(result), group_name(result.agent_model)
        mine = runs[setting][agent][result.config_hash]
        key = (str(result.task_id), result.trial)
        if key in mine:
            repeated.add((setting, agent))
        mine[key] = result.passed if result.ok else None
    for setting, agent in sorted(repeated):
        del runs[setting][agent]
        where = with_guidance(f"suite {setting.suite}, world model {setting.world_model}, {setting.env_mode}",
                              setting.guidance)
        warn(f"paired comparison: agent {agent} has several results for one (task, trial) in {where} (several runs "
             "of it?): left out of that setting's comparisons", warnings)
    comparisons = []
    for setting in sorted(runs):
        agents = _configurations(runs[setting])
        for a, b in combinations(sorted(agents), 2):
            comparison = _compare_pair(setting, a, b, agents[a], agents[b], level=level, resamples=resamples,
                                       seed=seed, max_trials=max_trials)
            if comparison.tasks:
                comparisons.append(comparison)
    return comparisons


def _configurations(agents: dict[str, dict[str | None, Verdicts]]) -> dict[str, Verdicts]:
    """The verdicts of each agent, or of each of its configurations (``"A (config 1a2b3c4d)"``) when two of them
    evaluated the same (task, trial): settings the agent was compared under, not repeats to pool."""
    named: dict[str, Verdicts] = {}
    for agent, configs in agents.items():
        pooled = {key: verdict for verdicts in configs.values() for key, verdict in verdicts.items()}
        if len(pooled) == sum(map(len, configs.values())):  # no (task, trial) in two configurations
            named[agent] = pooled
        else:
            named.update({f"{agent} (config {(digest or '?')[:8]})": v for digest, v in configs.items()})
    return named


def _compare_pair(setting: PairedSetting, agent_a: str, agent_b: str, a: Verdicts, b: Verdicts, *, level: float,
                  resamples: int, seed: int, max_trials: int) -> PairedComparison:
    per_task: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    errors = 0
    # Sorted: the bootstrap draws from the tasks in this order, and a set's order changes from process to process.
    for key in sorted(a.keys() & b.keys()):
        if a[key] is None or b[key] is None:
            errors += 1
            continue
        tally = per_task[key[0]]
        tally[0] += 1
        tally[1] += bool(a[key])
        tally[2] += bool(b[key])
    tasks = [(m, pa, pb) for m, pa, pb in per_task.values()]
    pairs = sum(m for m, _, _ in tasks)
    a_only = sum(pa > pb for _, pa, pb in tasks)
    b_only = sum(pa < pb for _, pa, pb in tasks)
    low, high = bootstrap_ratio([(pa - pb, m) for m, pa, pb in tasks], level=level, resamples=resamples,
                                seed=seed) if tasks else (None, None)
    return PairedComparison(
        setting=setting, agent_a=agent_a, agent_b=agent_b, tasks=len(tasks), pairs=pairs,
        passed_a=sum(pa for _, pa, _ in tasks), passed_b=sum(pb for _, _, pb in tasks), a_only=a_only,
        b_only=b_only, errors=errors, low=low, high=high, p_value=mcnemar_p(a_only, b_only),
        trials_needed=trials_needed(tasks, level=level, max_trials=max_trials), level=level)
