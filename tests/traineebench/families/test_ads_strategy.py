"""ADs Strategy Plan against the reference's scoring (full 13): handbook 1, plan file 1, fields 1, listed
channels 1, total cost 2, total exposure 2, optimal set 5; no JSON at all scores 0."""

from __future__ import annotations

import csv
import io
import itertools
import json
from pathlib import Path

import pytest
from matplotlib.image import imread

from occubench.errors import ConfigError
from occubench.traineebench.families.ads_strategy import COLOURS, FAMILY, best_plan, png
from occubench.traineebench.family import Day, Outcome, TaskSpec
from tests.traineebench.conftest import make_day

EASY = {"task_params": {"city": "Shenzhen", "difficulty": "very_easy"}}
PLAN = "ads_strategy_plan_Shenzhen.json"


def channels(day: Day) -> dict[str, dict[str, str]]:
    with open(day.cloud_disk / "ads_strategy" / "channels.csv", newline="") as handle:
        return {row["id"]: row for row in csv.DictReader(handle)}


def plan(task: TaskSpec, chosen: list[str], cost_off: float = 1.0, exposure_off: float = 1.0) -> dict:
    costs = sum(task.check["channels"][c][0] for c in chosen)
    exposure = sum(task.check["channels"][c][1] for c in chosen)
    return {"selected_channels": chosen, "total_cost": costs * cost_off, "total_exposure": exposure * exposure_off}


def scored(task: TaskSpec, day: Day, answer: object, handbook: bool = True, where: str = PLAN) -> tuple[float, int]:
    if handbook:
        (day.workspace / "ads_strategy_handbook.md").write_bytes(
            (day.cloud_disk / "ads_strategy" / "ads_strategy_handbook.md").read_bytes())
    if answer is not None:
        (day.workspace / where).parent.mkdir(parents=True, exist_ok=True)
        (day.workspace / where).write_text(answer if isinstance(answer, str) else json.dumps(answer))
    score = FAMILY.evaluate(task, Outcome(day.workspace))
    assert 0 <= score.points <= score.full
    assert (score.points == score.full) == (not score.notes)
    return score.points, score.full


@pytest.fixture
def task(day: Day) -> TaskSpec:
    return FAMILY.generate(day, **EASY)


def test_the_files_rules_and_numbers_the_check_needs(day: Day, task: TaskSpec) -> None:
    folder = day.cloud_disk / "ads_strategy"
    assert sorted(p.name for p in folder.iterdir()) == [
        "ads_strategy_handbook.md", "channels.csv", "target_user_density_college_students_18_25.png",
        "target_user_density_seniors_60_plus.png", "target_user_density_young_professionals_25_35.png"]
    rows = channels(day)
    assert sorted(rows) == sorted(task.check["channels"]) and len(rows) == 8 and task.check["budget"] == 7000
    for name, row in rows.items():
        cost, exposure = task.check["channels"][name]
        assert cost == int(row["cost"])
        # the exposure holds a density of 0 to 5 read off the heatmap: geo weight 0.5, 0.6, ... 1.0
        geo = exposure / (int(row["base_effect"]) * float(row["audience_fit"]))
        assert min(abs(geo - (0.5 + 0.1 * density)) for density in range(6)) < 1e-3
    assert PLAN in task.description and "$7,000" in task.description
    for employee in day.company.in_department("Marketing"):
        assert "CloudDisk:ads_strategy/ads_strategy_handbook.md" in day.company.rules[employee.name][0]


def test_the_optimum_is_the_best_subset_within_the_budget(task: TaskSpec) -> None:
    items = task.check["channels"]
    best = max((subset for n in range(len(items) + 1) for subset in itertools.combinations(sorted(items), n)
                if sum(items[c][0] for c in subset) <= 7000), key=lambda s: sum(items[c][1] for c in s))
    assert task.check["optimal"] == list(best)
    knapsack = [{"id": "a", "cost": 5, "effective_exposure": 10.0}, {"id": "b", "cost": 4, "effective_exposure": 7.0},
                {"id": "c", "cost": 3, "effective_exposure": 7.0}]
    assert best_plan(knapsack, 7) == ["b", "c"] and best_plan(knapsack, 2) == []


def test_the_heatmap_shows_each_density_in_its_own_colour() -> None:
    grid = [[0, 1, 2], [3, 4, 5], [5, 5, 5]]
    pixels = imread(io.BytesIO(png(grid)))[:, :, :3].reshape(-1, 3)
    seen = {tuple(round(float(v) * 255) for v in pixel) for pixel in pixels}
    for colour in COLOURS:
        assert tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5)) in seen


