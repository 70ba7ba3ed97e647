"""Reports over real servers' runs: errors broken down by kind, no judge unanimity without votes, no rank for a run
with nothing evaluated, runs that differ only in --agent-params compared rather than warned about; and the
executable suite's judge in --debug's log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from occubench.cli import main
from occubench.testing import MockLLMServer
from tests.report.conftest import result, write_run

TASKS = ["insurance_claims/pay_water_claim", "insurance_claims/review_open_thefts"]


def _error(task_id: int, kind: str) -> dict[str, Any]:
    return result(task_id, None, error={"kind": kind, "message": "gave up"})


def test_errors_are_broken_down_by_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_run(tmp_path, "A__sim__E0", [result(1, True), _error(2, "infrastructure"),
                                             _error(3, "infrastructure"), _error(4, "verifier")])
    clean = write_run(tmp_path, "B__sim__E0", [result(1, True, agent_model="B")])
    assert main(["report", str(run), str(clean)]) == 0
    out = capsys.readouterr().out
    assert "| Errors (not scored) | 3 |\n| Errors by kind | 2 infrastructure, 1 verifier |" in out
    assert "| Errors (not scored) | 0 |" in out and out.count("Errors by kind") == 1
    assert main(["report", str(run), str(clean), "--format", "json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [r["errors_by_kind"] for r in runs] == [{"infrastructure": 2, "verifier": 1}, {}]


def test_judge_unanimity_only_for_runs_judged_by_votes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Code checks decide an executable run: its results have no votes. A one-vote judge has votes, none to compare.
    checked = write_run(tmp_path, "checked", [result(1, True, suite="executable", world_model=None, votes=[])])
    one_vote = write_run(tmp_path, "one_vote", [result(1, True, votes=[{"is_correct": True, "feedback": "ok"}])])
    assert main(["report", str(checked), str(one_vote)]) == 0
    out = capsys.readouterr().out
    assert "Judge unanimity" not in out.split("## Run checked", 1)[1].split("## Run ", 1)[0]
    assert "| Judge unanimity | - (0/0 with 2+ parsable votes) |" in out.split("## Run one_vote", 1)[1]


def test_a_run_with_nothing_evaluated_has_no_rank(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # "dead" sorts first by name; it has only errors, so it comes last and unranked in every format.
    dead = write_run(tmp_path, "dead", [_error(1, "infrastructure"), _error(2, "infrastructure")])
    low = write_run(tmp_path, "low", [result(1, True), result(2, False)])
    high = write_run(tmp_path, "high", [result(1, True), result(2, True)])
    runs = [str(dead), str(low), str(high)]
    html = tmp_path / "report.html"
    assert main(["report", *runs, "--html", str(html)]) == 0
    leaderboard = capsys.readouterr().out.split("## Leaderboard", 1)[1].split("\n## ", 1)[0]
    ranks = [line.split(" | ")[:2] for line in leaderboard.splitlines() if line.startswith("| ") and "Rank" not in line
             and ":--" not in line]
    assert ranks == [["| 1", "high"], ["| 2", "low"], ["| -", "dead"]]
    page = html.read_text(encoding="utf-8")
    assert "<td>2</td><td>low</td>" in page and "<td>-</td><td>dead</td>" in page
    assert main(["report", *runs, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["leaderboard"] == ["high", "low", "dead"]
    assert {r["name"]: r["rank"] for r in data["runs"]} == {"dead": None, "low": 2, "high": 1}


def _executable_run(server: MockLLMServer, out: Path, name: str, *extra: str) -> Path:
    assert main(["run", "--suite", "executable", "--agent-model", "m", "--base-url", server.base_url, "--api-key",
                 "k", "--task-ids", *TASKS, "--output-dir", str(out), "--run-name", name, *extra]) == 0
    return out / name


def test_runs_that_differ_only_in_agent_params_are_compared_not_warned_about(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with MockLLMServer(lambda request, index: "Nothing to do.") as server:
        cool = _executable_run(server, tmp_path, "cool", "--agent-params", '{"temperature": 0.2}')
        warm = _executable_run(server, tmp_path, "warm", "--agent-params", '{"temperature": 0.7}')
    hashes = [json.loads((run / "results.jsonl").read_text().splitlines()[0])["config_hash"] for run in (cool, warm)]
    capsys.readouterr()
    assert main(["report", str(cool), str(warm)]) == 0
    captured = capsys.readouterr()
    assert "several results" not in captured.err
    paired = captured.out.split("## Paired comparison", 1)[1].split("\n## ", 1)[0]
    first, second = sorted(digest[:8] for digest in hashes)  # A before B in name order, whatever the hashes are
    assert f"| m (config {first}) | m (config {second}) | 2 |" in paired
    # The same run given twice is a repeat, not another setting: still warned about, and left out.
    assert main(["report", str(cool), str(cool)]) == 0
    captured = capsys.readouterr()
    assert "agent m has several results for one (task, trial)" in captured.err
    assert "## Paired comparison" not in captured.out


def test_debug_logs_the_executable_judge(tmp_path: Path) -> None:
    label = '<label>{"feedback": "the claim was paid", "label": "complete"}</label>'
    with MockLLMServer(lambda request, index: label) as server:
        assert main(["run", "--suite", "executable", "--agent", "reference", "--verifier-model", "j", "--base-url",
                     server.base_url, "--api-key", "k", "--debug", "--task-ids", TASKS[0], "--output-dir",
                     str(tmp_path), "--run-name", "x"]) == 0
    log = (tmp_path / "x" / "debug.log").read_text(encoding="utf-8")
    assert "[VERIFIER] Asking j for 3 vote(s), prompt of " in log
    assert "[VERIFIER] Labels: 3 complete" in log and "[VERIFIER] Label 1: complete, feedback=the claim was paid" in log
