"""A Trainee-Bench day to generate task families into: a small company with every department of the reference's
(and a manager in each), a synthetic stand-in for the reference's own files (tests add the files they need; the
real ones are downloaded, never committed), and a seeded random source."""

from __future__ import annotations

import random
from datetime import datetime
from pathlib import Path

import pytest

from occubench.traineebench.family import Company, Day, Employee

#: Departments as the reference's company has them, with a manager's and two other positions each.
DEPARTMENTS = {
    "Engineering": ("Engineering Manager", "Software Engineer", "QA Engineer"),
    "Sales_1": ("Sales Manager", "Account Executive", "Sales Representative"),
    "Sales_2": ("Sales Manager", "Account Executive", "Sales Representative"),
    "Sales_3": ("Sales Manager", "Account Executive", "Sales Representative"),
    "Marketing": ("Marketing Manager", "SEO Specialist", "Content Creator"),
    "Product": ("Product Manager", "Product Designer", "UX/UI Designer"),
    "HR": ("HR Manager", "Recruiter", "HR Generalist"),
    "Finance": ("Finance Manager", "Accountant", "Financial Analyst"),
}
START = datetime(2025, 10, 1, 8, 0)


def company() -> Company:
    return Company([Employee(f"{department} {position}", position, department)
                    for department, positions in DEPARTMENTS.items() for position in positions])


def make_day(root: Path, seed: int = 7) -> Day:
    """A fresh day under ``root`` (its workspace, cloud disk and reference folders made)."""
    folders = [root / "workspace", root / "cloud_disk", root / "reference"]
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
    return Day(folders[0], folders[1], company(), START, random.Random(seed), folders[2])


@pytest.fixture
def day(tmp_path: Path) -> Day:
    return make_day(tmp_path / "day")
