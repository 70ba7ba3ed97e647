"""The workplace's tables in the layout of Trainee-Bench's: per run Tables 2-4 (overall, by tasks per day, easy and
hard), the scores by category and Table 5 (the day-one → day-two change of each arm); over runs Tables 2-4 with a row
per agent and Figure 4 (scores per guidance tier, drawn as a chart), from real runs against the mock server and
offline, and from hand-made results of learning runs and of older files."""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from occubench import cli
from occubench.cli import run as evaluate
from occubench.core.results import Result
from occubench.core.tables import percent
from occubench.report.robustness import load_run_results
from occubench.testing import MockLLMServer, scripted_responder
from occubench.workplace import workplace_figures
from occubench.workplace.generate import write_days
from occubench.workplace.report import workplace_overview_tables, workplace_tables
from tests.workplace.test_guidance import plain_days, weak_agent


def _run(root: Path, name: str, *args: str) -> list[Result]:
    assert evaluate.main(["--suite", "workplace", "--output-dir", str(root), "--run-name", name, *args]) == 0
    return load_run_results(root / name)


def _tasks(results: list[Result]) -> list[dict[str, Any]]:
    return [task for r in results for task in r.verdict_details["task_scores"]]


def table_rows(text: str, heading: str) -> list[list[str]]:
    """The rows of the first Markdown table in ``text`` whose heading line starts with ``heading``: the cells of
    each line below its header."""
    block = text.split("\n" + heading, 1)[1].split("\n\n", 2)[1]
    return [[cell.strip() for cell in line.strip()[1:-1].split("|")] for line in block.splitlines()[2:]]


def paper_rows(agent: str, results: list[Result]) -> list[list[str]]:
    """Tables 2, 3 and 4's rows for ``agent``'s day ones among ``results``, computed here from the results file's
    fields: SR the share of tasks with every point, CS the mean over days of each day's mean task score, a difficulty's
    CS the mean of its tasks' scores."""
    days = [r for r in results if r.ok and "phase" not in r.verdict_details]

    def mean(values: list[float]) -> float:
        return sum(values) / len(values)

    def sr_cs(group: list[Result]) -> list[str]:
        tasks = [t for r in group for t in r.verdict_details["task_scores"]]
        return [percent(mean([float(t["success"]) for t in tasks])),
                percent(mean([mean([t["score"] for t in r.verdict_details["task_scores"]]) for r in group]))]

    tasks = [t for r in days for t in r.verdict_details["task_scores"]]
    sizes = sorted({len(r.verdict_details["task_scores"]) for r in days})
    by_size = [[r for r in days if len(r.verdict_details["task_scores"]) == n] for n in sizes]
    levels = [[t for t in tasks if t["difficulty"] == level] for level in ("easy", "hard")]
    return [[agent, str(len(days)), str(len(tasks)), *sr_cs(days), f"{mean([r.step_count for r in days]):.1f}",
             f"{mean([len(r.tool_calls) for r in days]):.1f}"],
            [agent, "days", *(str(len(group)) for group in by_size)],
            [agent, "SR", *(sr_cs(group)[0] for group in by_size)],
            [agent, "CS", *(sr_cs(group)[1] for group in by_size)],
            [agent, *(cell for level in levels for cell in (
                [str(len(level)), percent(mean([float(t["success"]) for t in level])),
                 percent(mean([t["score"] for t in level]))] if level else ["0", "-", "-"]))]]


