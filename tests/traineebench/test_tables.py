"""The paper's experiments on Trainee-Bench days, through the real CLI against the mock server: each guidance tier
tells the agent every task's hints up to the tier; the learning arms start day two with nothing, the mentor's
feedback or a reflection's notes; and `occubench report` gives Tables 2-5 and Figure 4 (a table and a chart) as
computed here from the runs' results files."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from occubench.cli import main
from occubench.core.results import Result
from occubench.core.tables import percent
from occubench.report.robustness import load_run_results
from occubench.sandbox import Provider
from occubench.testing import MockLLMServer, scripted_responder
from occubench.traineebench.config import load_config
from occubench.traineebench.plugin import planned_days
from tests.conftest import agent_requests
from tests.traineebench.test_run import CALLS, MONITOR, idle, reference_folder, scripted
from tests.workplace.test_report import paper_rows, table_rows

TRANSACTIONS = {"name": "Transaction Data Review", "deadline": "2025-10-01T20:00:00",
                "arguments": {"num_normal_transactions": 3, "num_abnormal_transactions": 2}}
ADS = {"name": "ADs Strategy Plan", "deadline": "2025-10-01T18:00:00",
       "arguments": {"task_params": {"city": "Shenzhen", "difficulty": "very_easy"}}}
SEED = "5"
REFLECTED = "Your notes after reflecting on a day:\n"


def write_config(tmp_path: Path, scenarios: list[list[list[dict]]]) -> Path:
    """A config of one scenario per item of ``scenarios``, each a list of days' tasks."""
    config = tmp_path / "traineebench_config.json"
    config.write_text(json.dumps({"scenarios": [
        {"name": f"scenario_{chr(ord('a') + s)}", "days": [{"name": f"day_{d}", "tasks": tasks}
                                                           for d, tasks in enumerate(days, start=1)]}
        for s, days in enumerate(scenarios)]}))
    return config


def run(config: Path, base_url: str, out: Path, *args: str) -> None:
    assert main(["run", "--suite", "traineebench", "--traineebench-config", str(config), "--reference-dir",
                 str(out.parent / "reference"), "--base-url", base_url, "--api-key", "k", "--seed", SEED,
                 "--output-dir", str(out), *args]) == 0


def opening(request: dict) -> str:
    """What the agent was told at the start of its day."""
    return str(request["messages"][1]["content"])


@pytest.mark.slow  # four runs of a day: over 5 s
def test_each_guidance_tier_tells_the_agent_the_first_hints_of_every_task(tmp_path: Path, sandbox: Provider) -> None:
    reference = reference_folder(tmp_path)
    config = write_config(tmp_path, [[[TRANSACTIONS, ADS, MONITOR]]])
    with MockLLMServer(idle) as server:
        run(config, server.base_url, tmp_path / "runs", "--agent-model", "intern", "--guidance", "0", "1", "2", "3")
        openings = {opening(request) for request in agent_requests(server)}
    [[day]] = planned_days(load_config(config), int(SEED), reference, paper_day_two=False)
    hints = [task.hints for task in day.tasks]
    assert all(len(three) == 3 and all(three) for three in hints)
    told = {}
    for text in openings:  # one a tier, told by how many of the first task's hints it carries
        tier = sum(hint in text for hint in hints[0])
        assert tier not in told
        told[tier] = text
        for three in hints:
            # Exactly the first ``tier`` hints of each task, together on the task's Guidance line; none of the rest.
            assert (f"\nGuidance: {' '.join(three[:tier])}\n" in text + "\n") == (tier > 0)
            assert not any(hint in text for hint in three[tier:])
        assert text.count("\nGuidance: ") == (len(hints) if tier else 0)
    assert sorted(told) == [0, 1, 2, 3]
    tiers = {result.guidance for path in (tmp_path / "runs").iterdir() for result in load_run_results(path)}
    assert tiers == {0, 1, 2, 3}


def learner(request: dict, index: int) -> str | dict:
    """An agent that reviews the transactions as the manual says only when it starts its day with something from the
    day before (the mentor's feedback, or its notes after reflecting); else it ends its day at once. The mock plays
    every other role: the reflection among them."""
    if not agent_requests_of(request):
        return scripted_responder(request, index)
    told = "Mentor's feedback" in opening(request) or REFLECTED in opening(request)
    return (scripted(CALLS) if told else idle)(request, index)


def agent_requests_of(request: dict) -> bool:
    return bool(request.get("tools")) and request["messages"][0]["role"] == "system"


