"""Simulator fidelity of a twin run (issue 35): how often the LLM-simulated twin of an executable world answered a
tool call as the real instance did, and how often the twin's verdict of an episode differs from the real one.

Each call of a twin result (``env_info["twin_calls"]``) was answered by both worlds and compared (``agree``,
decided ``by`` equality, key fields or a judge, with the ``kind`` of a disagreement). A call the judge could not
decide (``by: "judge_error"``) is counted apart, neither agreeing nor disagreeing. Results with ``status:
"error"`` are counted apart and left out of everything else.

- Agreement: agreeing calls over decided calls, with a Wilson score interval. It treats calls as independent;
  calls of one episode share its world state, so with few episodes the interval is on the narrow side.
- Verdict flips: episodes whose twin verdict differs from the executable verdict of the same trajectory
  (``verdict_details["flipped"]``), with a percentile bootstrap over tasks that keeps a task's trials together
  (:func:`occubench.report.stats.bootstrap_ratio`; with one trial per task, a bootstrap over episodes).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from occubench.core.results import Result
from occubench.core.tables import Table, percent
from occubench.report.stats import Interval, bootstrap_ratio, wilson_interval
from occubench.report.tables import ci_text
from occubench.twin.agreement import KINDS

TWIN_SUITE = "twin"
#: How a call is marked when the judge could not decide it.
JUDGE_ERROR = "judge_error"


@dataclass(frozen=True)
class TwinCall:
    """One tool call of a twin episode, as both worlds answered it."""

    task_id: str
    trial: int
    call_index: int
    tool: str
    #: The call's arguments as JSON text.
    arguments: str
    simulated: Any
    real: Any
    agree: bool
    #: "equal", "key_fields", "judge" or "judge_error".
    by: str
    #: The kind of disagreement (:data:`occubench.twin.agreement.KINDS`); None when the answers agree.
    kind: str | None
    reason: str

    @property
    def world(self) -> str:
        return world_of(self.task_id)

    @property
    def decided(self) -> bool:
        return self.by != JUDGE_ERROR


@dataclass(frozen=True)
class AgreementRate(Interval):
    """Agreeing calls (``passed``) among the decided ones (``evaluated``), with a Wilson interval."""

    #: Calls the judge could not decide: in neither count.
    undecided: int = 0

    @property
    def agreeing(self) -> int:
        return self.passed

    @property
    def decided(self) -> int:
        return self.evaluated


@dataclass(frozen=True)
class Flips(Interval):
    """Episodes (``evaluated``) whose verdict differs between the twin and the real world (``passed``), with a
    bootstrap interval over tasks."""

    #: (flipped, episodes) per task id.
    by_task: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Flipped episodes in which every decided call agreed: the judges differ there, not the worlds' answers.
    all_agreed: int = 0

    @property
    def flipped(self) -> int:
        return self.passed

    @property
    def episodes(self) -> int:
        return self.evaluated


@dataclass(frozen=True)
class Fidelity:
    #: Scored twin episodes, and twin results that ended in an error (left out of everything else).
    episodes: int
    errors: int
    calls: AgreementRate
    by_world: dict[str, AgreementRate]
    #: Keyed ``world/tool``.
    by_tool: dict[str, AgreementRate]
    by_task: dict[str, AgreementRate]
    flips: Flips
    #: Disagreeing decided calls per kind (:data:`KINDS` order, then any other kind; ``?`` for none given).
    kinds: dict[str, int]
    kinds_by_world: dict[str, dict[str, int]]


def world_of(task_id: int | str) -> str:
    """The world of a twin task id (``insurance_claims/pay_water_claim`` → ``insurance_claims``)."""
    return str(task_id).partition("/")[0]


def twin_results(results: Iterable[Result]) -> list[Result]:
    """The scored twin episodes: an error record says nothing about the simulator."""
    return [result for result in results if result.suite == TWIN_SUITE and result.ok]


def twin_calls(results: Iterable[Result]) -> list[TwinCall]:
    """Every compared call of the scored twin episodes, in record order."""
    calls = []
    for result in twin_results(results):
        for i, call in enumerate(result.env_info.get("twin_calls") or []):
            calls.append(TwinCall(
                task_id=str(result.task_id), trial=result.trial, call_index=call.get("call_index", i),
                tool=str(call.get("tool", "?")), arguments=str(call.get("arguments", "")),
                simulated=call.get("simulated"), real=call.get("real"), agree=call.get("agree") is True,
                by=str(call.get("by", "")), kind=call.get("kind"), reason=str(call.get("reason", ""))))
    return calls


def agreement_rate(calls: Iterable[TwinCall], level: float = 0.95) -> AgreementRate:
    calls = list(calls)
    decided = [call for call in calls if call.decided]
    agreeing = sum(call.agree for call in decided)
    low, high = wilson_interval(agreeing, len(decided), level)
    return AgreementRate(agreeing, len(decided), low, high, level, undecided=len(calls) - len(decided))


def _groups(calls: Iterable[TwinCall], key: Callable[[TwinCall], str]) -> dict[str, list[TwinCall]]:
    groups: dict[str, list[TwinCall]] = defaultdict(list)
    for call in calls:
        groups[key(call)].append(call)
    return {name: groups[name] for name in sorted(groups)}


def agreement_rates(calls: Iterable[TwinCall], key: Callable[[TwinCall], str],
                    level: float = 0.95) -> dict[str, AgreementRate]:
    """Agreement rate per value of ``key`` (a call's world, say), in name order."""
    return {name: agreement_rate(group, level) for name, group in _groups(calls, key).items()}


def _kind_order(kind: str) -> tuple[int, str]:
    return (KINDS.index(kind), "") if kind in KINDS else (len(KINDS), kind)


def kind_counts(calls: Iterable[TwinCall]) -> dict[str, int]:
    """Disagreeing decided calls per kind (only kinds that occur)."""
    counts = Counter(call.kind or "?" for call in calls if call.decided and not call.agree)
    return {kind: counts[kind] for kind in sorted(counts, key=_kind_order)}


def flip_share(results: Iterable[Result], *, level: float = 0.95, resamples: int = 2000, seed: int = 0) -> Flips:
    """Scored twin episodes whose verdict flipped; an episode without a ``flipped`` verdict detail (no executable
    verdict) is left out."""
    per_task: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    all_agreed = 0
    for result in twin_results(results):
        flipped = result.verdict_details.get("flipped")
        if isinstance(flipped, bool):
            tally = per_task[str(result.task_id)]
            tally[0] += flipped
            tally[1] += 1
            all_agreed += flipped and all(call.agree or not call.decided for call in twin_calls([result]))
    # Sorted: the bootstrap draws tasks in this order, which must not depend on the records' order.
    by_task = {task: (f, n) for task, (f, n) in sorted(per_task.items())}
    flipped, episodes = sum(f for f, _ in by_task.values()), sum(n for _, n in by_task.values())
    low, high = (bootstrap_ratio(list(by_task.values()), level=level, resamples=resamples, seed=seed)
                 if by_task else (None, None))
    return Flips(flipped, episodes, low, high, level, by_task=by_task, all_agreed=all_agreed)


def fidelity(results: Iterable[Result], *, level: float = 0.95, resamples: int = 2000, seed: int = 0) -> Fidelity:
    """Every figure of the fidelity report over the twin results among ``results``."""
    results = list(results)
    calls = twin_calls(results)
    return Fidelity(
        episodes=len(twin_results(results)),
        errors=sum(result.suite == TWIN_SUITE and not result.ok for result in results),
        calls=agreement_rate(calls, level), by_world=agreement_rates(calls, lambda c: c.world, level),
        by_tool=agreement_rates(calls, lambda c: f"{c.world}/{c.tool}", level),
        by_task=agreement_rates(calls, lambda c: c.task_id, level),
        flips=flip_share(results, level=level, resamples=resamples, seed=seed), kinds=kind_counts(calls),
        kinds_by_world={world: kind_counts(group) for world, group in _groups(calls, lambda c: c.world).items()})


def _share(part: int, whole: int) -> str:
    return f"{percent(part / whole if whole else None)} ({part}/{whole})"


def fidelity_tables(results: Iterable[Result]) -> list[Table]:
    """The fidelity report of a twin run: summary, agreement by world, by tool and by task, and the kinds of
    disagreement; none without a scored twin episode."""
    f = fidelity(results)
    if not f.episodes:
        return []
    wilson = f"{100 * f.calls.level:.0f}% CI (Wilson)"
    summary = Table("Twin fidelity: summary", ["", "Value"], [
        ["Episodes (scored)", str(f.episodes)], ["Errors (not scored)", str(f.errors)],
        ["Call agreement", _share(f.calls.agreeing, f.calls.decided)], [wilson, ci_text(f.calls.low, f.calls.high)],
        ["Calls the judge could not decide", str(f.calls.undecided)],
        ["Verdict flipped (twin vs real)", _share(f.flips.flipped, f.flips.episodes)],
        [f"{100 * f.flips.level:.0f}% CI (bootstrap over tasks)", ci_text(f.flips.low, f.flips.high)],
        ["Flips where every call agreed", str(f.flips.all_agreed)]],
        text_columns=2,
        note="Every tool call was answered by the simulated twin and by the real world; agreement is over the calls "
             "decided (undecided ones count in neither). A flip: the twin's verdict differs from the real world's "
             "on the same trajectory; where every call agreed, it is the simulated world's judge (rubric) that "
             "differs from the real world's code checks, not the simulator.")
    columns = ["Calls", "Agreeing", "Agreement", wilson, "Undecided"]

    def row(name: str, a: AgreementRate) -> list[str]:
        return [name, str(a.decided), str(a.agreeing), percent(a.rate), ci_text(a.low, a.high), str(a.undecided)]

    # A task whose agent made no tool call has no agreement, but its verdict may still have flipped.
    no_calls = agreement_rate([])
    by_task = [[*row(task, f.by_task.get(task, no_calls)),
                _share(*f.flips.by_task[task]) if task in f.flips.by_task else "-"]
               for task in sorted(f.by_task.keys() | f.flips.by_task.keys())]
    tables = [summary, Table("Twin fidelity: by world", ["World", *columns], [row(*i) for i in f.by_world.items()]),
              Table("Twin fidelity: by tool", ["World/tool", *columns], [row(*i) for i in f.by_tool.items()]),
              Table("Twin fidelity: by task", ["Task", *columns, "Verdict flipped"], by_task)]
    if f.kinds:
        total = sum(f.kinds.values())
        tables.append(Table("Twin fidelity: disagreements by kind", ["Kind", "By world", "Calls", "Share"],
                            [[kind, ", ".join(f"{world} {kinds[kind]}" for world, kinds in f.kinds_by_world.items()
                                              if kind in kinds), str(n), percent(n / total)]
                             for kind, n in f.kinds.items()], text_columns=2))
    return tables
