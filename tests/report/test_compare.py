"""Agreement between groups of runs: ranking agreement with ties, Kendall's tau-b, per-task verdicts."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from occubench.cli import main
from occubench.errors import ConfigError
from occubench.report import compare_groups
from tests.report.conftest import result, typed, write_run

AGENTS = [f"agent{i}" for i in range(1, 9)]
#: Tasks passed out of 10 under each simulator. Under sim-x agent i passes its first i tasks, so the ranking is
#: agent8 > ... > agent1. sim-y swaps the neighbours (1,2), (3,4), (5,6), (7,8): those 4 of the C(8,2) = 28 agent
#: pairs are ordered the other way, the other 24 the same (a pair from two different blocks keeps its order).
#: 24/28 = 85.7 %. No ties, so tau-b = tau-a = (C − D) / 28 = (24 − 4) / 28 = 5/7 ≈ 0.714.
PASSED = {"sim-x": {a: i for i, a in enumerate(AGENTS, start=1)},
          "sim-y": {a: i + 1 if i % 2 else i - 1 for i, a in enumerate(AGENTS, start=1)}}


def _runs(root: Path) -> list[Path]:
    # Both simulators pass a prefix of tasks 0..9 for each agent: the verdicts differ on |x − y| = 1 task per
    # agent, 8 of the 80 (agent, task) pairs, so 72/80 = 90 % of verdicts agree.
    return [write_run(root, f"{agent}__{sim}", [result(t, t < PASSED[sim][agent], agent_model=agent, world_model=sim)
                                                for t in range(10)])
            for sim in PASSED for agent in AGENTS]


def test_two_simulators_over_eight_agents(tmp_path: Path) -> None:
    from occubench.report import load_run_dirs

    records = [r for run in load_run_dirs(_runs(tmp_path)) for r in run.results]
    (pair,) = compare_groups(records, by="world_model")
    assert (pair.first, pair.second, len(pair.agents)) == ("sim-x", "sim-y", 8)
    assert (pair.pairs, pair.agreeing, pair.concordant, pair.discordant) == (28, 24, 24, 4)
    assert pair.ranking_agreement == pytest.approx(24 / 28) and round(100 * pair.ranking_agreement, 1) == 85.7
    assert pair.kendall_tau_b == pytest.approx(5 / 7)
    assert (pair.verdicts, pair.verdicts_agreeing) == (80, 72) and pair.verdict_agreement == 0.9
    assert pair.disagreements == [("agent1", "agent2"), ("agent3", "agent4"), ("agent5", "agent6"),
                                  ("agent7", "agent8")]


def test_ties_agree_only_with_ties() -> None:
    # Completion (passed of 2) under x / y:  A 1/2 | 1/2,  B 1/2 | 2/2,  C 2/2 | 2/2,  D 1/2 | 1/2.
    # Pairs: AB tied under x only -> disagree; AC C ahead in both -> agree (concordant); AD tied in both -> agree;
    # BC tied under y only -> disagree; BD tied under x only -> disagree; CD C ahead in both -> agree (concordant).
    # Agreement 3/6. Tau-b: C = 2, D = 0, ties T_x = 3 (AB, AD, BD), T_y = 2 (AD, BC):
    # 2 / sqrt((6 − 3)(6 − 2)) = 2 / sqrt(12) ≈ 0.577.
    outcomes = {"x": {"A": (1, 0), "B": (1, 0), "C": (1, 1), "D": (0, 1)},
                "y": {"A": (0, 1), "B": (1, 1), "C": (1, 1), "D": (1, 0), "E": (1, 1)}}  # E only under y: left out
    records = [typed(t, bool(ok), agent_model=agent, world_model=sim)
               for sim, agents in outcomes.items() for agent, oks in agents.items() for t, ok in enumerate(oks)]
    (pair,) = compare_groups(records)
    assert pair.agents == ["A", "B", "C", "D"]
    assert (pair.pairs, pair.agreeing, pair.concordant, pair.discordant) == (6, 3, 2, 0)
    assert (pair.tied_first, pair.tied_second) == (3, 2)
    assert pair.kendall_tau_b == pytest.approx(2 / math.sqrt(12))
    # Verdicts: A differs on both tasks, B on task 1, D on both, C on none: 3/8 agree.
    assert (pair.verdicts, pair.verdicts_agreeing) == (8, 3)


def test_errors_are_not_verdicts_and_all_tied_has_no_tau() -> None:
    records = [typed(1, True, agent_model="A", world_model="x"), typed(1, None, agent_model="A", world_model="y"),
               typed(2, True, agent_model="A", world_model="y"), typed(1, True, agent_model="B", world_model="x"),
               typed(1, True, agent_model="B", world_model="y")]
    (pair,) = compare_groups(records)
    assert (pair.pairs, pair.agreeing) == (1, 1)  # A and B are tied at 100 % under both: agreeing
    assert pair.kendall_tau_b is None  # every pair tied: tau-b is undefined
    # Only (B, 1) counts: (A, 1) errored under y, (A, 2) is only there.
    assert (pair.verdicts, pair.verdicts_agreeing) == (1, 1)


def test_two_runs_of_one_agent_in_a_group_are_refused() -> None:
    records = [typed(1, True, env_mode="E0"), typed(1, False, env_mode="E1"),
               typed(1, True, env_mode="E2", world_model="z")]
    with pytest.raises(ConfigError, match="differ only in world_model"):
        compare_groups(records)  # E0 and E1 of agent A both under "sim"
    assert len(compare_groups(records, by="env_mode")) == 3  # split by mode instead, they compare: E0/E1/E2


def test_compare_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [str(p) for p in _runs(tmp_path)]
    assert main(["compare", *runs]) == 0
    out = capsys.readouterr().out
    assert "| sim-x | sim-y | 8 | 24/28 (85.7%) | 0.714 | 72/80 (90.0%) |" in out
    assert "agent1 / agent2" in out

    assert main(["compare", *runs[:8]]) == 2  # one simulator only
    assert "fewer than two values of world_model" in capsys.readouterr().err
    assert main(["compare", runs[0], str(tmp_path / "missing")]) == 2
    assert f"run directory not found: {tmp_path / 'missing'}" in capsys.readouterr().err