def test_the_learning_arms_start_day_two_with_what_they_are_told_and_table_5_compares_the_days(
        tmp_path: Path, sandbox: Provider, capsys: pytest.CaptureFixture[str]) -> None:
    reference_folder(tmp_path)
    config = write_config(tmp_path, [[[TRANSACTIONS]]])
    with MockLLMServer(learner) as server:
        run(config, server.base_url, tmp_path / "runs", "--agent-model", "learner", "--paper-day-two", "--learning",
            "--run-name", "r")
        openings = {opening(request) for request in agent_requests(server)}
    results = {str(result.task_id): result for result in load_run_results(tmp_path / "runs" / "r")}
    assert sorted(results) == ["scenario_a/day_1", *(f"scenario_a/day_2-{arm}" for arm in ("none", "notes",
                                                                                          "reflection"))]
    day_one = results["scenario_a/day_1"].verdict_details
    notes, feedback = day_one["reflection_notes"], day_one["day_feedback"]
    assert notes and feedback.startswith("Mentor's feedback")
    # The reflection arm's day two starts with the notes, the notes arm's with the mentor's feedback; day one and
    # the arm told nothing start with neither.
    [reflected] = [text for text in openings if REFLECTED in text]
    [fed] = [text for text in openings if "Mentor's feedback" in text]
    assert REFLECTED + notes in reflected and "Mentor's feedback" not in reflected
    assert feedback in fed and notes not in fed
    assert len(openings - {reflected, fed}) in (1, 2)  # day one's and the bare arm's, the same when their tasks read so

    capsys.readouterr()
    assert main(["report", str(tmp_path / "runs" / "r")]) == 0
    out = capsys.readouterr().out
    first = day_one["task_scores"][0]["score"]
    expected = []
    for arm, label in (("none", "no experience"), ("notes", "own notes"), ("reflection", "reflected notes")):
        second = results[f"scenario_a/day_2-{arm}"].verdict_details["task_scores"][0]["score"]
        gain = f"{round(100 * (second - first), 1) + 0.0:+.1f} pts"
        expected += [[label, group, "1", percent(first), percent(second), gain] for group in ("Overall", "Easy")]
    assert table_rows(out, "### Table 5: ") == expected
    # The agent told nothing did nothing; told something, it did the review: the arms differ.
    assert first < 1 and [row[4] for row in expected[::2]] == [percent(first), "100.0%", "100.0%"]


def guided(request: dict, index: int) -> str | dict:
    """The mock's intern (who asks an HR Manager for help) on a day it starts with guidance or notes of its own;
    else an agent that ends its day at once."""
    if agent_requests_of(request) and "\nGuidance: " not in opening(request) and REFLECTED not in opening(request):
        return idle(request, index)
    return scripted_responder(request, index)


def test_tables_2_to_4_and_figure_4_from_guidance_tiers_and_self_evolution(
        tmp_path: Path, sandbox: Provider, capsys: pytest.CaptureFixture[str]) -> None:
    reference_folder(tmp_path)
    config = write_config(tmp_path, [[[TRANSACTIONS]], [[MONITOR, TRANSACTIONS]]])
    out = tmp_path / "runs"
    with MockLLMServer(guided) as server:
        run(config, server.base_url, out, "--agent-model", "intern", "--verifier-model", "mock", "--guidance", "0",
            "2")
        run(config, server.base_url, out, "--agent-model", "intern", "--verifier-model", "mock", "--self-evolution",
            "2", "--run-name", "evolution")
    runs = {path.name: load_run_results(path) for path in out.iterdir()}
    [tier0] = [name for name in runs if name.startswith("intern__") and "guidance" not in name]
    [tier2] = [name for name in runs if "__guidance2__" in name]
    capsys.readouterr()
    assert main(["report", *(str(out / name) for name in sorted(runs)), "--html", str(tmp_path / "report.html")]) == 0
    report = capsys.readouterr().out

    # Each guidance run's Tables 2-4 (days of one and of two tasks), as computed here from its results.
    for name, scope in ((tier0, ""), (tier2, " (guidance tier 2)")):
        section = report.split(f"## Run {name}\n", 1)[1]
        rows = paper_rows("intern", runs[name])
        assert [table_rows(section, f"### Table {n}{scope}: ") for n in (2, 3, 4)] == [rows[:1], rows[1:4], rows[4:]]
        assert rows[1][1:] == ["days", "1", "1"]

    # Figure 4: the hard tasks' mean score of each tier's days, and of each time the first days were played again.
    def hard(results: list[Result]) -> str:
        scores = [t["score"] for r in results for t in r.verdict_details["task_scores"] if t["difficulty"] == "hard"]
        return percent(sum(scores) / len(scores))
    evolution = runs["evolution"]
    iterations = {n: [r for r in evolution if str(r.task_id).endswith(f"/evolution_{n}")] for n in (1, 2)}
    firsts = [r for r in evolution if "evolution_" not in str(r.task_id)]
    assert len(firsts) == len(iterations[1]) == len(iterations[2]) == 2
    figure = table_rows(report, "## Figure 4: ")
    assert [[row[1], row[2], row[-1]] for row in figure] == [
        ["guidance 0", "4", hard(runs[tier0] + firsts)], ["guidance 2", "2", hard(runs[tier2])],
        ["self-evolution 1", "2", hard(iterations[1])], ["self-evolution 2", "2", hard(iterations[2])]]
    # Told nothing, the agent earns nothing of the hard task; with its notes, it asks HR for help (as it would with
    # the hints).
    assert figure[0][-1] == "0.0%" and all(row[-1] != "0.0%" for row in figure[2:])
    # The self-evolution days are no day two: there is no Table 5.
    assert "Table 5" not in report

    page = (tmp_path / "report.html").read_text()
    [png] = re.findall(r'<img alt="Figure 4: [^"]*" src="data:image/png;base64,([^"]+)"', page)
    assert base64.b64decode(png).startswith(b"\x89PNG\r\n\x1a\n")