def test_reference_passes_every_task_and_noop_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reference = _run(tmp_path, "ref", "--agent", "reference", "--days", "8", "--seed", "4")
    tasks = _tasks(reference)
    figures = workplace_figures(reference)
    overall = figures["overall"]
    assert (overall["days"], overall["tasks"], overall["success_rate"], overall["checkpoint_score"]) == (
        8, len(tasks), 1.0, 1.0)
    steps, calls = sum(r.step_count for r in reference) / 8, sum(len(r.tool_calls) for r in reference) / 8
    assert (overall["steps"], overall["tool_calls"]) == (steps, calls) and calls > 1
    sizes = Counter(r.verdict_details["n_tasks"] for r in reference)
    assert {n: row["days"] for n, row in figures["by_tasks_per_day"].items()} == sizes
    categories = Counter(task["category"] for task in tasks)
    assert {c: row["tasks"] for c, row in figures["by_category"].items()} == categories and len(categories) > 1
    assert list(figures["by_category"]) == sorted(categories)
    assert {level: row["tasks"] for level, row in figures["by_difficulty"].items()} == Counter(
        task["difficulty"] for task in tasks)
    assert (figures["day_two"], figures["guidance"], figures["learning"]) == (False, 0, {})
    json.dumps(figures)  # JSON-able

    noop = _run(tmp_path, "noop", "--agent", "noop", "--days", "8", "--seed", "4")
    assert len(_tasks(noop)) == len(tasks)  # the same days
    for row in [workplace_figures(noop)["overall"], *workplace_figures(noop)["by_category"].values()]:
        assert row["success_rate"] == row["checkpoint_score"] == 0

    capsys.readouterr()
    assert cli.main(["report", str(tmp_path / "ref")]) == 0
    out = capsys.readouterr().out
    assert table_rows(out, "### Table 2: ") == [["reference", "8", str(len(tasks)), "100.0%", "100.0%", f"{steps:.1f}",
                                                  f"{calls:.1f}"]]
    assert table_rows(out, "### Table 3: ")[0] == ["reference", "days", *(str(sizes[n]) for n in sorted(sizes))]
    assert [row[0] for row in table_rows(out, "### Scores by category")] == sorted(categories)
    for category, n in categories.items():
        assert [category, str(n), "100.0%", "100.0%"] in table_rows(out, "### Scores by category")
    assert "### Table 4: easy and hard tasks" in out
    assert "Table 5" not in out and "Figure 4" not in out  # one run, tier 0


