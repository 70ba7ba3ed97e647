"""Robustness score and the E0–E3 table, checked against the OccuBench paper's published rows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from occubench.cli import main
from occubench.config import FAULT_LEVELS
from occubench.core.results import Result
from occubench.report.robustness import load_runs, robustness_score, robustness_table, robustness_warnings
from tests.report.conftest import result
from tests.report.conftest import write_run as write_records


@pytest.mark.parametrize("rates, expected", [
    ((72.3, 73.3, 63.1, 65.2), 0.87),   # Gemini 3.1 Pro
    ((79.6, 75.9, 70.4, 67.0), 0.84),   # GPT-5.2
])
def test_the_papers_rows(rates: tuple[float, ...], expected: float) -> None:
    score = robustness_score(dict(zip(FAULT_LEVELS, rates)))
    assert score is not None and round(score, 2) == expected


def test_unknown_levels_give_no_score() -> None:
    assert robustness_score({"E0": 0.5, "E1": 0.4, "E3": 0.3}) is None
    assert robustness_score({"E0": 0.0, "E1": 0.1, "E2": 0.1, "E3": 0.1}) is None


def write_run(root: Path, name: str, agent: str, mode: str, outcomes: list[bool | None]) -> Path:
    run = root / name
    run.mkdir(parents=True)
    lines = [{"task_id": i, "agent_model": agent, "world_model": "sim", "env_mode": mode,
              "status": "error" if ok is None else "ok", "is_correct": ok} for i, ok in enumerate(outcomes)]
    (run / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return run


def test_table_from_run_directories(tmp_path: Path) -> None:
    runs = [write_run(tmp_path, "a0", "A", "E0", [True] * 8 + [False] * 2),          # 80 %
            write_run(tmp_path, "a1", "A", "E1", [True] * 7 + [False] * 3),          # 70 %
            write_run(tmp_path, "a2", "A", "E2", [True] * 6 + [False] * 3 + [None]),  # 6/9, the error left out
            write_run(tmp_path, "a3", "A", "E3", [True] * 5 + [False] * 5),          # 50 %
            write_run(tmp_path, "b0", "B", "E0", [True, False])]
    rows = robustness_table(load_runs(runs))
    a, b = rows
    assert (a.agent_model, a.world_model, a.suite) == ("A", "sim", "occubench")  # no suite, a simulator
    assert a.rates == {"E0": 0.8, "E1": 0.7, "E2": 6 / 9, "E3": 0.5} and a.evaluated["E2"] == 9
    assert a.score == pytest.approx(0.5 / 0.8)
    assert b.rates["E0"] == 0.5 and b.score is None

    done = subprocess.run([sys.executable, "-m", "occubench", "robustness", *map(str, runs)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "80.0" in done.stdout and "66.7" in done.stdout and "0.62" in done.stdout
    missing = subprocess.run([sys.executable, "-m", "occubench", "robustness", str(tmp_path / "nope")],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "run directory not found" in missing.stderr


def _result(task_id: int, ok: bool, **fields: object) -> Result:
    return Result.from_dict({"task_id": task_id, "agent_model": "A", "world_model": "sim", "status": "ok",
                             "is_correct": ok, **fields})


def test_rows_per_suite_and_named_runs() -> None:
    # The same agent on two code worlds and on the simulator: three rows, never one.
    records = {"wp": [_result(1, True, world_model=None, suite="workplace")],
               "ex": [_result(1, False, world_model=None, suite="executable", env_mode="E1")],
               "simulated": [_result(1, True, env_mode="E1")]}
    rows = robustness_table(records)
    assert [(r.suite, r.world_model, r.rates["E0"], r.rates["E1"]) for r in rows] == [
        ("executable", "-", None, 0.0), ("occubench", "sim", None, 1.0), ("workplace", "-", 1.0, None)]
    assert [[t.run for t in r.runs["E1"]] for r in rows] == [["ex"], ["simulated"], []]
    assert robustness_warnings(rows) == []


def test_overlap_without_run_names_is_still_found() -> None:
    # Results given without their runs: a (task, trial) seen twice still means two runs were pooled.
    (row,) = robustness_table([_result(1, True), _result(2, False), _result(1, False)])
    assert (row.evaluated["E0"], row.overlapping["E0"], row.rates["E0"]) == (3, 1, 1 / 3)
    (warning,) = row.warnings
    assert warning == ("agent A, world model sim, suite occubench, E0: results evaluated the same 1 (task, trial) "
                       "pairs; pooled as they are, a shared task counting once per run: 33.3% over 3 results")


def test_guidance_tiers_are_separate_rows() -> None:
    # The same agent with no hints (3 of 4 pass) and with tier-2 hints (4 of 4) on the same tasks: two rows, not
    # one run taken for a repeat of the other.
    plain = [_result(t, t < 3, suite="workplace") for t in range(4)]
    hinted = [_result(t, True, suite="workplace", env_info={"guidance": 2}) for t in range(4)]
    rows = robustness_table({"plain": plain, "hinted": hinted})
    assert [(r.guidance, r.rates["E0"], r.evaluated["E0"]) for r in rows] == [(0, 0.75, 4), (2, 1.0, 4)]
    assert robustness_warnings(rows) == []
    assert rows[0].label == "agent A, world model sim, suite workplace"
    assert rows[1].label == "agent A, world model sim, suite workplace, guidance 2"
    # A tier that is not a whole number (a hand-edited file) is no tier: those results pool with tier 0.
    for odd in (True, "2", 1.5):
        (row,) = robustness_table(plain + [_result(9, True, suite="workplace", env_info={"guidance": odd})])
        assert (row.guidance, row.evaluated["E0"]) == (0, 5)


def test_the_tier_is_shown_only_when_there_is_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = write_records(tmp_path, "plain", [result(t, t < 1) for t in range(2)])
    hinted = write_records(tmp_path, "hinted", [result(t, True, env_info={"guidance": 3}) for t in range(2)])
    assert main(["robustness", str(plain)]) == 0
    assert "Guidance" not in capsys.readouterr().out  # files without tiers: the table as before
    assert main(["robustness", str(plain), str(hinted)]) == 0
    captured = capsys.readouterr()
    assert "Guidance" in captured.out and captured.err == ""
    assert main(["report", str(plain), str(hinted), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(r["guidance"], r["rates"]["E0"]) for r in data["robustness"]] == [(0, 0.5), (3, 1.0)]
    assert data["warnings"] == []
