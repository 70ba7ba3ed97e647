"""The fidelity report of twin runs: call agreement with Wilson intervals, verdict flips with a bootstrap interval,
kinds of disagreement, its tables, and the HTML report's side-by-side listing of the calls that disagreed."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from occubench.core.results import ErrorInfo, Result
from occubench.report import html_report, load_run_dirs
from occubench.twin.fidelity import (
    fidelity,
    fidelity_tables,
    flip_share,
    kind_counts,
    twin_calls,
    wilson_interval,
)
from tests.report.conftest import result, write_run

EVIL = "<script>alert(1)</script>"


def call(i: int, tool: str, agree: bool, by: str = "equal", kind: str | None = None,
         simulated: Any = None) -> dict[str, Any]:
    return {"call_index": i, "tool": tool, "arguments": json.dumps({"id": i}),
            "simulated": simulated if simulated is not None else {"id": i},
            "real": {"id": i}, "agree": agree, "by": by, "kind": kind, "reason": "" if agree else "differs"}


def twin(task: str, calls: list[dict[str, Any]], flipped: bool = False, trial: int = 0, **fields: Any) -> Result:
    return Result(task_id=task, suite="twin", trial=trial, is_correct=not flipped, env_info={"twin_calls": calls},
                  verdict_details={"executable": {"is_correct": True, "checks": []}, "flipped": flipped}, **fields)


def direct_wilson(x: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = x / n
    centre = (x + z * z / 2) / (n + z * z)
    half = z * math.sqrt(n * p * (1 - p) + z * z / 4) / (n + z * z)
    return centre - half, centre + half


@pytest.fixture()
def results() -> list[Result]:
    return [
        # claims: 4 decided calls, 3 agreeing, and one the judge could not decide; hr: 2 decided, none agreeing
        twin("claims/pay", [call(0, "get_claim", True), call(1, "get_claim", True),
                            call(2, "pay", False, "judge", "missed_state_change"),
                            call(3, "pay", False, "judge_error")], flipped=True),
        twin("claims/deny", [call(0, "get_claim", True, "key_fields")]),
        twin("hr/hire", [call(0, "add_employee", False, "judge", "invented_records"),
                         call(1, "list_employees", False, "key_fields", "wrong_values")]),
        # an error record and another suite's result are left out of everything
        Result(task_id="hr/fire", suite="twin", status="error", error=ErrorInfo("infrastructure", "down"),
               env_info={"twin_calls": [call(0, "fire", False, "judge", "wrong_error")]}),
        Result(task_id="hr/fire", suite="executable", is_correct=True,
               env_info={"twin_calls": [call(0, "fire", False, "judge", "wrong_error")]}),
    ]


def test_wilson_interval_matches_the_formula() -> None:
    assert wilson_interval(7, 10) == pytest.approx(direct_wilson(7, 10))
    assert wilson_interval(7, 10) == pytest.approx((0.3968, 0.8922), abs=1e-4)  # published value
    low, high = wilson_interval(0, 5)
    assert low == 0 and 0 < high < 1  # not degenerate at 0 successes
    assert wilson_interval(0, 0) == (None, None)


def test_agreement_overall_and_per_group(results: list[Result]) -> None:
    f = fidelity(results)
    assert (f.episodes, f.errors) == (3, 1)
    assert (f.calls.agreeing, f.calls.decided, f.calls.undecided) == (3, 6, 1)
    assert (f.calls.low, f.calls.high) == pytest.approx(direct_wilson(3, 6))
    assert {w: (a.agreeing, a.decided, a.undecided) for w, a in f.by_world.items()} == {
        "claims": (3, 4, 1), "hr": (0, 2, 0)}
    assert (f.by_world["hr"].low, f.by_world["hr"].high) == pytest.approx(direct_wilson(0, 2))
    assert {t: (a.agreeing, a.decided) for t, a in f.by_tool.items()} == {
        "claims/get_claim": (3, 3), "claims/pay": (0, 1), "hr/add_employee": (0, 1), "hr/list_employees": (0, 1)}
    assert f.by_tool["claims/pay"].undecided == 1
    assert {t: (a.agreeing, a.decided) for t, a in f.by_task.items()} == {
        "claims/deny": (1, 1), "claims/pay": (2, 3), "hr/hire": (0, 2)}


def test_judge_errors_are_neither_agreement_nor_disagreement() -> None:
    only_undecided = fidelity([twin("w/t", [call(0, "x", False, "judge_error")])])
    assert (only_undecided.calls.decided, only_undecided.calls.undecided) == (0, 1)
    assert only_undecided.calls.rate is None and only_undecided.calls.low is None
    assert only_undecided.kinds == {}


def test_error_results_are_left_out(results: list[Result]) -> None:
    assert {c.task_id for c in twin_calls(results)} == {"claims/pay", "claims/deny", "hr/hire"}
    assert "hr/fire" not in fidelity(results).flips.by_task


def test_kinds_are_counted_overall_and_per_world(results: list[Result]) -> None:
    f = fidelity(results)
    assert f.kinds == {"invented_records": 1, "missed_state_change": 1, "wrong_values": 1}
    assert list(f.kinds) == ["invented_records", "missed_state_change", "wrong_values"]  # the contract's order
    assert f.kinds_by_world == {"claims": {"missed_state_change": 1},
                                "hr": {"invented_records": 1, "wrong_values": 1}}
    assert kind_counts(twin_calls([twin("w/t", [call(0, "x", False, "judge", None)])])) == {"?": 1}


def test_flip_share_has_a_seeded_bootstrap_interval() -> None:
    episodes = [twin(f"w/t{i}", [], flipped=i % 3 == 0, trial=trial) for i in range(12) for trial in range(2)]
    flips = flip_share(episodes)
    assert (flips.flipped, flips.episodes) == (8, 24)
    assert flips.by_task["w/t0"] == (2, 2) and flips.by_task["w/t1"] == (0, 2)
    assert flips.low is not None and flips.high is not None and flips.rate is not None
    assert 0 <= flips.low < flips.rate < flips.high <= 1
    assert flip_share(list(reversed(episodes))) == flips  # the records' order does not move the interval
    none = flip_share([twin("w/t", [])])
    assert (none.rate, none.low, none.high) == (0, 0, 0)
    assert flip_share([]).rate is None


def test_tables(results: list[Result]) -> None:
    tables = {t.title: t for t in fidelity_tables(results)}
    assert list(tables) == ["Twin fidelity: summary", "Twin fidelity: by world", "Twin fidelity: by tool",
                            "Twin fidelity: by task", "Twin fidelity: disagreements by kind"]
    summary = dict(map(tuple, tables["Twin fidelity: summary"].rows))
    assert summary["Call agreement"] == "50.0% (3/6)"
    low, high = direct_wilson(3, 6)
    assert summary["95% CI (Wilson)"] == f"{100 * low:.1f}–{100 * high:.1f}%"
    assert summary["Calls the judge could not decide"] == "1"
    assert summary["Verdict flipped (twin vs real)"] == "33.3% (1/3)"
    assert summary["Errors (not scored)"] == "1"
    assert tables["Twin fidelity: by world"].rows[1][:4] == ["hr", "2", "0", "0.0%"]
    assert tables["Twin fidelity: by task"].rows[1] == [
        "claims/pay", "3", "2", "66.7%", "{}–{}".format(*(f"{100 * x:.1f}" for x in direct_wilson(2, 3))) + "%", "1",
        "100.0% (1/1)"]
    assert tables["Twin fidelity: disagreements by kind"].rows[0] == ["invented_records", "hr 1", "1", "33.3%"]


def test_no_twin_results_no_tables(results: list[Result]) -> None:
    assert fidelity_tables([]) == []
    assert fidelity_tables([r for r in results if r.suite != "twin" or not r.ok]) == []


def test_html_lists_disagreements_as_text(tmp_path: Path) -> None:
    calls = [call(0, "get_claim", True),
             call(1, "get_claim", False, "judge", "invented_records", simulated={"note": EVIL})]
    run = write_run(tmp_path, "twin-run", [
        result("claims/pay", True, suite="twin", env_info={"twin_calls": calls},
               verdict_details={"executable": {"is_correct": False, "checks": []}, "flipped": True})])
    page = html_report(load_run_dirs([run]))
    section = page[page.index('<section id="fidelity">'):page.index("</section>", page.index('id="fidelity"'))]
    assert "Simulator fidelity" in section and "1 of 2 call(s) not agreeing" in section
    assert "invented_records" in section and 'href="#task=0%2Fclaims%2Fpay%2F0"' in section
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in section
    assert EVIL not in page and page.count("<script") == 2  # the viewer's data and script, nothing else
    assert "<caption>Twin fidelity: summary</caption>" in page  # the suite's tables in the run's section
