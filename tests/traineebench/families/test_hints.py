"""Every family's three tiers of guidance (the paper's human-guidance experiment, Figure 4), for tasks generated with
arguments as the reference's shipped configs give them: three distinct tiers, the plan longer than the insight, and
no answer in any of them: none of the values the family's evaluate compares (ground-truth numbers, expected names
and IDs, the right choice) appears in a tier as a whole token or run of tokens. Also every family's Table 4
difficulty."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from occubench.traineebench.families import MODULES, family, meeting_attend
from occubench.traineebench.family import TaskSpec
from tests.traineebench.families.test_sampling import sampling_day

PLAN = {"morning": "Riverside Wetland", "lunch": "Maple · Hotpot", "afternoon": "Stonegate Eco Park"}
ALL_METRICS = ["interest_score", "cost_per_person", "total_travel_distance", "overall_score"]
#: (family, arguments), each as an entry of traineebench_config.json has them (the top-percent question, which
#: that file never asks, as traineebench_cl_config.json does), covering every branch the hints take.
CASES: list[tuple[str, dict[str, Any]]] = [
    ("Transaction Data Review", {"num_normal_transactions": 3, "num_abnormal_transactions": 2}),
    ("Transaction Data Review", {"num_normal_transactions": 5, "num_abnormal_transactions": 1}),
    *[("Meeting Attend", {"meeting_start_time": f"2025-10-01T{start}:00", "meeting_last_time": hours,
                          "task_type": kind, "task_level": level})
      for start, hours, kind, level in (("09:30", 1.0, "none", 1), ("09:00", 1.0, "write", 2), ("10:00", 0.5, "sum", 1),
                                        ("10:00", 2.0, "check", 1), ("09:30", 0.5, "check_sum", 3))],
    *[("Meeting Book", {"task_type": kind, "start_time": f"2025-10-01T{start}:00", "last_time": 1.0,
                        "conflict_nums": conflicts})
      for kind, start, conflicts in (("department", "13:00", 2), ("department", "14:30", 3), ("manager", "15:00", 2),
                                     ("manager", "13:00", 3))],
    ("Website Monitor", {}),
    *[("Data Completion", {"domain": domain, "task_type": kind, "difficulty": difficulty})
      for domain, kind, difficulty in (("transactions", "tax_fee", "medium"),
                                       ("logistics", "eta_distance_sla", "very_easy"),
                                       ("sales", "quarter_from_months", "hard"), ("web", "rolling_avg", "easy"),
                                       ("finance", "account_balance_from_details", "medium"),
                                       ("inventory", "ending_from_flow", "medium"),
                                       ("transactions", "total_from_items", "medium"))],
    *[("Sales Analysis", {"task_type": kind, "task_params": params}) for kind, params in (
        ("all_depts_qoq_count", {"quarter": 4, "direction": "up"}),
        ("cross_depts_extreme_employee", {"departments": ["Sales_2", "Sales_3"], "mode": "bottom"}),
        ("cross_depts_top_n", {"departments": ["Sales_1", "Sales_3", "Sales_2"], "n": 3}),
        ("dept_person_qoq_count", {"department": "Sales_3", "quarter": 2, "direction": "down"}),
        ("per_dept_avg_sales", {"quarter": 2, "departments": ["Sales_1", "Sales_2"]}),
        ("per_dept_extreme_employee", {"departments": ["Sales_2", "Sales_1"], "mode": "top"}),
        ("per_dept_top_n", {"departments": ["Sales_1", "Sales_3"], "n": 2}),
        ("sales_statistics", {"department": "Sales_2"}),
        ("top_sales_employee", {"department": "Sales_3"}))],
    ("ADs Strategy Plan", {"task_params": {"city": "Beijing", "difficulty": "very easy"}}),
    ("ADs Strategy Plan", {"task_params": {"city": "XiAn", "difficulty": "hard"}}),
    *[("KB Link Fix", {"task_params": {"difficulty": level}}) for level in ("easy", "medium", "hard")],
    ("Resume Select", {"requirement": [["Master's"], ["Data Science"], ["5 years"], ["python"]],
                       "position": ["Software Engineer"], "number_of_resumes": 12}),
    *[("Attendance Statistics", {"task_type_name": kind, "task_params": params, "difficulty": {"level": level}})
      for kind, params, level in (
          ("attendance_statistics", {"department": "all"}, "L5"),
          ("average_overtime_hours", {"department": "Sales_1"}, "L5"),
          ("avg_late_early_days", {"department": "Sales_2"}, "L1"),
          ("employees_with_most_remote_days", {"department": "Product"}, "L4"),
          ("employees_with_perfect_attendance", {"department": "Finance"}, "L2"),
          ("has_late_or_early", {"department": "all"}, "L3"),
          ("late_early_employee", {"mode": "most_early", "department": "Engineering"}, "L4"),
          ("top_percent_employees", {"percent": 20, "metric": "late", "department": "all"}, "L3"),
          ("total_absence_days", {"department": "all"}, "L1"))],
    *[("Event Planning", {"task_type_name": kind, "task_params": {"n_loc": 6, "n_res": 10, **params}})
      for kind, params in (
          ("general_event_planning", {"department": "Engineering", "plan": PLAN, "metrics": ALL_METRICS,
                                      "end_time": "17:30"}),
          ("general_event_planning", {"department": "Marketing", "plan": PLAN,
                                      "metrics": ["interest_score", "total_travel_distance", "cost_per_person"]}),
          ("general_event_planning", {"department": "Engineering",
                                      "metrics": ["interest_score", "total_travel_distance"]}),
          ("optimal_event_planning", {"department": "Marketing", "mode": "lowest_cost"}),
          ("optimal_event_planning", {"department": "Sales_3", "mode": "highest_score"}))],
]
#: Characters a token is stripped of at either end: punctuation and quotes around a word, not inside it.
EDGES = ".,;:!?()[]{}\"'`"


def tokens(text: str) -> list[str]:
    return [t for t in (word.strip(EDGES) for word in text.lower().split()) if t]


def appears(value: str, text: str) -> bool:
    """Whether ``value``'s tokens run together in ``text``: "09:30" holds no "30", "Ann Lee" is found in "ask
    Ann Lee."."""
    wanted, found = tokens(value), tokens(text)
    return bool(wanted) and any(found[i:i + len(wanted)] == wanted for i in range(len(found) - len(wanted) + 1))


