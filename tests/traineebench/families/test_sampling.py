"""Every family's parameter sampler (the paper's Day 2: the same tasks, other parameters) against the reference's:
the values below are read from the reference's samplers (task_hub.py and each family's generator.py), and a
sampled argument may take no other; over enough seeds each is drawn, each generates into a day, and the same seed
draws the same arguments."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from occubench.traineebench.families import MODULES, family
from occubench.traineebench.family import Day
from tests.traineebench.families import test_data_completion, test_kb_fix, test_resume_select, test_transactions
from tests.traineebench.families.test_meeting_attend import meeting_day

DEPARTMENTS = {"Engineering", "Sales_1", "Sales_2", "Sales_3", "Marketing", "Product", "Human Resources", "Finance"}
SALES = {"Sales_1", "Sales_2", "Sales_3"}
DOMAINS = {"sales": {"quarter_from_months", "qoq_rate"}, "transactions": {"tax_fee", "total_from_items"},
           "inventory": {"ending_from_flow", "daily_interpolation"},
           "finance": {"account_balance_from_details", "depreciation_straight_line"},
           "logistics": {"eta_distance_sla", "segment_time_sum"}, "web": {"rolling_avg", "funnel"}}
SALES_TYPES = {  # each task type's parameters, as the reference's sampler gives them
    "top_sales_employee": {"department"}, "sales_statistics": {"department"},
    "cross_depts_extreme_employee": {"departments", "mode"}, "per_dept_extreme_employee": {"departments", "mode"},
    "per_dept_avg_sales": {"departments", "quarter"}, "per_dept_top_n": {"departments", "n"},
    "cross_depts_top_n": {"departments", "n"}, "dept_person_qoq_count": {"department", "quarter", "direction"},
    "all_depts_qoq_count": {"quarter", "direction"}}
ATTENDANCE_TYPES = {"late_early_employee": {"mode"}, "top_percent_employees": {"percent", "metric"},
                    **{kind: set() for kind in ("attendance_statistics", "avg_late_early_days", "has_late_or_early",
                                                "total_absence_days", "average_overtime_hours",
                                                "employees_with_most_remote_days",
                                                "employees_with_perfect_attendance")}}
METRICS = ["interest_score", "cost_per_person", "total_travel_distance", "overall_score"]
HALF_HOURS = {0.5, 1.0, 1.5, 2.0}

#: Each family's arguments, by their path (a list of names as `[]`, a list of such lists by its index), and the
#: values the reference's sampler draws each from.
REFERENCE: dict[str, dict[str, set[Any]]] = {
    "Transaction Data Review": {"num_normal_transactions": {2, 3, 4, 5}, "num_abnormal_transactions": {0, 1, 2}},
    "Meeting Attend": {
        "meeting_start_time": {"2025-10-01T09:00:00", "2025-10-01T09:30:00", "2025-10-01T10:00:00"},
        "meeting_last_time": HALF_HOURS, "task_type": {"none", "write", "sum", "check", "check_sum"},
        "task_level": {1, 2, 3}},
    "Meeting Book": {
        "task_type": {"department", "manager"},
        "start_time": {"2025-10-01T13:00:00", "2025-10-01T14:30:00", "2025-10-01T15:00:00"},
        "last_time": HALF_HOURS, "conflict_nums": {1, 2, 3}},
    "Website Monitor": {},
    "Data Completion": {"domain": set(DOMAINS), "task_type": set().union(*DOMAINS.values()),
                        "difficulty": {"very_easy", "easy", "medium", "hard", "very_hard"}},
    "Sales Analysis": {"task_type": set(SALES_TYPES), "task_params.department": SALES,
                       "task_params.departments[]": SALES, "task_params.mode": {"top", "bottom"},
                       "task_params.n": {1, 2, 3}, "task_params.quarter": {1, 2, 3, 4},
                       "task_params.direction": {"up", "down"}},
    "ADs Strategy Plan": {
        "task_params.city": {"Shanghai", "Beijing", "Guangzhou", "Shenzhen", "Hangzhou", "Chengdu", "Wuhan",
                             "Nanjing", "Chongqing", "XiAn"},
        "task_params.difficulty": {"very easy", "easy", "medium", "hard", "very hard"}},
    "KB Link Fix": {"task_params.difficulty": {"easy", "medium", "hard"}},
    "Resume Select": {
        "requirement[0][]": {"Master's", "Bachelor's", "Doctoral"},
        "requirement[1][]": {"Electrical Engineering", "Software Engineering", "Data Science", "Computer Science",
                             "Mathematics"},
        "requirement[2][]": {"1 year", "3 years", "5 years"},
        "requirement[3][]": {"python", "c++", "java", "redis", "mongodb", "kubernetes", "deep learning",
                             "reinforcement learning", "data visualization", "data analysis"},
        "position[]": {"Software Engineer", "Software Developer", "Algorithm Researcher"},
        "number_of_resumes": {6, 9, 12}},
    "Attendance Statistics": {
        "task_type_name": set(ATTENDANCE_TYPES), "task_params.department": DEPARTMENTS | {"all"},
        "task_params.mode": {"most_late", "least_late", "most_early", "least_early"},
        "task_params.percent": {5, 10, 15, 20}, "task_params.metric": {"late", "early"},
        "difficulty.level": {"L1", "L2", "L3", "L4", "L5"}},
    "Event Planning": {
        "task_type_name": {"general_event_planning", "optimal_event_planning"},
        "task_params.department": DEPARTMENTS, "task_params.n_loc": {6}, "task_params.n_res": {10},
        "task_params.plan.morning": {"Riverside Wetland"}, "task_params.plan.lunch": {"Maple · Hotpot"},
        "task_params.plan.afternoon": {"Stonegate Eco Park"}, "task_params.metrics[]": set(METRICS),
        "task_params.end_time": {"17:30", "18:00", "19:00"},
        "task_params.mode": {"highest_interest", "lowest_cost", "shortest_distance", "highest_score"}},
}
#: Enough seeds for every value to be drawn (the rarest, a single metric at level A1 or B1, is 1 in 24).
SEEDS = range(2000)


def flat(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """The (path, value) of each single value in ``value``."""
    if isinstance(value, dict):
        return [pair for key, item in value.items() for pair in flat(item, f"{path}.{key}" if path else key)]
    if isinstance(value, list):
        record = all(isinstance(item, list) for item in value)  # the résumé requirement: four lists in order
        return [pair for i, item in enumerate(value) for pair in flat(item, f"{path}[{i if record else ''}]")]
    return [(path, value)]


def drawn(name: str, seed: int) -> dict[str, Any]:
    return family(name).sample_arguments(random.Random(seed))


def _structure(name: str, args: dict[str, Any]) -> None:
    """What the reference's samplers tie together: a task type and its parameters, how many of a list."""
    params = args.get("task_params", {})
    if name == "Data Completion":
        assert args["task_type"] in DOMAINS[args["domain"]]
    elif name == "Sales Analysis":
        assert set(params) == SALES_TYPES[args["task_type"]]
        departments = params.get("departments", ["Sales_1", "Sales_2"])
        assert len(set(departments)) == len(departments) in (2, 3)
        assert params.get("quarter", 2) >= 2 or args["task_type"] == "per_dept_avg_sales"  # growth needs a Q before
    elif name == "Attendance Statistics":
        assert set(params) == {"department"} | ATTENDANCE_TYPES[args["task_type_name"]]
    elif name == "Event Planning":
        optimal = args["task_type_name"] == "optimal_event_planning"
        assert ("mode" in params) == optimal and not ({"plan", "metrics"} & set(params) and optimal)
        metrics = params.get("metrics", METRICS)
        assert metrics == METRICS or (len(set(metrics)) == len(metrics) <= 3 and "overall_score" not in metrics)
        assert "end_time" not in params or metrics == METRICS
    elif name == "Resume Select":
        requirement = args["requirement"]
        assert [len(item) for item in requirement[:3]] == [1, 1, 1] and len(args["position"]) == 1
        assert len(set(requirement[3])) == len(requirement[3]) in (1, 2, 3)


