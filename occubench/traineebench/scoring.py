"""Trainee-Bench's own figures, as its paper reports them: a task's score is its points over its full points; the
completion score (CS) is the mean over scenarios of each scenario's mean task score; the success rate (SR) is the
share of tasks with every point earned. Deadlines are lenient, as in the reference: work after a deadline still
counts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from occubench.traineebench.family import Score


@dataclass(frozen=True)
class ReferenceFigures:
    scenarios: int
    tasks: int
    #: CS: the mean over scenarios of the mean task score (None without a scored task).
    completion_score: float | None
    #: SR: the share of tasks fully done.
    success_rate: float | None


def reference_figures(scenarios: Mapping[str, Sequence[Score]]) -> ReferenceFigures:
    """The figures over ``scenarios`` (each scenario's task scores, all its days together); a scenario without a
    scored task is left out."""
    scored = {name: list(scores) for name, scores in scenarios.items() if scores}
    tasks = [score for scores in scored.values() for score in scores]
    means = [sum(score.fraction for score in scores) / len(scores) for scores in scored.values()]
    return ReferenceFigures(len(scored), len(tasks), sum(means) / len(means) if means else None,
                            sum(score.points >= score.full for score in tasks) / len(tasks) if tasks else None)