def test_a_guidance_matrix_shows_the_scores_per_tier(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--suite", "workplace", "--days", "3", "--seed", "4", "--output-dir", str(tmp_path)]
    assert evaluate.main([*common, "--agent", "reference", "--guidance", "0", "2"]) == 0
    captured = capsys.readouterr()
    table = captured.out.split("Figure 4: scores per guidance tier", 1)[1]
    cells = [[cell.strip() for cell in line.split("│")[1:-1]] for line in table.splitlines() if "│" in line]
    assert [row[:2] for row in cells] == [["reference", "guidance 0"], ["reference", "guidance 2"]]
    # The tiers are separate settings: no run is taken for a repeat of the other.
    assert "several results for one (task, trial)" not in captured.err and "evaluated the same" not in captured.err

    assert evaluate.main([*common, "--agent", "noop", "--guidance", "2"]) == 0
    assert "Table 2 (guidance tier 2): " in capsys.readouterr().out

    runs = sorted(tmp_path.iterdir())
    assert [run.name.rsplit("__", 1)[0] for run in runs] == [
        "noop__workplace__E0__guidance2", "reference__workplace__E0", "reference__workplace__E0__guidance2"]
    assert cli.main(["report", *map(str, runs)]) == 0
    out = capsys.readouterr().out
    assert out.index("## Completion by fault level") < out.index("## Table 2 (agents compared)") \
        < out.index("## Figure 4: ") < out.index("## Run ")
    assert ("| Agent | Setting | Days | Tasks | SR | CS | Easy CS | Hard CS |"
            in out.split("## Figure 4: ", 1)[1])
    expected = []
    for run, agent, tier in zip(runs, ["noop", "reference", "reference"], [2, 0, 2]):
        tasks = _tasks(load_run_results(run))
        rate = percent(sum(t["success"] for t in tasks) / len(tasks))
        score = percent(sum(t["score"] for t in tasks) / len(tasks))
        levels = [[t["score"] for t in tasks if t["difficulty"] == level] for level in ("easy", "hard")]
        expected.append([agent, f"guidance {tier}", "3", str(len(tasks)), rate, score,
                         *(percent(sum(s) / len(s)) if s else "-" for s in levels)])
    assert table_rows(out, "## Figure 4: ") == expected
    assert "0.0%" in expected[0] and "100.0%" in expected[1]
    # Each run's own tables say which tier they are of.
    assert "### Table 2: " in out and out.count("### Table 2 (guidance tier 2): ") == 2
    assert "| workplace | reference | - | 0 | 100.0% |" in out and "| workplace | reference | - | 2 | 100.0% |" in out


def _day(task_id: str, scores: list[tuple[str, float]], *, ok: bool = True, env_mode: str = "E0",
         **details: Any) -> Result:
    """A hand-made workplace day: (difficulty, score) per task, in family order; ``details`` go into its
    ``verdict_details``."""
    tasks = [{"task_id": f"t{i}", "family": f"family{i}", "category": "Technology & IT", "difficulty": level,
              "score": score, "success": score == 1, "checkpoints": []} for i, (level, score) in enumerate(scores)]
    return Result.from_dict({
        "task_id": task_id, "suite": "workplace", "agent_model": "A", "env_mode": env_mode,
        "status": "ok" if ok else "error",
        "is_correct": all(t["success"] for t in tasks) if ok else None, "step_count": 4,
        "verdict_details": {"day_score": 0, "n_tasks": len(tasks), "task_scores": tasks, **details} if ok else {}})


def _arm(day_one: str, arm: str, scores: list[tuple[str, float]], ok: bool = True) -> Result:
    return _day(f"{day_one}-day2-{arm}", scores, ok=ok, phase=2, arm=arm, day_one=day_one)


DAY_ONE = {"d1": [("easy", 1.0), ("hard", 0.2)], "d2": [("easy", 0.5), ("hard", 0.0)], "d4": [("easy", 0.8)]}


def _learning_run() -> list[Result]:
    return [
        *(_day(day, scores) for day, scores in DAY_ONE.items()),
        _day("d3", [], ok=False),  # an error: its day twos pair with nothing
        _arm("d1", "none", [("easy", 0.5), ("hard", 0.4)]), _arm("d2", "none", [("easy", 1.0), ("hard", 0.0)]),
        _arm("d3", "none", [("easy", 1.0), ("hard", 1.0)]),
        _arm("d1", "notes", [("easy", 1.0), ("hard", 0.6)]), _arm("d2", "notes", [], ok=False),
        _arm("d4", "reflection", [("easy", 0.4)]),  # no hard task: no hard row
        _arm("d1", "zeta", [("easy", 1.0), ("hard", 1.0)]),  # an arm this version does not know: by its name, last
        # An older file's day two: no phase, no arm; the mentor's feedback.
        _day("d2-day2", [("easy", 0.0), ("hard", 0.5)]),
    ]


def _expected(label: str, pairs: dict[str, list[tuple[str, float]]], gains: dict[str, str]) -> list[list[str]]:
    """The rows of one arm, from its day twos (by day one) and the day ones, in overall, easy, hard order: overall
    the mean over days of each day's mean task score (CS), a difficulty the mean over its tasks."""
    def mean(values: list[float]) -> float:
        return sum(values) / len(values)

    rows = []
    for group, gain in gains.items():
        if group == "overall":
            first, second = ([mean([s for _, s in day]) for day in days] for days in (
                [DAY_ONE[day] for day in pairs], list(pairs.values())))
            n = sum(len(DAY_ONE[day]) for day in pairs)
        else:
            first = [s for day in pairs for level, s in DAY_ONE[day] if level == group]
            second = [s for scores in pairs.values() for level, s in scores if level == group]
            n = len(first)
        rows.append([label, group.capitalize(), str(n), percent(mean(first)), percent(mean(second)), gain])
    return rows


def test_day_two_arms_against_their_day_one() -> None:
    tables = workplace_tables(_learning_run())
    # One category: no table of categories.
    assert [t.title.partition(":")[0] for t in tables] == [
        "Table 2 (day one)", "Table 3 (day one)", "Table 4 (day one)", "Table 5"]
    overall = tables[0].rows[0]
    assert overall[:4] == ["A", "3", "5", percent(1 / 5)]  # the day ones only; d1's easy task succeeded
    assert tables[3].columns == ["Arm", "Task type", "Tasks", "Day 1", "Day 2", "Gain"]
    assert tables[3].rows == [
        # none: d1 and d2 (d3's day one is an error). Overall 0.425 → 0.475, easy 0.75 → 0.75, hard 0.1 → 0.2.
        *_expected("no experience", {"d1": [("easy", 0.5), ("hard", 0.4)], "d2": [("easy", 1.0), ("hard", 0.0)]},
                   {"overall": "+5.0 pts", "easy": "+0.0 pts", "hard": "+10.0 pts"}),
        # notes: d1 only (its d2 is an error). 0.6 → 0.8, 1 → 1, 0.2 → 0.6.
        *_expected("own notes", {"d1": [("easy", 1.0), ("hard", 0.6)]},
                   {"overall": "+20.0 pts", "easy": "+0.0 pts", "hard": "+40.0 pts"}),
        *_expected("reflected notes", {"d4": [("easy", 0.4)]}, {"overall": "-40.0 pts", "easy": "-40.0 pts"}),
        *_expected("mentor's feedback", {"d2": [("easy", 0.0), ("hard", 0.5)]},
                   {"overall": "+0.0 pts", "easy": "-50.0 pts", "hard": "+50.0 pts"}),
        *_expected("zeta", {"d1": [("easy", 1.0), ("hard", 1.0)]},
                   {"overall": "+40.0 pts", "easy": "+0.0 pts", "hard": "+80.0 pts"}),
    ]


def test_table_5_s_overall_row_weighs_each_day_alike() -> None:
    # A day of one task and a day of three: overall, day one's CS is (1 + 0) / 2 = 50 % where pooling the four
    # tasks would say 25 %; day two's (0 + 1) / 2 = 50 % (pooled 75 %). The easy tasks are pooled: 1/4 → 3/4.
    results = [_day("d1", [("easy", 1.0)]), _day("d2", [("easy", 0.0)] * 3),
               _arm("d1", "none", [("easy", 0.0)]), _arm("d2", "none", [("easy", 1.0)] * 3)]
    assert workplace_tables(results)[-1].rows == [["no experience", "Overall", "4", "50.0%", "50.0%", "+0.0 pts"],
                                                  ["no experience", "Easy", "4", "25.0%", "75.0%", "+50.0 pts"]]
    assert workplace_tables(results)[0].rows[0][4] == "50.0%"  # Table 2's CS of the day ones: the same


def test_a_rounding_residue_is_no_loss() -> None:
    # 0.1 + 0.2 = 0.30000000000000004 on day one, 0.3 on day two: no change, shown as +0.0, never -0.0.
    results = [_day("d1", [("easy", 0.1), ("easy", 0.2)]), _arm("d1", "none", [("easy", 0.3), ("easy", 0.0)])]
    assert [row[-1] for row in workplace_tables(results)[-1].rows] == ["+0.0 pts", "+0.0 pts"]


def test_titles_name_the_tier_and_errors_are_never_scored() -> None:
    tiered = [_day("d1", [("hard", 0.5)], ok=True), _day("d2", [], ok=False)]
    for result in tiered:
        result.env_info["guidance"] = 3
    tables = workplace_tables(tiered)
    assert tables[0].title.startswith("Table 2 (guidance tier 3): ")
    assert tables[0].rows[0][:5] == ["A", "1", "1", "0.0%", "50.0%"]
    assert workplace_tables([_day("d2", [], ok=False)]) == []


def test_the_tier_table_takes_day_ones_and_keeps_modes_apart() -> None:
    untiered = [_day("d1", [("easy", 1.0)]), _arm("d1", "none", [("easy", 0.0)])]
    assert workplace_overview_tables(untiered) == []  # every result is of tier 0: nothing to compare
    hinted = [_day("d1", [("easy", 0.5), ("hard", 0.0)]), _day("d1", [("easy", 1.0), ("hard", 1.0)], env_mode="E1")]
    for result in hinted:
        result.env_info["guidance"] = 1
    (table,) = workplace_overview_tables(untiered + hinted)  # one agent: no Tables 2-4 across runs
    assert table.title.startswith("Figure 4: ") and table.columns[:2] == ["Agent", "Setting"]
    # The day two of the untiered run is left out: tier 0 has one day of one task. The agent names its fault level.
    assert table.rows == [["A (E0)", "guidance 0", "1", "1", "100.0%", "100.0%", "100.0%", "-"],
                          ["A (E0)", "guidance 1", "1", "2", "0.0%", "25.0%", "50.0%", "0.0%"],
                          ["A (E1)", "guidance 1", "1", "2", "100.0%", "100.0%", "100.0%", "100.0%"]]


def test_a_learning_run_reports_each_arm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = _run(tmp_path, "r", "--agent", "reference", "--days", "3", "--seed", "9", "--learning")
    firsts = [r for r in results if "phase" not in r.verdict_details]
    out = capsys.readouterr().out
    assert "Table 2 (day one): " in out and "Table 5: Day 1 → Day 2 per arm" in out
    (table,) = [t for t in workplace_tables(results) if t.title.startswith("Table 5")]
    # The reference is perfect on both days; a scripted agent has no reflection arm.
    tasks = Counter(t["difficulty"] for t in _tasks(firsts))
    assert table.rows == [[label, group.capitalize(), str(n), "100.0%", "100.0%", "+0.0 pts"]
                          for label in ("no experience", "own notes")
                          for group, n in [("overall", sum(tasks.values())), *sorted(tasks.items())]]
    assert workplace_figures(results)["overall"]["days"] == len(firsts) == 3


def test_the_checkpoint_score_is_the_mean_over_days_of_each_day_s_mean() -> None:
    # Trainee-Bench averages per scenario: a day of one task done and a day of three tasks missed score 50 %, where
    # pooling the four tasks would say 25 %. The success rate stays a share of tasks.
    overall = workplace_figures([_day("d1", [("easy", 1.0)]), _day("d2", [("easy", 0.0)] * 3)])["overall"]
    assert (overall["checkpoint_score"], overall["success_rate"], overall["tasks"]) == (0.5, 0.25, 4)


#: How many of the guidance test's days (all tasks listed at the start, no meeting: the weak agent fails some tasks
#: without guidance and passes every one at tier 3) the matrix plays.
PLAIN_DAYS = 4


@pytest.mark.slow  # eight runs; the default run checks the tables on traineebench (tests/traineebench/test_tables.py)
def test_the_paper_s_tables_and_figure_4_over_a_matrix_of_agents_and_tiers(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    days = plain_days()[:PLAIN_DAYS]
    write_days(days, tmp_path / "days")
    weak = weak_agent(days)
    with MockLLMServer(lambda request, index: (weak if request["model"] == "weak" else scripted_responder)(
            request, index)) as server:
        assert evaluate.main(["--suite", "workplace", "--workplace-dir", str(tmp_path / "days"), "--agent-model",
                              "weak", "mock", "--base-url", server.base_url, "--guidance", "0", "3",
                              "--output-dir", str(tmp_path / "runs")]) == 0
    runs = {(run.name.split("__")[0], 3 if "__guidance3__" in run.name else 0): load_run_results(run)
            for run in (tmp_path / "runs").iterdir()}
    assert sorted(runs) == [("mock", 0), ("mock", 3), ("weak", 0), ("weak", 3)]
    capsys.readouterr()
    assert cli.main(["report", *map(str, sorted((tmp_path / "runs").iterdir())), "--html",
                     str(tmp_path / "report.html")]) == 0
    out = capsys.readouterr().out

    # Each run's Tables 2, 3 and 4 as computed here from its results file; over runs, the same rows, an agent and
    # tier a row, in order.
    expected = {key: paper_rows(key[0] + (", guidance 3" if key[1] else ""), results)
                for key, results in sorted(runs.items())}
    for (agent, tier), results in runs.items():
        section = out.split(f"## Run {agent}__workplace__E0__{'guidance3__' if tier else ''}", 1)[1]
        scope = " (guidance tier 3)" if tier else ""
        rows = paper_rows(agent, results)
        assert table_rows(section, f"### Table 2{scope}: ") == rows[:1]
        assert table_rows(section, f"### Table 3{scope}: ") == rows[1:4]
        assert table_rows(section, f"### Table 4{scope}: ") == rows[4:]
    assert table_rows(out, "## Table 2 (agents compared): ") == [rows[0] for rows in expected.values()]
    assert table_rows(out, "## Table 3 (agents compared): ") == [row for rows in expected.values() for row in rows[1:4]]
    assert table_rows(out, "## Table 4 (agents compared): ") == [rows[4] for rows in expected.values()]

    # Figure 4: each tier's day ones, the hard tasks' mean score last; the weak agent does better with guidance.
    def hard(results: list[Result]) -> float:
        scores = [t["score"] for t in _tasks(results) if t["difficulty"] == "hard"]
        return sum(scores) / len(scores)
    figure = table_rows(out, "## Figure 4: ")
    assert [row[:3] for row in figure] == [[agent, f"guidance {tier}", str(PLAIN_DAYS)]
                                           for agent, tier in sorted(runs)]
    assert [row[-1] for row in figure] == [percent(hard(runs[key])) for key in sorted(runs)]
    assert hard(runs[("weak", 0)]) < hard(runs[("weak", 3)]) == 1.0

    # The HTML report has the tables across runs and Figure 4 drawn beside them.
    page = (tmp_path / "report.html").read_text()
    overview = page.split('<section id="overview" class="charts">', 1)[1].split("</section>", 1)[0]
    assert "<caption>Figure 4: scores per guidance tier" in overview
    [png] = re.findall(r'<img alt="Figure 4: mean score on hard tasks[^"]*" src="data:image/png;base64,([^"]+)"',
                       overview)
    assert base64.b64decode(png).startswith(b"\x89PNG\r\n\x1a\n")


def test_a_day_after_with_other_tasks_compares_each_side_s_own_tasks() -> None:
    """The shipped continual-learning config's day two holds other tasks than its day one: each side's own tasks
    are averaged, never task i of one day against task i of the other."""
    def task(family: str, difficulty: str, score: float) -> dict[str, Any]:
        return {"task_id": family, "family": family, "category": "c", "difficulty": difficulty, "score": score,
                "success": score == 1, "points": score, "full": 1.0, "notes": []}
    first = Result(task_id="s/day_1", verdict_details={"task_scores": [task("a", "easy", 1.0), task("b", "hard", 0.0),
                                                                        task("c", "hard", 0.5)]})
    second = Result(task_id="s/day_2-notes", verdict_details={
        "task_scores": [task("d", "hard", 0.5)], "phase": 2, "arm": "notes", "day_one": "s/day_1"})
    learning = workplace_figures([first, second])["learning"]["notes"]
    assert learning["overall"] == {"tasks": 1, "day1": 0.5, "day2": 0.5, "gain": 0.0}
    assert learning["hard"] == {"tasks": 1, "day1": 0.25, "day2": 0.5, "gain": 0.25}
    assert "easy" not in learning  # no easy task after: nothing to compare
