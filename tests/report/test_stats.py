"""Completion with a Wilson CI, breakdowns, judge unanimity, pass@k and pass^k, and trial-aware loading."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from occubench.report import (
    breakdown,
    completion_ci,
    load_run,
    pass_at_k,
    pass_hat_k,
    pass_k,
    run_stats,
    trial_counts,
    unanimity,
)
from occubench.report.stats import effective_size, wilson_interval
from tests.report.conftest import HEALTH, TECH, TRANSPORT, result, typed, write_run


def wilson(successes: float, n: float, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson's score interval written out from its definition: the p whose score test |p̂ − p| / sqrt(p(1 − p)/n)
    equals z, i.e. the roots of (1 + z²/n) p² − (2p̂ + z²/n) p + p̂² = 0."""
    phat, a = successes / n, 1 + z * z / n
    b, c = -(2 * phat + z * z / n), phat * phat
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


def test_ci_contains_the_rate_and_narrows_with_more_tasks() -> None:
    # 7 of 10 tasks pass, plus an error line that is counted apart: rate 7/10.
    records = [typed(i, i < 7) for i in range(10)] + [typed(10, None)]
    ci = completion_ci(records)
    assert (ci.passed, ci.evaluated, ci.rate) == (7, 10, 0.7)
    assert (ci.low, ci.high) == pytest.approx(wilson(7, 10))
    # The same 70 % over 100 tasks is known far better: its interval lies strictly inside the 10-task one.
    many = completion_ci([typed(i, i % 10 < 7) for i in range(100)])
    assert ci.low is not None and ci.high is not None and many.low is not None and many.high is not None
    assert ci.low < many.low < 0.7 < many.high < ci.high


def test_ci_says_something_at_the_edges() -> None:
    # 30 of 30: a bootstrap gave 100.0–100.0 %; Wilson's lower bound is about 88.6 %.
    all_pass = completion_ci([typed(i, True) for i in range(30)])
    assert all_pass.low == pytest.approx(wilson(30, 30)[0])
    assert all_pass.low == pytest.approx(0.886, abs=5e-4) and all_pass.high == 1.0
    none = completion_ci([typed(i, False) for i in range(5)] + [typed(9, None)])
    assert (none.rate, none.evaluated, none.low) == (0.0, 5, 0.0)
    assert none.high == pytest.approx(wilson(0, 5)[1])
    # 2 of 3: a bootstrap gave 0–100 %; the interval is wide but says something.
    few = completion_ci([typed(i, i < 2) for i in range(3)])
    assert few.low is not None and few.high is not None
    assert 0.0 < few.low < 2 / 3 < few.high < 1.0
    empty = completion_ci([typed(1, None)])
    assert (empty.rate, empty.low, empty.high) == (None, None, None)


def coverage(samples: list[list[tuple[int, int]]], truth: float) -> float:
    hits = 0
    for tasks in samples:
        size = effective_size(tasks)
        low, high = wilson_interval(sum(x for x, _ in tasks) / sum(n for _, n in tasks) * size, size)
        assert low is not None and high is not None
        hits += low <= truth <= high
    return hits / len(samples)


@pytest.mark.parametrize("p", [0.02, 0.5, 0.98])
def test_one_trial_per_task_covers_95_percent(p: float) -> None:
    rng = random.Random(44)
    samples = [[(int(rng.random() < p), 1) for _ in range(30)] for _ in range(2000)]
    assert all(effective_size(tasks) == 30 for tasks in samples[:50])  # one trial per task: Wilson over tasks
    # Wilson's interval is a little conservative next to 0 and 1 (its exact coverage at p = 0.02 or 0.98 and n = 30
    # is 97.8 %, from the binomial sum), hence the margin above.
    assert 0.92 <= coverage(samples, p) <= 0.99


@pytest.mark.parametrize("a, b", [(0.5, 0.5), (2.0, 2.0), (4.0, 1.0), (0.2, 0.8)])
def test_repeated_correlated_trials_cover_about_95_percent(a: float, b: float) -> None:
    # Each task has its own pass chance drawn from Beta(a, b) and 3 trials at that chance: a task's trials are
    # correlated (Beta(0.5, 0.5) makes them agree half the time more than chance would), and treating the 90 trials
    # as independent would give too narrow an interval.
    rng = random.Random(44)
    samples = []
    for _ in range(2000):
        chances = [rng.betavariate(a, b) for _ in range(30)]
        samples.append([(sum(rng.random() < q for _ in range(3)), 3) for q in chances])
    assert coverage(samples, a / (a + b)) >= 0.93


def test_repeated_trials_count_for_less_when_they_agree() -> None:
    # 10 tasks, 3 trials each: tasks 0–5 pass all three, 6–9 fail all three. The trials are copies of each
    # other: the interval is Wilson's over the 10 tasks, not over 30 independent trials.
    copies = [typed(t, t < 6, trial=k) for t in range(10) for k in range(3)]
    ci = completion_ci(copies)
    assert (ci.passed, ci.evaluated) == (18, 30)
    assert (ci.low, ci.high) == pytest.approx(wilson(6, 10))
    # Every trial passed: no spread to estimate the correlation from, so the cautious count (tasks) is taken.
    assert completion_ci([typed(t, True, trial=k) for t in range(10) for k in range(3)]).low == pytest.approx(
        wilson(10, 10)[0])
    # Every task passes 2 of 3: the trials disagree within tasks only, and count in full.
    spread = [typed(t, k < 2, trial=k) for t in range(10) for k in range(3)]
    assert (completion_ci(spread).low, completion_ci(spread).high) == pytest.approx(wilson(20, 30))


