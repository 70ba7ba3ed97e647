"""Runs of different suites stay apart, pooled runs and uneven task sets are warned about, and directories without
results are skipped: `occubench robustness`, `report` and `compare` over hand-made run directories."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from occubench.cli import build_parser, main
from occubench.report import series_labels, world_label
from occubench.report.robustness import robustness_table, suite_of
from tests.report.conftest import result, typed, write_run


def _code_world(task_id: Any, ok: bool | None, suite: str, mode: str) -> dict[str, Any]:
    """A result of a world that is code (no simulator), as the executable and workplace suites write them."""
    return result(task_id, ok, suite=suite, world_model=None, agent_model="reference", env_mode=mode, votes=[])


def _two_suites(root: Path) -> list[str]:
    # The case: a workplace E0 run (3 of 4 pass, 75 %) and an executable E1 run (1 of 4, 25 %) of the same
    # agent. One row joining them would read as E0 75 %, E1 25 % of one agent on one world.
    workplace = write_run(root, "reference__workplace__E0",
                          [_code_world(t, t < 3, "workplace", "E0") for t in range(4)])
    executable = write_run(root, "refE1", [_code_world(t, t < 1, "executable", "E1") for t in range(4)])
    return [str(workplace), str(executable)]


def _table_lines(out: str, word: str) -> list[str]:
    return [line for line in out.splitlines() if word in line]


def test_robustness_keeps_suites_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["robustness", *_two_suites(tmp_path)]) == 0
    captured = capsys.readouterr()
    (executable,) = _table_lines(captured.out, "executable")
    (workplace,) = _table_lines(captured.out, "workplace")
    assert "25.0" in executable and "75.0" not in executable
    assert "75.0" in workplace and "25.0" not in workplace
    assert "Suite" in captured.out
    assert captured.err == ""  # one mode per row: nothing compared, nothing to warn about


def test_report_keeps_suites_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = _two_suites(tmp_path)
    assert main(["report", *runs]) == 0
    out = capsys.readouterr().out
    assert "| Rank | Run | Suite | Agent | World model | Fault level |" in out
    # Two suites, two task sets: listed by rate, neither ranked above the other.
    assert "| - | reference__workplace__E0 | workplace | reference | - | E0 | 75.0% |" in out
    assert "| - | refE1 | executable | reference | - | E1 | 25.0% |" in out
    assert "| Suite | Agent | World model | E0 | E1 | E2 | E3 | R |" in out
    assert "| executable | reference | - | - | 25.0% | - | - | - |" in out
    assert "| workplace | reference | - | 75.0% | - | - | - | - |" in out
    assert "| Suite | workplace |" in out and "| Suite | executable |" in out  # each run's summary

    assert main(["report", *runs, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["suite"]) for r in data["runs"]] == [("reference__workplace__E0", "workplace"),
                                                               ("refE1", "executable")]
    assert [(r["suite"], r["rates"]["E0"], r["rates"]["E1"]) for r in data["robustness"]] == [
        ("executable", None, 0.25), ("workplace", 0.75, None)]
    assert data["robustness"][1]["runs"]["E0"] == ["reference__workplace__E0"] and data["warnings"] == []

    assert main(["report", *runs, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {(r["run"], r["suite"]) for r in rows} == {("reference__workplace__E0", "workplace"),
                                                      ("refE1", "executable")}


def test_results_of_older_versions_get_a_suite() -> None:
    # No suite field: the suite that claims the line (the simulated suite claims the original harness's lines,
    # which name a simulator), else unknown.
    assert suite_of(typed(1, True, world_model="sim")) == "occubench"
    assert suite_of(typed(1, True, world_model=None)) == "-"
    assert suite_of(typed(1, True, world_model=None, suite="workplace")) == "workplace"
    # So an old file's E0 and a new file's E1 of the same agent and simulator share a row.
    (row,) = robustness_table([typed(1, True), typed(1, False, env_mode="E1", suite="occubench")])
    assert (row.suite, row.rates["E0"], row.rates["E1"]) == ("occubench", 1.0, 0.0)


def test_modes_over_different_tasks_are_warned_about(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # E0 covers tasks 0–9, E2 only tasks 0 and 1: R would compare 80 % over ten tasks with 100 % over two.
    e0 = write_run(tmp_path, "a0", [result(t, t < 8) for t in range(10)])
    e2 = write_run(tmp_path, "a2", [result(t, True, env_mode="E2") for t in range(2)])
    warning = ("agent A, world model sim, suite occubench: the fault levels cover different tasks (E0: 10 tasks "
               "(a0), E2: 2 tasks (a2); 2 tasks at every level): their rates and R compare different task sets")
    assert main(["robustness", str(e0), str(e2)]) == 0
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("warning: " + warning)

    html = tmp_path / "report.html"
    assert main(["report", str(e0), str(e2), "--html", str(html)]) == 0
    captured = capsys.readouterr()
    assert warning in captured.err
    warnings = captured.out.split("## Warnings", 1)[1].split("## Leaderboard", 1)[0]
    assert f"- {warning}" in warnings  # the reader of the report sees it too
    page = html.read_text(encoding="utf-8")
    assert '<section id="warnings"' in page and warning in page.split('<section id="warnings"', 1)[1]

    assert main(["report", str(e0), str(e2), "--format", "json"]) == 0
    (text,) = json.loads(capsys.readouterr().out)["warnings"]
    assert text.startswith(warning)


def test_an_error_does_not_make_task_sets_differ(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # E1's task 1 ended in an error: it is covered (and will be retried), only not scored.
    e0 = write_run(tmp_path, "a0", [result(0, True), result(1, True)])
    e1 = write_run(tmp_path, "a1", [result(0, True, env_mode="E1"), result(1, None, env_mode="E1")])
    assert main(["robustness", str(e0), str(e1)]) == 0
    assert capsys.readouterr().err == ""


def test_overlapping_runs_are_pooled_with_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Two E0 runs of one agent and simulator: "full" evaluated tasks 0–9 (5 pass), "again" tasks 0 and 1 once more
    # (both pass). Both are kept: 7 of 12 results, 58.3 %, and the warning gives each run's own rate.
    full = write_run(tmp_path, "full", [result(t, t < 5) for t in range(10)])
    again = write_run(tmp_path, "again", [result(t, True) for t in range(2)])
    warning = ("agent A, world model sim, suite occubench, E0: 2 runs (full 5/10 = 50.0%, again 2/2 = 100.0%) "
               "evaluated the same 2 (task, trial) pairs; pooled as they are, a shared task counting once per run: "
               "58.3% over 12 results")
    assert main(["robustness", str(full), str(again)]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [f"warning: {warning}"]
    (row,) = _table_lines(captured.out, "occubench")
    assert "58.3" in row

    assert main(["report", str(full), str(again)]) == 0
    captured = capsys.readouterr()
    assert f"warning: {warning}" in captured.err.splitlines()
    assert f"- {warning}" in captured.out and "| occubench | A | sim | 58.3% | - | - | - | - |" in captured.out


def test_runs_that_do_not_overlap_pool_silently(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A run split in two shards, and a second trial of task 0 in a third directory: no (task, trial) twice.
    shards = [write_run(tmp_path, "s1", [result(0, True), result(1, False)]),
              write_run(tmp_path, "s2", [result(2, True), result(3, True)]),
              write_run(tmp_path, "t1", [result(0, False, trial=1)])]
    assert main(["robustness", *map(str, shards)]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "60.0" in _table_lines(captured.out, "occubench")[0]


def _failed_preflight(root: Path, name: str) -> Path:
    run = root / name
    run.mkdir()
    (run / "args.json").write_text(json.dumps({"agent_model": "A"}), encoding="utf-8")
    return run


@pytest.mark.parametrize("command", [["robustness"], ["report"], ["report", "--format", "json"], ["compare"]])
def test_a_directory_without_results_is_skipped(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                command: list[str]) -> None:
    # The case: `occubench report results/*` where results/e6 holds only args.json.
    runs = [write_run(tmp_path, "x", [result(t, t < 1, world_model="sim-x") for t in range(2)]),
            _failed_preflight(tmp_path, "e6"),
            write_run(tmp_path, "y", [result(t, True, world_model="sim-y") for t in range(2)])]
    skipped = f"skipped {runs[1]}: no results.jsonl (a run that stopped before its first task?)"
    assert main([*command, *map(str, runs)]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [f"warning: {skipped}"]
    if command == ["report"]:
        assert f"## Warnings\n\n- {skipped}\n" in captured.out  # the reader of the report sees it too
        assert "| 1 | y | occubench | A | sim-y | E0 | 100.0% |" in captured.out
        assert "| 2 | x | occubench | A | sim-x | E0 | 50.0% |" in captured.out
        assert "## Run e6" not in captured.out
    elif command[1:] == ["--format", "json"]:
        data = json.loads(captured.out)
        assert [r["name"] for r in data["runs"]] == ["x", "y"] and data["warnings"] == [skipped]
    elif command == ["compare"]:
        assert "| occubench | sim-x | sim-y | 1 |" in captured.out


@pytest.mark.parametrize("command", ["robustness", "report", "compare"])
def test_no_directory_with_results_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               command: str) -> None:
    runs = [_failed_preflight(tmp_path, "e5"), _failed_preflight(tmp_path, "e6")]
    assert main([command, *map(str, runs)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"warning: skipped {runs[0]}: no results.jsonl (a run that stopped before its first task?)",
                   f"warning: skipped {runs[1]}: no results.jsonl (a run that stopped before its first task?)",
                   f"occubench: error: no results.jsonl in any of {runs[0]}, {runs[1]}: nothing to report"]


def test_empty_results_files_are_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_run(tmp_path, "empty", [])
    assert main(["report", str(run)]) == 2
    assert f"no results in {run}: their results files are empty" in capsys.readouterr().err


def test_compare_keeps_suites_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Agents A and B in E0 and E1 of the executable suite and of the workplace suite, on tasks numbered alike.
    # Compared by mode, each suite is compared on its own: the executable ranking holds (B ahead in both modes),
    # the workplace one flips. Pooled, task 0 of one suite would be taken for task 0 of the other.
    passed = {("executable", "E0"): {"A": 1, "B": 2}, ("executable", "E1"): {"A": 0, "B": 1},
              ("workplace", "E0"): {"A": 2, "B": 1}, ("workplace", "E1"): {"A": 0, "B": 2}}
    runs = [write_run(tmp_path, f"{agent}__{suite}__{mode}",
                      [result(t, t < n, suite=suite, world_model=None, agent_model=agent, env_mode=mode)
                       for t in range(2)])
            for (suite, mode), agents in passed.items() for agent, n in agents.items()]
    assert main(["compare", *map(str, runs), "--by", "env_mode"]) == 0
    out = capsys.readouterr().out
    assert "| Suite | First | Second | Agents |" in out
    assert "| executable | E0 | E1 | 2 | 1/1 (100.0%) |" in out
    assert "| workplace | E0 | E1 | 2 | 0/1 (0.0%) |" in out
    assert "## Completion: E0 vs E1 (workplace)" in out and "| workplace | A | 100.0% | 0.0% |" in out

    assert main(["compare", *map(str, runs), "--by", "env_mode", "--format", "json"]) == 0
    pairs = json.loads(capsys.readouterr().out)
    assert [(p["suite"], p["first"], p["second"], p["verdicts"]) for p in pairs] == [
        ("executable", "E0", "E1", 4), ("workplace", "E0", "E1", 4)]

    # By suite, the suites are the groups.
    assert main(["compare", *map(str, runs[:2]), *map(str, runs[4:6]), "--by", "suite"]) == 0
    assert "| all | executable | workplace | 2 |" in capsys.readouterr().out


def test_chart_labels_name_each_world() -> None:
    assert world_label("gpt-4o", "occubench") == "gpt-4o"
    assert world_label(None, "executable") == "executable" and world_label("-", "workplace") == "workplace"
    assert world_label(None, "acme") == "acme" and world_label(None, "-") == "unknown world"
    # One world: the agents alone. Code worlds are named by their suite, not all "(executable)".
    assert series_labels([("occubench", "A", "sim"), ("occubench", "B", "sim")]) == {
        ("occubench", "A", "sim"): "A", ("occubench", "B", "sim"): "B"}
    assert series_labels([("workplace", "ref", "-"), ("executable", "ref", "-"), ("occubench", "ref", "gpt-4o"),
                          ("-", "ref", "-")]) == {
        ("workplace", "ref", "-"): "ref (workplace)", ("executable", "ref", "-"): "ref (executable)",
        ("occubench", "ref", "gpt-4o"): "ref (gpt-4o)", ("-", "ref", "-"): "ref (unknown world)"}
    # One simulator under two suites: the suite tells them apart.
    assert series_labels([("occubench", "A", "gpt-4o"), ("acme", "A", "gpt-4o")]) == {
        ("acme", "A", "gpt-4o"): "A (gpt-4o, acme)", ("occubench", "A", "gpt-4o"): "A (gpt-4o, occubench)"}


def test_serve_defaults_to_its_own_port() -> None:
    # vLLM listens on 8000 and the mock server on 8100 by default.
    assert build_parser().parse_args(["serve", "--env", "insurance_claims", "--transport", "http"]).port == 8200
