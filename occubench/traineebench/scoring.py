"""Trainee-Bench's own figures, as its paper reports them: a task's score is its points over its full points; the
completion score (CS) is the mean over scenarios of each scenario's mean task score; the success rate (SR) is the
share of tasks with every point earned. Deadlines are lenient, as in the reference: work after a deadline still
counts."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from occubench.core.results import Result
from occubench.core.tables import Table, percent
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


def result_scores(results: Iterable[Result]) -> dict[str, list[Score]]:
    """Each scenario's task scores, from the results of its days that were scored (an error has none)."""
    scenarios: dict[str, list[Score]] = defaultdict(list)
    for result in results:
        rows = result.verdict_details.get("reference_scores") if result.ok else None
        if isinstance(rows, list):
            scenarios[str(result.task_scenario_name)] += [Score(float(row["points"]), float(row["full"]))
                                                          for row in rows if isinstance(row, dict)]
    return scenarios


def reference_tables(results: list[Result]) -> list[Table]:
    """Trainee-Bench's own figures beside the run's generic ones: CS and SR overall, and per task family."""
    figures = reference_figures(result_scores(results))
    rows = [["All", str(figures.scenarios), str(figures.tasks), percent(figures.completion_score),
             percent(figures.success_rate)]]
    families: dict[str, list[Score]] = defaultdict(list)
    for result in results:
        for row in (result.verdict_details.get("reference_scores") or []) if result.ok else []:
            families[str(row["family"])].append(Score(float(row["points"]), float(row["full"])))
    for name, scores in sorted(families.items()):
        family = reference_figures({name: scores})
        rows.append([name, "-", str(family.tasks), percent(family.completion_score), percent(family.success_rate)])
    return [Table("Trainee-Bench (reference scoring)", ["Family", "Scenarios", "Tasks", "CS", "SR"], rows,
                  note="CS: the mean over scenarios of each scenario's mean task score (points over full points; per "
                       "family, the mean over its tasks). SR: the share of tasks with every point earned. Deadlines "
                       "are lenient, as in the reference.")]