def spellings(value: Any) -> set[str]:
    """How an answer could be written: a truth value as JSON writes it, a number as it is and to two decimals."""
    if isinstance(value, bool):
        return {str(value).lower()}
    if isinstance(value, float):
        return {str(value), f"{value:.2f}", *([str(int(value))] if value.is_integer() else [])}
    return {str(value)} if str(value) else set()


def leaves(value: Any, skip: tuple[str, ...] = ()) -> Iterator[Any]:
    """The single values of a nested answer (a mapping's values, not its keys; ``skip`` keys left out)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in skip:
                yield from leaves(item, skip)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from leaves(item, skip)
    else:
        yield value


def _meeting_attend(task: TaskSpec) -> list[Any]:
    """Every request, kept or not, and the totals the task type asks for."""
    wanted = meeting_attend.expected(task)
    statistics = [sum(entry["total"] for entry in wanted)] if wanted and "total" in wanted[0] else []
    return [*leaves(task.check["requests"], skip=("reasonable",)), *leaves(wanted), *statistics]


def _ads(task: TaskSpec) -> list[Any]:
    """The best plan's channels and its totals."""
    best, channels = task.check["optimal"], task.check["channels"]
    return [*best, sum(channels[c][0] for c in best), sum(channels[c][1] for c in best)]