@pytest.mark.parametrize("n, c, k, hat, at", [
    (4, 2, 2, 1 / 6, 5 / 6),   # C(2,2)/C(4,2) = 1/6; 1 - C(2,2)/C(4,2) = 5/6
    (4, 2, 1, 1 / 2, 1 / 2),   # k = 1: both are c/n
    (3, 3, 3, 1.0, 1.0),
    (3, 0, 2, 0.0, 0.0),
    (5, 1, 3, 0.0, 0.6),       # pass@3 = 1 - C(4,3)/C(5,3) = 1 - 4/10
])
def test_pass_k_formulas(n: int, c: int, k: int, hat: float, at: float) -> None:
    assert pass_hat_k(n, c, k) == pytest.approx(hat)
    assert pass_at_k(n, c, k) == pytest.approx(at)


def test_pass_k_needs_k_trials() -> None:
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_pass_k_averages_over_tasks_with_enough_trials() -> None:
    # Task 1: 4 trials, 2 correct (pass^2 = 1/6, pass@2 = 5/6), and a fifth trial that errored: not counted.
    # Task 2: 4 trials, all correct (pass^2 = pass@2 = 1). Task 3: 1 trial only, left out at k = 2.
    records = ([typed(1, k < 2, trial=k) for k in range(4)] + [typed(1, None, trial=4)]
               + [typed(2, True, trial=k) for k in range(4)] + [typed(3, True)])
    assert trial_counts(records) == {1: (4, 2), 2: (4, 4), 3: (1, 1)}
    two = pass_k(records, 2)
    assert two.tasks == 2
    assert two.pass_hat_k == pytest.approx((1 / 6 + 1) / 2)   # 7/12
    assert two.pass_at_k == pytest.approx((5 / 6 + 1) / 2)    # 11/12
    one = pass_k(records, 1)
    assert one.tasks == 3 and one.pass_at_k == one.pass_hat_k == pytest.approx((2 / 4 + 1 + 1) / 3)
    assert pass_k(records, 5).tasks == 0 and pass_k(records, 5).pass_at_k is None


def test_unanimity_ignores_unparsable_votes_and_errors() -> None:
    def votes(*verdicts: bool | None) -> list[dict]:
        return [{"is_correct": v, "feedback": "", "attempts": 1} for v in verdicts]

    records = [typed(1, True, votes=votes(True, True, True)),      # unanimous
               typed(2, True, votes=votes(True, False, True)),     # split
               typed(3, True, votes=votes(True, None, True)),      # two parsable, agreeing: unanimous
               typed(4, True, votes=votes(True, None, None)),      # one parsable vote: not judged
               typed(5, True, votes=[]),                           # no votes: not judged
               typed(6, None, votes=votes(False, False))]          # an error line: not evaluated
    u = unanimity(records)
    assert (u.unanimous, u.judged) == (2, 3) and u.share == pytest.approx(2 / 3)


def test_breakdowns_count_errors_apart() -> None:
    records = [typed(1, True, category=HEALTH, difficulty_level=1, domain="Pharmacy"),
               typed(2, False, category=HEALTH, difficulty_level=2, domain="Pharmacy"),
               typed(3, None, category=TRANSPORT, difficulty_level=2, domain="Warehousing"),
               typed(4, True, category=TRANSPORT, difficulty_level=10, domain="Warehousing"),
               typed(5, True, category=TECH, difficulty_level=3, domain="Networks")]
    by_category = breakdown(records, "category")
    assert list(by_category) == [HEALTH, TECH, TRANSPORT]
    assert (by_category[HEALTH].passed, by_category[HEALTH].evaluated, by_category[HEALTH].errors) == (1, 2, 0)
    assert (by_category[TRANSPORT].passed, by_category[TRANSPORT].evaluated,
            by_category[TRANSPORT].errors) == (1, 1, 1)
    # The same interval as the run's completion, over the category's own results.
    assert (by_category[HEALTH].low, by_category[HEALTH].high) == pytest.approx(wilson(1, 2))
    by_difficulty = breakdown(records, "difficulty_level")
    assert list(by_difficulty) == ["1", "2", "3", "10"]  # numeric order, not text order
    assert by_difficulty["2"].rate == 0.0 and by_difficulty["2"].errors == 1
    assert breakdown(records, "domain")["Warehousing"].rate == 1.0


def test_latest_record_per_task_and_trial(tmp_path: Path) -> None:
    # Task 1 trial 0 errored, then was retried; trial 1 passed; task 2 has no trial field (trial 0).
    run = write_run(tmp_path, "r", [result(1, None, trial=0), result(1, True, trial=1),
                                    result(1, False, trial=0), result(2, True)])
    results = load_run(run).results
    assert sorted((r.task_id, r.trial, r.is_correct) for r in results) == [
        (1, 0, False), (1, 1, True), (2, 0, True)]


def test_run_stats(tmp_path: Path) -> None:
    run = load_run(write_run(tmp_path, "gpt__sim__E0", [result(1, True), result(2, False), result(3, None)]))
    stats = run_stats(run)
    assert (stats.name, stats.agent_model, stats.world_model, stats.env_mode) == ("gpt__sim__E0", "A", "sim", "E0")
    assert (stats.completion.passed, stats.completion.evaluated, stats.errors, stats.trials) == (1, 2, 1, 1)
    assert stats.pass_k == []  # no repeated trials
