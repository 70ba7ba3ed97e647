"""The company of a Trainee-Bench day, built as the reference builds it: executives by the company's size, then
the other staff spread over departments by fixed shares, each department with managers by its span of control and
its individual contributors spread over their positions, every share rounded by largest remainders; names drawn
without repetition from first- and last-name pools. Only the seeded random source decides the names and who holds
which position."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass

from occubench.workplace.people import AGENT, Colleague, Company

#: The reference's company size.
EMPLOYEES = 50
#: Executive positions and the company size from which each exists.
EXECUTIVES = (("Chief Executive Officer (CEO)", 1), ("Chief Technology Officer (CTO)", 5),
              ("Chief Operating Officer (COO)", 15), ("Chief Financial Officer (CFO)", 25))
EXECUTIVE = "Executive"


@dataclass(frozen=True)
class Department:
    share: float
    manager: str
    #: Individual contributors per manager.
    span: int
    positions: Mapping[str, float]


DEPARTMENTS: Mapping[str, Department] = {
    "Engineering": Department(0.41, "Engineering Manager", 8, {
        "Senior Software Engineer": 0.25, "Software Engineer": 0.60, "QA Engineer": 0.10, "DevOps Specialist": 0.05}),
    **{f"Sales_{n}": Department(0.06, "Sales Manager", 7, {"Account Executive": 0.40, "Sales Representative": 0.60})
       for n in (1, 2, 3)},
    "Marketing": Department(0.14, "Marketing Manager", 5, {
        "SEO Specialist": 0.30, "Content Creator": 0.50, "Social Media Planner": 0.20}),
    "Product": Department(0.11, "Product Manager", 6, {"Product Designer": 0.30, "UX/UI Designer": 0.70}),
    "Human Resources": Department(0.07, "HR Manager", 10, {"Recruiter": 0.50, "HR Generalist": 0.50}),
    "Finance": Department(0.09, "Finance Manager", 6, {"Accountant": 0.50, "Financial Analyst": 0.50}),
}
FIRST_NAMES = ("James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth David Barbara Richard Susan "
               "Joseph Jessica Thomas Sarah Charles Karen Christopher Nancy Daniel Lisa Matthew Betty Anthony "
               "Margaret Mark Sandra Emily Peter Ashley Steven Kimberly Andrew Donna Joshua Michelle Brian Kevin "
               "Laura Jason Amy Jeff Rebecca Gary Sharon").split()
LAST_NAMES = ("Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez "
              "Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Lewis "
              "Robinson Walker Young Allen King Wright Scott Green Baker Adams Nelson").split()


def by_largest_remainder(total: int, shares: Mapping[str, float]) -> dict[str, int]:
    """``total`` items spread over ``shares`` in proportion, the rounding left-overs going to the largest
    fractional parts (ties to the earlier key)."""
    whole = sum(shares.values())
    if total <= 0 or whole <= 0:
        return dict.fromkeys(shares, 0)
    exact = {key: share / whole * total for key, share in shares.items()}
    counts = {key: int(value) for key, value in exact.items()}
    order = sorted(exact, key=lambda key: exact[key] - counts[key], reverse=True)
    for key in order[:total - sum(counts.values())]:
        counts[key] += 1
    return counts


def positions(size: int) -> list[tuple[str, str]]:
    """The (department, position) of each of ``size`` employees, in the company's order."""
    slots = [(EXECUTIVE, title) for title, least in EXECUTIVES if size >= least]
    shares = {name: department.share for name, department in DEPARTMENTS.items()}
    for name, headcount in by_largest_remainder(size - len(slots), shares).items():
        if not headcount:
            continue
        department = DEPARTMENTS[name]
        managers = math.ceil(headcount / (department.span + 1)) if headcount > department.span else 1
        slots += [(name, department.manager)] * managers
        for position, count in by_largest_remainder(headcount - managers, department.positions).items():
            slots += [(name, position)] * count
    return slots


def make_company(rng: random.Random, size: int = EMPLOYEES) -> Company:
    """A company of ``size`` (at least 10) with names drawn by ``rng``; nobody is named as the agent is."""
    if size < 10:
        raise ValueError(f"a company needs at least 10 employees, not {size}")
    slots = positions(size)
    names = [f"{first} {last}" for first, last in itertools.product(FIRST_NAMES, LAST_NAMES)
             if f"{first} {last}" != AGENT]
    chosen = rng.sample(names, len(slots))
    return Company([Colleague(name, position, department) for name, (department, position) in zip(chosen, slots,
                                                                                                   strict=True)])
