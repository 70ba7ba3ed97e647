"""Completion with a bootstrap CI, breakdowns, judge unanimity, pass@k and pass^k, and trial-aware loading."""

from __future__ import annotations

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
from tests.report.conftest import HEALTH, TECH, TRANSPORT, result, typed, write_run


def test_ci_contains_the_rate_and_narrows_with_more_tasks() -> None:
    # 7 of 10 tasks pass, plus an error line that is counted apart: rate 7/10.
    records = [typed(i, i < 7) for i in range(10)] + [typed(10, None)]
    ci = completion_ci(records, seed=0)
    assert (ci.passed, ci.evaluated, ci.rate) == (7, 10, 0.7)
    assert 0.0 <= ci.low < 0.7 < ci.high <= 1.0
    assert completion_ci(records, seed=0) == ci  # seeded: the same interval every time
    # The same 70 % over 100 tasks is known far better: its interval lies strictly inside the 10-task one.
    many = completion_ci([typed(i, i % 10 < 7) for i in range(100)], seed=0)
    assert ci.low < many.low < 0.7 < many.high < ci.high


def test_ci_is_degenerate_when_all_or_none_pass() -> None:
    assert completion_ci([typed(i, True) for i in range(5)]).low == 1.0
    assert completion_ci([typed(i, True) for i in range(5)]).high == 1.0
    none = completion_ci([typed(i, False) for i in range(5)] + [typed(9, None)])
    assert (none.low, none.high, none.rate, none.evaluated) == (0.0, 0.0, 0.0, 5)
    empty = completion_ci([typed(1, None)])
    assert (empty.rate, empty.low, empty.high) == (None, None, None)


def test_ci_resamples_tasks_not_trials() -> None:
    # Task 0 passes both trials and task 1 fails both: any resample of tasks is all-pass, all-fail or half, so
    # every bootstrap rate is 0, 0.5 or 1 and the interval spans from 0 to 1. Resampling the four trials
    # independently would have produced 0.25 and 0.75 as well.
    records = [typed(t, t == 0, trial=k) for t in (0, 1) for k in (0, 1)]
    ci = completion_ci(records, resamples=500, seed=3)
    assert (ci.rate, ci.low, ci.high) == (0.5, 0.0, 1.0)


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
