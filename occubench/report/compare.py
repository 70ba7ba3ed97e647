"""Do two groups of results — say, the same agents on the same tasks under two simulators — tell the same story?

For each pair of groups (values of ``by``), over the agents evaluated under both:

- ranking agreement: the share of agent pairs that both groups order the same way by completion rate. A tie is an
  ordering of its own: a pair tied under one group agrees only if it is tied under the other as well.
- Kendall's tau-b: (C − D) / sqrt((P − T₁)(P − T₂)) over P agent pairs, C concordant, D discordant, T₁ and T₂ the
  pairs tied under each group. Without ties it equals tau-a, (C − D) / P; with ties it still reaches ±1 for rankings
  that match (or are reversed) exactly. None when either group ties every pair.
- verdict agreement: the share of (agent, task, trial) evaluated without error under both whose ``is_correct`` is
  the same.

Results of different suites are compared apart (one pair of groups per suite): an agent's executable completion
rate says nothing about its rank on the OccuBench benchmark, and task ids of two suites are different tasks. With
``by="suite"`` the suites are the groups themselves (and a pair's ``suite`` is ``"all"``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from occubench.core.results import Result
from occubench.engine.summary import Tally
from occubench.errors import ConfigError
from occubench.report.robustness import suite_of

#: A pair's suite when the groups are the suites.
ALL_SUITES = "all"


def group_name(value: Any) -> str:
    return "(none)" if value is None else str(value)


def _group(result: Result, by: str) -> str:
    # By suite, a result of an older version is grouped with its suite's results, not under "(none)".
    return suite_of(result) if by == "suite" else group_name(result.lookup(by))


@dataclass(frozen=True)
class PairAgreement:
    by: str
    first: str
    second: str
    #: Agents evaluated under both groups, and their completion rate under each.
    agents: list[str]
    rates: dict[str, tuple[float, float]]
    pairs: int
    agreeing: int
    concordant: int
    discordant: int
    tied_first: int
    tied_second: int
    verdicts: int
    verdicts_agreeing: int
    disagreements: list[tuple[str, str]] = field(default_factory=list)
    #: The suite whose results were compared (``occubench.report.robustness.suite_of``); "all" when ``by`` is the suite.
    suite: str = ALL_SUITES

    @property
    def ranking_agreement(self) -> float | None:
        return self.agreeing / self.pairs if self.pairs else None

    @property
    def kendall_tau_b(self) -> float | None:
        denominator = math.sqrt((self.pairs - self.tied_first) * (self.pairs - self.tied_second))
        return (self.concordant - self.discordant) / denominator if denominator else None

    @property
    def verdict_agreement(self) -> float | None:
        return self.verdicts_agreeing / self.verdicts if self.verdicts else None


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


def group_rates(results: Iterable[Result], by: str = "world_model") -> dict[str, dict[str, Tally]]:
    """Completion per agent model within each group; errors left out."""
    groups: dict[str, dict[str, Tally]] = defaultdict(lambda: defaultdict(Tally))
    for result in results:
        if result.ok:
            tally = groups[_group(result, by)][str(result.agent_model)]
            tally.evaluated += 1
            tally.passed += result.passed
    return {name: dict(agents) for name, agents in sorted(groups.items())}


def _verdicts(results: Iterable[Result], by: str) -> dict[str, dict[tuple[str, str, int], bool]]:
    verdicts: dict[str, dict[tuple[str, str, int], bool]] = defaultdict(dict)
    for result in results:
        if not result.ok:
            continue
        group = _group(result, by)
        key = (str(result.agent_model), str(result.task_id), result.trial)
        if key in verdicts[group]:
            # Two runs of one agent in one group (say E0 and E1 under one simulator) would be averaged together.
            suite = "" if by == "suite" else f"suite {suite_of(result)}, "
            raise ConfigError(f"two results for {suite}agent {key[0]}, task {key[1]}, trial {key[2]} with {by} = "
                              f"{group}: compare runs that differ only in {by}")
        verdicts[group][key] = result.passed
    return verdicts


def compare_groups(results: Iterable[Result], by: str = "world_model") -> list[PairAgreement]:
    """Agreement between every pair of groups of ``results`` split by the field ``by``, in name order, for each
    suite apart (in suite order)."""
    if by == "suite":
        return _compare(list(results), by, ALL_SUITES)
    suites: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        suites[suite_of(r)].append(r)
    return [pair for suite in sorted(suites) for pair in _compare(suites[suite], by, suite)]


def _compare(results: list[Result], by: str, suite: str) -> list[PairAgreement]:
    rates = group_rates(results, by)
    verdicts = _verdicts(results, by)
    result = []
    for first, second in combinations(rates, 2):
        agents = sorted(set(rates[first]) & set(rates[second]))
        # group_rates makes a tally only for an evaluated result: no empty denominators here.
        both = {a: (rates[first][a].passed / rates[first][a].evaluated,
                    rates[second][a].passed / rates[second][a].evaluated) for a in agents}
        agreeing = concordant = discordant = tied_first = tied_second = 0
        disagreements = []
        for a, b in combinations(agents, 2):
            order_first = _sign(both[a][0] - both[b][0])
            order_second = _sign(both[a][1] - both[b][1])
            tied_first += order_first == 0
            tied_second += order_second == 0
            if order_first == order_second:
                agreeing += 1
                concordant += order_first != 0
            else:
                disagreements.append((a, b))
                discordant += order_first * order_second == -1
        shared = verdicts[first].keys() & verdicts[second].keys()
        result.append(PairAgreement(
            by=by, first=first, second=second, agents=agents, rates=both,
            pairs=len(agents) * (len(agents) - 1) // 2, agreeing=agreeing, concordant=concordant,
            discordant=discordant, tied_first=tied_first, tied_second=tied_second, verdicts=len(shared),
            verdicts_agreeing=sum(verdicts[first][k] == verdicts[second][k] for k in shared),
            disagreements=disagreements, suite=suite))
    return result
