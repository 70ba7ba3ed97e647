"""What a working day adds to its result, for every task library, as one typed record: written to
``verdict_details`` by the suite and read back by the report and the day after. This module is the only one that
knows the keys (those of files written before the two libraries shared an engine too)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from occubench.core.results import Result

#: What every task of ours was filed under before tasks had their own category.
DEFAULT_CATEGORY = "Business & Enterprise"

#: The suffix of a day two's id in files written before arms: such a day two has no ``phase`` (see
#: :meth:`DayRecord.from_result`).
LEGACY_DAY_TWO = "-day2"
#: The arm of such a day two: it started with the mentor's feedback.
LEGACY_ARM = "feedback"

T = TypeVar("T")
D = TypeVar("D")


@dataclass(frozen=True)
class TaskScore:
    """One task's score: its points of its full points (``score`` the fraction; ``success`` every point earned) and
    the notes on what was missed."""

    task_id: str
    family: str
    category: str
    difficulty: str
    score: float
    success: bool
    points: float = 0.0
    full: float = 0.0
    notes: tuple[str, ...] = ()


def mean_score(scores: Sequence[TaskScore]) -> float:
    """A day's score: the mean of its tasks' scores (0 for a day without any)."""
    return sum(s.score for s in scores) / len(scores) if scores else 0.0


@dataclass(frozen=True)
class DayRecord:
    """A workplace day's scores, the mentor's feedback on it and, for a learning run, where it stands: a day two
    (``phase`` 2) names its arm and its day one's task id; a reflected-on day one has the reflection's notes."""

    day_score: float
    n_tasks: int
    task_scores: tuple[TaskScore, ...]
    day_feedback: str = ""
    phase: int = 1
    #: For a day two: what it started with (``occubench.workplace.suite.ARMS``, or :data:`LEGACY_ARM`) and the
    #: task id of its day one.
    arm: str = ""
    day_one: str = ""
    reflection_model: str | None = None
    reflection_notes: str | None = None

    def to_details(self) -> dict[str, Any]:
        """The record as ``verdict_details``: a day one has no phase, arm or day one; a day not reflected on no
        reflection keys."""
        details: dict[str, Any] = {
            "day_score": self.day_score, "n_tasks": self.n_tasks, "task_scores": [asdict(s) for s in self.task_scores],
            "day_feedback": self.day_feedback}
        if self.phase != 1:
            details.update(phase=self.phase, arm=self.arm, day_one=self.day_one)
        if self.reflection_model is not None or self.reflection_notes is not None:
            details.update(reflection_model=self.reflection_model, reflection_notes=self.reflection_notes)
        return details

    @classmethod
    def from_result(cls, result: Result) -> DayRecord | None:
        """The record of a scored workplace day; None for an error or a result without readable task scores. A
        value of the wrong type counts as absent. Absent, the day's size and score follow from its tasks, its phase
        is 2 when its id ends in ``-day2`` (a day two written before arms) and 1 otherwise, and a day two's arm is
        the mentor's feedback and its day one the id before ``-day2``."""
        details, task_id = result.verdict_details, str(result.task_id)
        tasks = _task_scores(details) if result.ok else None
        if tasks is None:
            return None
        phase = _typed(details.get("phase"), int, 2 if task_id.endswith(LEGACY_DAY_TWO) else 1)
        day_two = phase != 1
        return cls(
            day_score=_number(details.get("day_score"), mean_score(tasks)),
            n_tasks=_typed(details.get("n_tasks"), int, len(tasks)), task_scores=tasks,
            day_feedback=_typed(details.get("day_feedback"), str, ""), phase=phase,
            arm=_typed(details.get("arm"), str, LEGACY_ARM) if day_two else "",
            day_one=_typed(details.get("day_one"), str, task_id.split(LEGACY_DAY_TWO)[0]) if day_two else "",
            reflection_model=_typed(details.get("reflection_model"), str, None),
            reflection_notes=_typed(details.get("reflection_notes"), str, None))


def _task_scores(details: dict[str, Any]) -> tuple[TaskScore, ...] | None:
    """A day's task scores; None when any of them cannot be read: leaving one out would pair the rest with the wrong
    tasks of the other day (task i of a day two is of the family of task i of its day one). Trainee-Bench days
    written before the shared engine have ``reference_scores`` rows of points instead."""
    value = details.get("task_scores", details.get("reference_scores"))
    if not isinstance(value, list):
        return None
    scores = [score for score in map(_task_score, value) if score is not None]
    return tuple(scores) if len(scores) == len(value) else None


def _task_score(row: object) -> TaskScore | None:
    """One task's score; None when a field is of the wrong type, or missing where older files have it too: the
    family and the score (or, in a Trainee-Bench row of before the shared engine, its points of its full points).
    A wrong category counts as :data:`DEFAULT_CATEGORY`, as absent in files written before tasks had one."""
    if not isinstance(row, dict):
        return None
    task_id, family, difficulty = (_field(row, key, str, "") for key in ("task_id", "family", "difficulty"))
    points, full = _field(row, "points", float, None), _field(row, "full", float, None)
    derived = points / full if isinstance(points, float) and isinstance(full, float) and full else None
    score = _field(row, "score", float, derived)
    success = _field(row, "success", bool, None if derived is None else derived >= 1)
    fields = (task_id, family, difficulty, points, full, score, success)
    if any(value is _BAD for value in fields) or not family or score is None or success is None:
        return None
    notes = row.get("notes")
    return TaskScore(task_id, family, _typed(row.get("category"), str, DEFAULT_CATEGORY), difficulty, score, success,
                     score if points is None else points, 1.0 if full is None else full,
                     tuple(n for n in notes if isinstance(n, str)) if isinstance(notes, (list, tuple)) else ())


_BAD = object()


def _field(row: dict[str, Any], key: str, kind: type, default: Any) -> Any:
    """``row[key]`` (a number as a float), ``default`` when absent, :data:`_BAD` when of another type."""
    if key not in row:
        return default
    if kind is float:
        number = _number(row[key], None)
        return _BAD if number is None else float(number)
    return _typed(row[key], kind, _BAD)


def _typed(value: object, kind: type[T], default: D) -> T | D:
    # A bool is an int to Python, not to a results file.
    return value if isinstance(value, kind) and (kind is bool or not isinstance(value, bool)) else default


def _number(value: object, default: D) -> float | D:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else default
