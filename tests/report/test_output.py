"""`occubench report`: Markdown, JSON and CSV over hand-made run directories, prices, and bad input."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from occubench.cli import main
from occubench.report.stats import wilson_interval
from tests.report.conftest import HEALTH, TRANSPORT, result, write_run

USAGE = {"agent": {"prompt_tokens": 1000, "completion_tokens": 100, "calls": 2}}


def _runs(root: Path) -> list[str]:
    # A, E0: tasks 1 (Hlth, level 1, pass), 2 (Hlth, level 2, fail), 3 (Trans, level 2, pass), 4 (Trans, level 3,
    # error). Completion 2/3 = 66.7 %; Hlth 1/2 = 50.0 %; Trans 1/1 = 100.0 % and 1 error; level 1 1/1, level 2
    # 1/2 = 50.0 %, level 3 nothing evaluated ("-") and 1 error; every evaluated task has 3 agreeing votes: 3/3.
    a0 = write_run(root, "A__sim__E0", [
        result(1, True, category=HEALTH, difficulty_level=1, domain="Pharmacy", usage=USAGE),
        result(2, False, category=HEALTH, difficulty_level=2, domain="Pharmacy", usage=USAGE),
        result(3, True, category=TRANSPORT, difficulty_level=2, domain="Warehousing", usage=USAGE),
        result(4, None, category=TRANSPORT, difficulty_level=3, domain="Warehousing", usage=USAGE)])
    # B, E0: both pass, 100 %, with Wilson's interval for 2 of 2 (not a degenerate 100–100 %). A, E1: 1 of 3, 33.3 %.
    b0 = write_run(root, "B__sim__E0", [result(1, True, agent_model="B"), result(2, True, agent_model="B")])
    a1 = write_run(root, "A__sim__E1", [result(1, True, env_mode="E1"), result(2, False, env_mode="E1"),
                                        result(3, False, env_mode="E1")])
    return [str(a0), str(b0), str(a1)]


def test_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", *_runs(tmp_path)]) == 0
    out = capsys.readouterr().out
    leaderboard = out.split("## Leaderboard", 1)[1].split("##", 1)[0]
    # Best first: B 100 %, then A E0 66.7 %, then A E1 33.3 %; each on tasks of its own, so none ranked.
    assert leaderboard.index("B__sim__E0") < leaderboard.index("A__sim__E0") < leaderboard.index("A__sim__E1")
    # No suite in these files, but a simulator: the OccuBench benchmark's results.
    low = wilson_interval(2, 2)[0]
    assert low is not None and low < 0.5
    assert f"| - | B__sim__E0 | occubench | B | sim | E0 | 100.0% | {100 * low:.1f}–100.0% | 2 | 2 | 0 |" in out
    assert "| occubench | A | sim | 66.7% | 33.3% | - | - | - |" in out  # the E0–E3 table; no R without E2 and E3
    assert "| Suite | occubench |" in out  # each run's summary
    assert "| Completion | 66.7% |" in out and "| Passed / evaluated | 2/3 |" in out
    assert "| Errors (not scored) | 1 |" in out and "| Judge unanimity | 100.0% (3/3 with 2+ parsable votes) |" in out
    # Breakdowns carry the same interval as the run's completion: Wilson's for 1 of 2 and 1 of 1, none for 0 of 0.
    half, one = wilson_interval(1, 2), wilson_interval(1, 1)[0]
    assert half[0] is not None and half[1] is not None and one is not None
    assert f"| Hlth | 1 | 2 | 0 | 50.0% | {100 * half[0]:.1f}–{100 * half[1]:.1f}% |" in out
    assert f"| Trans | 1 | 1 | 1 | 100.0% | {100 * one:.1f}–100.0% |" in out
    assert "| 2 | 1 | 2 | 0 | 50.0% |" in out and "| 3 | 0 | 0 | 1 | - | - |" in out
    assert "| Warehousing | 1 | 1 | 1 | 100.0% |" in out  # by domain
    assert "| agent | 8 | 4,000 | 0 | 400 | 0 |" in out  # tokens count error lines too: they were spent


def test_prices_add_costs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"A": {"input": 1.0, "output": 2.0}}))
    assert main(["report", _runs(tmp_path)[0], "--prices", str(prices)]) == 0
    # 4 records × (1000 × $1 + 100 × $2) / 1M = $0.0048.
    assert "| agent | 8 | 4,000 | 0 | 400 | 0 | 0.0048 |" in capsys.readouterr().out


def test_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", *_runs(tmp_path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["leaderboard"] == ["B__sim__E0", "A__sim__E0", "A__sim__E1"]
    a0 = data["runs"][0]
    completion = a0["completion"]
    assert (completion["passed"], completion["evaluated"], a0["errors"]) == (2, 3, 1)
    assert completion["ci_low"] <= completion["rate"] <= completion["ci_high"]
    low, high = wilson_interval(1, 2)  # breakdowns carry the same interval as the run's completion
    assert a0["by_category"][HEALTH] == {"abbreviation": "Hlth", "passed": 1, "evaluated": 2, "errors": 0,
                                         "rate": 0.5, "ci_low": low, "ci_high": high}
    level3 = a0["by_difficulty"]["3"]
    assert (level3["rate"], level3["ci_low"], level3["ci_high"]) == (None, None, None)
    assert a0["unanimity"]["share"] == 1.0
    assert "by_domain" not in a0 and a0["cost_usd"] is None
    assert data["robustness"][0]["rates"]["E1"] == pytest.approx(1 / 3)
    assert main(["report", *_runs(tmp_path / "again"), "--format", "json", "--by-domain"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["by_domain"]["Pharmacy"]["evaluated"] == 2


def test_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", *_runs(tmp_path), "--format", "csv", "--by-domain"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    overall = {r["run"]: r for r in rows if r["breakdown"] == "overall"}
    a0 = overall["A__sim__E0"]
    assert (a0["passed"], a0["evaluated"], a0["errors"], a0["unanimous"], a0["judged"]) == ("2", "3", "1", "3", "3")
    assert float(a0["rate"]) == pytest.approx(2 / 3)
    assert float(a0["ci_low"]) <= float(a0["rate"]) <= float(a0["ci_high"])
    assert (a0["prompt_tokens"], a0["completion_tokens"]) == ("4000", "400")
    category = {(r["run"], r["key"]): r for r in rows if r["breakdown"] == "category"}
    transport = category[("A__sim__E0", TRANSPORT)]
    assert transport["errors"] == "1"
    assert (float(transport["ci_low"]), float(transport["ci_high"])) == pytest.approx(wilson_interval(1, 1))
    assert {r["key"] for r in rows if r["breakdown"] == "domain" and r["run"] == "A__sim__E0"} == {
        "Pharmacy", "Warehousing"}


def test_trials_show_pass_k(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # One task, 4 trials, 2 correct: pass@2 = 5/6 = 83.3 %, pass^2 = 1/6 = 16.7 %.
    run = write_run(tmp_path, "t", [result(1, k < 2, trial=k) for k in range(4)])
    assert main(["report", str(run)]) == 0
    out = capsys.readouterr().out
    assert "| Trials per task | 4 |" in out and "| 2 | 1 | 83.3% | 16.7% |" in out


def test_bad_run_directories(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no-such-run"
    assert main(["report", _runs(tmp_path)[0], str(missing)]) == 2
    assert f"run directory not found: {missing}" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert f"warning: skipped {tmp_path / 'empty'}: no results.jsonl" in err
    assert f"occubench: error: no results.jsonl in any of {tmp_path / 'empty'}: nothing to report" in err


def test_ranks_only_among_runs_of_one_task_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A and B on tasks 1-3, C on task 9 alone (100 %): C is not ranked above them, nor at all.
    runs = [write_run(tmp_path, "A__sim__E0", [result(t, t < 3) for t in (1, 2, 3)]),
            write_run(tmp_path, "B__sim__E0", [result(t, t < 2, agent_model="B") for t in (1, 2, 3)]),
            write_run(tmp_path, "C__sim__E0", [result(9, True, agent_model="C")])]
    assert main(["report", *map(str, runs), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["leaderboard"] == ["A__sim__E0", "B__sim__E0", "C__sim__E0"]
    assert {run["name"]: run["rank"] for run in data["runs"]} == {"A__sim__E0": 1, "B__sim__E0": 2, "C__sim__E0": None}
    sets = {run["name"]: (run["task_set"], run["tasks"]) for run in data["runs"]}
    assert sets["A__sim__E0"] == sets["B__sim__E0"] != sets["C__sim__E0"] and sets["C__sim__E0"][1] == 1


def test_a_run_from_a_world_package_cites_its_reference_and_digest_apart(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """args.json of a run made with --worlds keeps the reference as given and the digest it resolved to: JSON and CSV
    give each a field of its own (a run without a package: null, empty); Markdown and HTML cite them together."""
    reference, digest = "oci://registry.example/acme/claims:1.0", "sha256:" + "ab" * 32
    cited = write_run(tmp_path, "cited", [result(1, True), result(2, False)])
    (cited / "args.json").write_text(json.dumps({"worlds": reference, "worlds_digest": digest}))
    plain = write_run(tmp_path, "plain", [result(1, True, agent_model="B")])
    runs = [str(cited), str(plain)]

    assert main(["report", *runs, "--format", "json"]) == 0
    by_name = {run["name"]: run for run in json.loads(capsys.readouterr().out)["runs"]}
    assert (by_name["cited"]["worlds"], by_name["cited"]["worlds_digest"]) == (reference, digest)
    assert (by_name["plain"]["worlds"], by_name["plain"]["worlds_digest"]) == (None, None)
    assert main(["report", *runs, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {(r["worlds"], r["worlds_digest"]) for r in rows if r["run"] == "cited"} == {(reference, digest)}
    assert {(r["worlds"], r["worlds_digest"]) for r in rows if r["run"] == "plain"} == {("", "")}
    assert main(["report", *runs, "--html", str(tmp_path / "report.html")]) == 0
    assert f"Worlds: {reference} ({digest})" in capsys.readouterr().out.splitlines()
    assert f"Worlds: <code>{reference} ({digest})</code>" in (tmp_path / "report.html").read_text()