def test_the_optimal_plan_with_right_totals_earns_full_points(day: Day, task: TaskSpec) -> None:
    assert scored(task, day, plan(task, task.check["optimal"])) == (13, 13)


def test_a_plan_saved_in_a_folder_and_totals_as_strings_count(day: Day, task: TaskSpec) -> None:
    answer = plan(task, task.check["optimal"])
    answer["total_cost"] = str(answer["total_cost"])
    assert scored(task, day, answer, where=f"out/{PLAN}") == (13, 13)


def test_partial_plans_earn_the_references_partial_points(day: Day, task: TaskSpec) -> None:
    optimal = task.check["optimal"]
    worse = optimal[:-1]
    assert scored(task, day, plan(task, worse), handbook=False) == (7, 13)
    assert scored(task, day, plan(task, worse)) == (8, 13)
    assert scored(task, day, plan(task, optimal, cost_off=1.02)) == (11, 13)
    assert scored(task, day, plan(task, optimal, exposure_off=1.06)) == (11, 13)
    assert scored(task, day, plan(task, optimal, 1.5, 1.5)) == (9, 13)
    assert scored(task, day, {**plan(task, optimal), "selected_channels": [*optimal, "CH999"]}) == (3, 13)
    assert scored(task, day, {"channels": optimal}) == (4, 13)
    assert scored(task, day, {**plan(task, optimal), "selected_channels": optimal[0]}) == (2, 13)


def test_without_a_json_plan_nothing_counts(day: Day, task: TaskSpec) -> None:
    assert scored(task, day, None) == (0, 13)
    assert scored(task, day, "{}") == (0, 13)
    assert scored(task, day, "not json") == (0, 13)


def test_hostile_plans_are_scored_never_above_full(day: Day, task: TaskSpec) -> None:
    optimal = task.check["optimal"]
    nan = json.dumps({**plan(task, optimal), "total_cost": float("nan"), "total_exposure": float("inf")})
    assert "NaN" in nan and scored(task, day, nan) == (9, 13)
    assert scored(task, day, {**plan(task, optimal), "total_cost": 10 ** 400}) == (4, 13)
    assert scored(task, day, {**plan(task, optimal), "selected_channels": [[1], {"a": 2}]}) == (3, 13)
    assert scored(task, day, [1, 2]) == (4, 13)
    assert scored(task, day, "[" * 100_000 + "]" * 100_000) == (0, 13)
    assert scored(task, day, json.dumps(plan(task, optimal)) + " " * 5_000_000) == (13, 13)


def test_the_configs_very_easy_is_generated_at_medium_as_the_reference_does(day: Day) -> None:
    task = FAMILY.generate(day, task_params={"city": "Shanghai", "difficulty": "very easy"})
    assert len(task.check["channels"]) == 28 and task.check["budget"] == 10000


@pytest.mark.slow
def test_the_same_seed_gives_the_same_files(tmp_path: Path) -> None:
    made = []
    for run in ("one", "two"):
        day = make_day(tmp_path / run, seed=5)
        task = FAMILY.generate(day, task_params={"city": "XiAn", "difficulty": "hard"})
        made.append((task, {p.name: p.read_bytes() for p in (day.cloud_disk / "ads_strategy").iterdir()}))
    assert made[0] == made[1]


@pytest.mark.parametrize(("arguments", "named"), [
    ({"task_params": "Beijing"}, "task_params"),
    ({"task_params": {"city": "Beijing"}, "seed": 1}, "seed"),
    ({"task_params": {"town": "Beijing"}}, "town"),
    ({"task_params": {"difficulty": "extreme"}}, "task_params.difficulty"),
    ({"task_params": {"city": "../../etc"}}, "task_params.city"),
    ({"task_params": {"budget": "7000"}}, "task_params.budget"),
    ({"task_params": {"budget": 10 ** 9}}, "task_params.budget"),
    ({"task_params": {"num_channels": 2.5}}, "task_params.num_channels"),
    ({"task_params": {"cost_min": 900, "cost_max": 800}}, "task_params.cost_min"),
    ({"task_params": {"channel_mix": "radio"}}, "task_params.channel_mix"),
])
def test_bad_arguments_are_config_errors_naming_the_argument(day: Day, arguments: dict, named: str) -> None:
    with pytest.raises(ConfigError, match=repr(named)):
        FAMILY.generate(day, **arguments)
