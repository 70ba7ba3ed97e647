"""Trainee-Bench's figures as its paper computes them: CS the mean over scenarios of the mean task score, SR the
share of tasks fully done."""

from __future__ import annotations

from occubench.traineebench.family import Score
from occubench.traineebench.scoring import reference_figures


def test_completion_score_is_a_mean_of_scenario_means_and_success_a_share_of_tasks() -> None:
    figures = reference_figures({
        "one task done": [Score(3, 3)],
        "three tasks, one half done": [Score(0, 3), Score(1, 2), Score(0, 4)],
        "not scored": [],
    })
    # Scenario means 1 and 1/6: CS 7/12, where pooling the four tasks would give (1 + 0.5) / 4.
    assert (figures.scenarios, figures.tasks) == (2, 4)
    assert figures.completion_score is not None and abs(figures.completion_score - 7 / 12) < 1e-12
    assert figures.success_rate == 0.25
    assert reference_figures({}).completion_score is None
