"""A workplace day's record: written as the ``verdict_details`` a results file has always held, read back from
files of every version, and never a crash on a value of the wrong type."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from typing import Any

import pytest

from occubench.core.results import Result
from occubench.workplace.generate import generate_day
from occubench.workplace.record import DEFAULT_CATEGORY, DayRecord, TaskScore, mean_score
from occubench.workplace.report import workplace_figures, workplace_tables
from occubench.workplace.validate import validate_day

_DAY = generate_day(4, 1)
_VALIDATED = validate_day(_DAY)
SCORES = tuple(TaskScore(task.id, task.family, task.category, task.difficulty, score.fraction,
                         score.points == score.full, float(score.points), float(score.full), score.notes)
               for scores in (_VALIDATED.reference, _VALIDATED.noop) for task, score in zip(_DAY.tasks, scores))
DAY_ONE = DayRecord(0.5, len(SCORES), SCORES, "Mentor's feedback:\n- ...")
DAY_TWO = replace(DAY_ONE, phase=2, arm="notes", day_one="s4-d001")
REFLECTED = replace(DAY_ONE, reflection_model="critic", reflection_notes="")


def _stored(task_id: str, record: DayRecord) -> Result:
    """A result carrying ``record``, through a results file's line and back."""
    line = json.dumps(Result(task_id=task_id, verdict_details=record.to_details()).to_dict())
    return Result.from_dict(json.loads(line))


@pytest.mark.parametrize(("record", "keys"), [
    (DAY_ONE, []), (DAY_TWO, ["phase", "arm", "day_one"]), (REFLECTED, ["reflection_model", "reflection_notes"])])
def test_a_record_is_written_as_it_always_was_and_reads_back(record: DayRecord, keys: list[str]) -> None:
    details = record.to_details()
    assert list(details) == ["day_score", "n_tasks", "task_scores", "day_feedback", *keys]
    assert details["task_scores"] == [asdict(score) for score in SCORES]
    assert any(task["notes"] for task in details["task_scores"])
    assert any(task["success"] for task in details["task_scores"])
    assert DayRecord.from_result(_stored("s4-d001-day2-notes" if record.phase == 2 else "s4-d001", record)) == record


def _legacy(task_id: str, **details: Any) -> Result:
    """A line of a file written before tasks had categories and day twos had arms; ``details`` added to it."""
    rows = [{k: v for k, v in asdict(score).items() if k != "category"} for score in SCORES]
    return Result.from_dict({"task_id": task_id, "verdict_details": {
        "day_score": 0.5, "n_tasks": len(rows), "task_scores": rows, "day_feedback": "f", **details}})


def test_trainee_bench_rows_of_before_the_shared_engine_read_as_points() -> None:
    rows = [{"family": "Sales Analysis", "points": 2.8, "full": 4.0, "notes": ["Save the report."]},
            {"family": "KB Link Fix", "points": 5, "full": 5, "notes": []}]
    record = DayRecord.from_result(Result(task_id="scenario_1/day_1", verdict_details={"reference_scores": rows}))
    assert record is not None and [(t.family, t.score, t.success, t.notes) for t in record.task_scores] == [
        ("Sales Analysis", 0.7, False, ("Save the report.",)), ("KB Link Fix", 1.0, True, ())]
    assert record.day_score == 0.85 and record.phase == 1


def test_older_files_read_as_the_report_always_took_them() -> None:
    # Tasks without a category, a day two without a phase: its id ends in -day2.
    first, second = DayRecord.from_result(_legacy("s4-d001")), DayRecord.from_result(_legacy("s4-d001-day2"))
    assert first == replace(DAY_ONE, task_scores=tuple(replace(s, category=DEFAULT_CATEGORY) for s in SCORES),
                            day_feedback="f")
    assert second == replace(first, phase=2, arm="feedback", day_one="s4-d001")
    # A day two with a phase but no arm or day one: the mentor's feedback, of the day its id names.
    assert DayRecord.from_result(_legacy("s4-d001-day2-x", phase=2)) == second
    assert DayRecord.from_result(_legacy("s4-d001-day2", phase=1)) == first


def _hostile(**changes: Any) -> DayRecord | None:
    details = {**DAY_TWO.to_details(), **changes}
    return DayRecord.from_result(Result(task_id="s4-d001-day2-notes", verdict_details=details))


def _row(**changes: Any) -> list[Any]:
    return [{**asdict(SCORES[0]), **changes}, *map(asdict, SCORES[1:])]


@pytest.mark.parametrize("task_scores", [
    None, {"t1": 1}, "[]", [*_row(), "a task"], _row(score="1"), _row(score=True), _row(success="yes"),
    _row(success=1), _row(difficulty=None), _row(task_id=3), _row(family=["x"])])
def test_unreadable_task_scores_leave_the_day_unscored(task_scores: Any) -> None:
    # Leaving one task out would pair the others with the wrong tasks of the other day.
    assert _hostile(task_scores=task_scores) is None


def test_a_value_of_the_wrong_type_counts_as_absent() -> None:
    record = _hostile(day_score="1", n_tasks=True, day_feedback=["x"], arm=7, day_one=None, reflection_notes={},
                      reflection_model=1.5, task_scores=_row(category=4, notes="all", score=1))
    tasks = (replace(SCORES[0], category=DEFAULT_CATEGORY, notes=(), score=1), *SCORES[1:])
    # The size and score follow from the tasks; the day one from the id.
    assert record == replace(DAY_TWO, day_score=mean_score(tasks), task_scores=tasks, day_feedback="", arm="feedback")
    assert _hostile(phase="2") == DAY_ONE  # its id does not end in -day2
    kept = _hostile(task_scores=_row(notes=[1, "kept"]))
    assert kept is not None and kept.task_scores[0].notes == ("kept",)
    assert DayRecord.from_result(replace(_stored("d", DAY_ONE), status="error")) is None
    assert DayRecord.from_result(Result(task_id="j", verdict_details={"judge_label": "pass"})) is None


def test_a_report_over_hostile_results_is_never_a_crash() -> None:
    good = [_stored("s4-d001", DAY_ONE), _stored("s4-d001-day2-notes", DAY_TWO)]
    hostile = [Result(task_id=f"h{i}", verdict_details=details) for i, details in enumerate([
        {"task_scores": "x"}, {**DAY_ONE.to_details(), "n_tasks": "five", "phase": [2]},
        {**DAY_TWO.to_details(), "day_one": 5, "arm": {"x": 1}}, {"task_scores": [None]}])]
    figures = workplace_figures(good + hostile)
    # h1 is a day one of the usual size; h2 a day two of the mentor's feedback whose day one ("h2") is not there.
    assert figures["overall"]["days"] == 2 and figures["by_tasks_per_day"] == {len(SCORES): figures["overall"]}
    assert list(figures["learning"]) == ["notes"]
    assert workplace_tables(hostile)[0].title.startswith("Table 2 (day one): ")