def _event(task: TaskSpec) -> list[Any]:
    """The shared window's days; the best itineraries and their value, or the given itinerary's values."""
    check = task.check
    found: list[Any] = list(check["common_period"])
    if check["task_type"] == "optimal_event_planning":
        metric = {"highest_interest": "interest_score", "lowest_cost": "cost_per_person",
                  "shortest_distance": "total_travel_distance", "highest_score": "overall_score"}[check["mode"]]
        for best in check["plans"]:
            found += [*best["plan"].values(), best["metrics"][metric]]
    elif check["plan"]:  # without one the agent's own choice is scored, whatever it is
        metrics = next(p["metrics"] for p in check["plans"] if p["plan"] == check["plan"])
        found += [metrics[m] for m in check["metrics"]]
        if check["end_time"]:
            found += [metrics["end_time"], metrics["end_time"] <= check["end_time"]]
    return found


#: By family, the values its evaluate compares that the agent is not told: what it must find out or work out.
ANSWERS: dict[str, Callable[[TaskSpec], list[Any]]] = {
    "Transaction Data Review": lambda task: list(task.check["abnormal_suppliers"]),
    "Meeting Attend": _meeting_attend,
    "Meeting Book": lambda task: [*task.check["attending"], *task.check["busy"]],
    "Website Monitor": lambda task: [task.check[key] for key in ("page", "code", "engineer")],
    "Data Completion": lambda task: [*task.check["expected"].values(),
                                     *([task.check["ask"]["keyword"]] if task.check["ask"] else [])],
    # the departments are the task's own parameters
    "Sales Analysis": lambda task: list(leaves(task.check["expected"], skip=("department",))),
    "ADs Strategy Plan": _ads,
    "KB Link Fix": lambda task: [link[key] for article in task.check["articles"] for link in article["broken_links"]
                                 for key in ("old_id", "new_id")],
    "Resume Select": lambda task: list(task.check["answer"]),
    "Attendance Statistics": lambda task: [v for v in leaves(task.check["expected"]) if v != task.check["department"]],
    "Event Planning": _event,
}


#: Cases whose answer holds no value to give away: attending on time is all a "none" meeting asks (its time is in
#: the task), and a perfect month is so rare under the punch chances that the list of them is empty.
NOTHING_HIDDEN = {"Meeting Attend-none", "Attendance Statistics-employees_with_perfect_attendance-Finance"}


def case_id(case: tuple[str, dict[str, Any]]) -> str:
    name, arguments = case
    params = arguments.get("task_params") or {}
    detail = (arguments.get("task_type_name") or arguments.get("task_type") or arguments.get("domain")
              or params.get("difficulty") or "")
    return f"{name}-{detail}-{params.get('mode') or params.get('department') or ''}".rstrip("-")


@pytest.mark.parametrize("case", CASES, ids=[case_id(case) for case in CASES])
def test_three_tiers_growing_stronger_and_none_gives_an_answer_away(case: tuple[str, dict[str, Any]],
                                                                    tmp_path: Path) -> None:
    name, arguments = case
    task = family(name).generate(sampling_day(tmp_path, 3), **arguments)
    tiers = family(name).hints(task)
    assert len(tiers) == 3 and all(isinstance(t, str) and t.strip() for t in tiers) and len(set(tiers)) == 3
    assert len(tiers[2]) > len(tiers[0])  # the plan says more than the insight
    hidden = ANSWERS[name](task)
    assert hidden or case_id(case) in NOTHING_HIDDEN
    for value in hidden:
        for spelling in spellings(value):
            for tier, text in enumerate(tiers, 1):
                assert not appears(spelling, text), f"tier {tier} of {name} gives away {spelling!r}: {text}"


def test_the_leak_check_reads_whole_tokens() -> None:
    assert appears("Ann Lee", "Then ask `Ann Lee`, the recruiter.") and appears("/blog", "the `/blog` page")
    assert not appears("30", "at 09:30 sharp") and not appears("Lee", "a leeway") and not appears("", "anything")
    assert spellings(2.0) == {"2.0", "2.00", "2"} and spellings(True) == {"true"}


def test_every_family_is_easy_or_hard_and_the_papers_two_guidance_cases_are_hard() -> None:
    levels = {name: family(name).difficulty for name in MODULES}
    assert set(levels.values()) == {"easy", "hard"}
    assert levels["ADs Strategy Plan"] == levels["Event Planning"] == "hard"