@pytest.mark.parametrize("name", list(MODULES))
def test_only_the_references_values_are_drawn_and_every_one_of_them_is(name: str) -> None:
    seen: dict[str, set[Any]] = {}
    for seed in SEEDS:
        args = drawn(name, seed)
        assert json.loads(json.dumps(args, allow_nan=False)) == args  # a config's arguments: JSON as they are
        _structure(name, args)
        for path, value in flat(args):
            seen.setdefault(path, set()).add(value)
    assert seen == REFERENCE[name]


@pytest.mark.parametrize("name", list(MODULES))
def test_the_same_seed_draws_the_same_arguments_from_its_own_random_source(name: str) -> None:
    random.seed(1)
    untouched = random.random()
    random.seed(1)
    assert [drawn(name, seed) for seed in range(20)] == [drawn(name, seed) for seed in range(20)]
    assert random.random() == untouched  # the global random source is never drawn from
    if REFERENCE[name]:
        assert len({json.dumps(drawn(name, seed), sort_keys=True) for seed in range(20)}) > 1


def sampling_day(root: Path, seed: int) -> Day:
    """A day of the reference's company, with stand-ins for every reference file a family reads."""
    day = meeting_day(root, seed)
    for stand_in in (test_transactions.stand_in, test_data_completion.stand_in, test_kb_fix.stand_in,
                     test_resume_select.with_reference):
        stand_in(day)
    (day.reference / "schemas/tasks/sales/templates").mkdir(parents=True)
    (day.reference / "schemas/tasks/sales/templates/manuals_for_sales_data_analysis.md").write_text("stand-in")
    return day


def covering_seeds(name: str, only: str | None = None) -> list[int]:
    """Seeds whose arguments, together, draw every value and every combination of parameters at least once (or,
    with ``only``, every value of that one)."""
    covered: set[Any] = set()
    chosen = []
    for seed in SEEDS:
        pairs = flat(drawn(name, seed))
        new = ({pair for pair in pairs if pair[0] == only} if only else
               {*pairs, frozenset(path for path, _ in pairs)}) - covered
        if new:
            chosen.append(seed)
            covered |= new
    return chosen


def generates(name: str, seeds: list[int], root: Path) -> None:
    for seed in seeds:
        day = sampling_day(root / str(seed), seed)
        task = family(name).generate(day, **drawn(name, seed))
        assert task.family == name and task.description


ADS = "ADs Strategy Plan"  # each generation draws three heatmaps (about a second)


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow) if name == ADS else name
                                  for name in MODULES])
@pytest.mark.slow
def test_sampled_arguments_generate_into_a_day(name: str, tmp_path: Path) -> None:
    generates(name, covering_seeds(name), tmp_path)


@pytest.mark.slow
def test_a_sampled_ads_plan_of_each_difficulty_generates(tmp_path: Path) -> None:
    generates(ADS, covering_seeds(ADS, "task_params.difficulty"), tmp_path)
