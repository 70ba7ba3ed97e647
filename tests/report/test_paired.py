"""Paired comparison of two agents: McNemar's exact test, the paired bootstrap, trials needed, and the commands."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from occubench.cli import main
from occubench.core.results import Result
from occubench.report import PairedComparison, mcnemar_p, paired_comparisons, trials_needed
from tests.report.conftest import result, typed, write_run

# 20 tasks, one trial: 6 both pass, 8 only A passes (b), 2 only B passes (c), 4 both fail.
# A passes 14, B 8: A − B = 6/20 = 0.3. McNemar: n = b + c = 10,
# p = 2·(C(10,0) + C(10,1) + C(10,2)) / 2^10 = 2·(1 + 10 + 45) / 1024 = 112/1024 = 0.109375.
VERDICTS = [(True, True)] * 6 + [(True, False)] * 8 + [(False, True)] * 2 + [(False, False)] * 4


def _records(verdicts: list[tuple[bool | None, bool | None]], **fields: Any) -> list[dict[str, Any]]:
    return [result(t, ok, agent_model=agent, **fields)
            for t, pair in enumerate(verdicts) for agent, ok in zip("AB", pair)]


def _typed(verdicts: list[tuple[bool | None, bool | None]], **fields: Any) -> list[Result]:
    return [Result.from_dict(r) for r in _records(verdicts, **fields)]


def _only(results: list[Result], **kwargs: Any) -> PairedComparison:
    comparisons = paired_comparisons(results, **kwargs)
    assert len(comparisons) == 1
    return comparisons[0]


def test_mcnemar_p_matches_the_hand_computed_value() -> None:
    c = _only(_typed(VERDICTS))
    assert (c.agent_a, c.agent_b, c.tasks, c.pairs, c.passed_a, c.passed_b) == ("A", "B", 20, 20, 14, 8)
    assert (c.a_only, c.b_only, c.errors) == (8, 2, 0)
    assert c.p_value == 0.109375 and c.difference == pytest.approx(0.3)
    assert c.low is not None and c.high is not None and c.low <= 0.3 <= c.high
    # b = 5, c = 0: 2·C(5,0)/2^5 = 2/32. b = c = 3: 2·(C(6,0) + ... + C(6,3))/2^6 = 2·42/64 > 1, so 1.
    assert mcnemar_p(5, 0) == mcnemar_p(0, 5) == 0.0625
    assert mcnemar_p(3, 3) == 1.0


def test_no_discordant_task_gives_p_one_and_a_zero_interval() -> None:
    c = _only(_typed([(True, True)] * 5 + [(False, False)] * 5))
    assert (c.a_only, c.b_only, c.p_value, c.difference, c.low, c.high) == (0, 0, 1.0, 0.0, 0.0, 0.0)
    assert c.trials_needed.k is None
    assert mcnemar_p(0, 0) == 1.0


def test_errors_are_dropped_and_counted_and_only_shared_tasks_count() -> None:
    # Tasks 0-5: A errs on 0, B on 1, both on 2 (one pair, one error); 3-5 pass under both.
    # Task 6 only A has, task 7 only B has (an error): neither is a pair, nor an error of a pair.
    records = _typed([(None, True), (True, None), (None, None), (True, True), (True, True), (True, False)])
    records += [typed(6, True, agent_model="A"), typed(7, None, agent_model="B")]
    c = _only(records)
    assert (c.tasks, c.pairs, c.errors, c.passed_a, c.passed_b, c.a_only, c.b_only) == (3, 3, 3, 3, 2, 1, 0)


def test_several_trials_pair_by_trial_and_count_tasks_in_mcnemar() -> None:
    # Task 0: A passes trials 0-2, B only trial 0; trial 3 errs for B (dropped). Task 1: both pass 1 of 3.
    records = [typed(0, True, agent_model="A", trial=k) for k in range(4)]
    records += [typed(0, k == 0 if k < 3 else None, agent_model="B", trial=k) for k in range(4)]
    records += [typed(1, k == 0, agent_model=agent, trial=k) for agent in "AB" for k in range(3)]
    c = _only(records)
    # The test's pairs are tasks: task 0 counts once for A (3 vs 1 of its 3 pairs), task 1 is a tie.
    assert (c.tasks, c.pairs, c.errors, c.passed_a, c.passed_b, c.a_only, c.b_only) == (2, 6, 1, 4, 2, 1, 0)
    assert c.p_value == 1.0  # 2·C(1,0)/2^1


def _unpaired_interval(a: list[int], b: list[int], resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    # Each agent's tasks resampled on their own, as if the two runs were over unrelated tasks.
    rng = random.Random(seed)
    diffs = sorted(sum(rng.choices(a, k=len(a))) / len(a) - sum(rng.choices(b, k=len(b))) / len(b)
                   for _ in range(resamples))
    return diffs[int(0.025 * resamples)], diffs[int(0.975 * resamples) - 1]


def test_paired_interval_is_narrower_than_the_unpaired_one_for_correlated_agents() -> None:
    # Both pass the 10 easy tasks, A also two harder ones: A − B = 2/20 = 0.1.
    verdicts = [(t < 12, t < 10) for t in range(20)]
    c = _only(_typed(verdicts))
    assert c.low is not None and c.high is not None
    assert c.low <= 0.1 <= c.high
    low, high = _unpaired_interval([int(a) for a, _ in verdicts], [int(b) for _, b in verdicts])
    assert c.high - c.low <= high - low
    assert _only(_typed(verdicts), seed=0) == c  # seeded


def test_trials_needed_finite_when_only_trial_noise_separates_them() -> None:
    # 2 tasks, 2 trials each: A passes 1 of 2, B none. d_t = 0.5 on both, so s² = 0 and σ²_between = 0;
    # σ²_within = (0.5·0.5 + 0)·2/1 = 0.5. Smallest k with z²·σ²_within/(n·k) < d²:
    # k > 1.96²·0.5 / (2·0.25) = 3.84, so k = 4.
    records = [typed(t, k == 0, agent_model="A", trial=k) for t in range(2) for k in range(2)]
    records += [typed(t, False, agent_model="B", trial=k) for t in range(2) for k in range(2)]
    needed = _only(records).trials_needed
    assert (needed.k, needed.between, needed.within) == (4, 0.0, 0.5)
    capped = trials_needed([(2, 1, 0), (2, 1, 0)], max_trials=3)
    assert (capped.k, capped.reason) == (None, "> 3")


def test_trials_needed_not_separable_when_tasks_disagree() -> None:
    # 10 tasks, 2 trials: on 6 A passes both and B neither (d_t = 1), on 4 the reverse (d_t = -1). d = 0.2,
    # σ²_within = 0, σ²_between = s² = (6·0.8² + 4·1.2²)/9 = 9.6/9; 1.96·sqrt(9.6/90) = 0.64 ≥ 0.2.
    tasks = [(2, 2, 0)] * 6 + [(2, 0, 2)] * 4
    needed = trials_needed(tasks)
    assert (needed.k, needed.reason, needed.within) == (None, "not separable", 0.0)
    assert needed.between == pytest.approx(9.6 / 9)
    assert trials_needed([(2, 1, 1)] * 3).reason == "not separable"  # d = 0
    assert trials_needed([(1, 1, 0)] * 5).reason == "needs 2+ trials"  # one trial cannot split the variance


def test_settings_are_compared_apart_and_repeated_agents_left_out() -> None:
    e0 = _typed(VERDICTS[:4])
    e1 = _typed(VERDICTS[4:10], env_mode="E1", fault_count=2, fault_duration=2)
    other_world = [typed(0, True, agent_model="C", world_model="other")]  # no partner in its setting
    comparisons = paired_comparisons(e0 + e1 + other_world)
    assert [(c.setting.env_mode, c.tasks) for c in comparisons] == [("E0", 4), ("E1", 6)]
    warnings: list[str] = []
    repeated = e0 + [typed(0, False, agent_model="A")]  # a second run of A into the same setting
    assert paired_comparisons(repeated, warnings=warnings) == []
    assert len(warnings) == 1 and "agent A" in warnings[0]


def test_report_prints_and_exports_the_paired_comparison(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    records = _records(VERDICTS)
    runs = [str(write_run(tmp_path, f"{agent}__sim__E0", [r for r in records if r["agent_model"] == agent]))
            for agent in "AB"]
    assert main(["report", *runs]) == 0
    out = capsys.readouterr().out
    table = out.split("## Paired comparison", 1)[1].split("\n## ", 1)[0]
    assert "| occubench | sim | E0 | - | A | B | 20 | 8 | 2 | +30.0 |" in table
    assert "| 0.109 | needs 2+ trials | 0 |" in table
    assert main(["report", *runs, "--format", "json"]) == 0
    [paired] = json.loads(capsys.readouterr().out)["paired"]
    assert (paired["agent_a"], paired["a_only"], paired["b_only"], paired["mcnemar_p"]) == ("A", 8, 2, 0.109375)
    assert paired["ci_low"] <= paired["difference"] <= paired["ci_high"]
    assert main(["compare", *runs, "--by", "agent_model"]) == 0
    assert "## Paired comparison" in capsys.readouterr().out


def test_report_without_shared_tasks_has_no_paired_table(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    a = write_run(tmp_path, "A", [result(1, True)])
    b = write_run(tmp_path, "B", [result(2, True, agent_model="B")])
    assert main(["report", str(a), str(b)]) == 0
    assert "Paired comparison" not in capsys.readouterr().out


def test_guidance_tiers_are_separate_settings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A and B without hints and with tier-1 hints: two comparisons, never A-without against A-with.
    plain = _records(VERDICTS)
    hinted = _records([(True, True)] * 20, env_info={"guidance": 1})
    runs = [str(write_run(tmp_path, f"{agent}{tier}", [r for r in records if r["agent_model"] == agent]))
            for tier, records in enumerate([plain, hinted]) for agent in "AB"]
    assert main(["report", *runs]) == 0
    captured = capsys.readouterr()
    assert "several results" not in captured.err
    table = captured.out.split("## Paired comparison", 1)[1].split("\n## ", 1)[0]
    assert "| Suite | World model | Fault level | Faults | Guidance | A | B |" in table
    assert "| occubench | sim | E0 | - | 0 | A | B | 20 | 8 | 2 | +30.0 |" in table
    assert "| occubench | sim | E0 | - | 1 | A | B | 20 | 0 | 0 | +0.0 |" in table
    assert main(["report", *runs, "--format", "json"]) == 0
    paired = json.loads(capsys.readouterr().out)["paired"]
    assert [(p["guidance"], p["a_only"]) for p in paired] == [(0, 8), (1, 0)]
    # Results without a tier compare as before, with no Guidance column.
    assert [c.setting.guidance for c in paired_comparisons(_typed(VERDICTS))] == [0]
    assert main(["report", *runs[:2]]) == 0
    assert "| Suite | World model | Fault level | Faults | A | B |" in capsys.readouterr().out


def test_a_repeated_agent_is_named_with_its_tier() -> None:
    warnings: list[str] = []
    hinted = _typed(VERDICTS[:2], env_info={"guidance": 2})
    assert paired_comparisons(hinted + [typed(0, False, agent_model="A", env_info={"guidance": 2})],
                              warnings=warnings) == []
    assert warnings == ["paired comparison: agent A has several results for one (task, trial) in suite occubench, "
                        "world model sim, E0, guidance 2 (several runs of it?): left out of that setting's "
                        "comparisons"]
