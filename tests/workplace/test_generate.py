"""Generation is rule-based and seeded: the same seed writes byte-identical files; days are valid."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from occubench.core.task import CATEGORY_ABBREVIATIONS
from occubench.workplace.generate import generate_day, generate_days, read_days, write_days
from occubench.workplace.model import Day
from occubench.workplace.plugin import LIBRARY, day_category, listing, planned
from occubench.workplace.suite import DaySuite
from occubench.workplace.templates import FAMILIES
from occubench.workplace.validate import validate_day


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_same_seed_same_bytes_other_seed_other_days(tmp_path: Path) -> None:
    write_days(generate_days(7, 12), tmp_path / "a")
    write_days(generate_days(7, 12), tmp_path / "b")
    write_days(generate_days(8, 12), tmp_path / "c")
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    assert _files(tmp_path / "a") != _files(tmp_path / "c")
    assert [d.to_json() for d in read_days(tmp_path / "a")] == [d.to_json() for d in generate_days(7, 12)]


def test_days_are_composite_and_names_unique() -> None:
    for day in generate_days(2, 40):
        families = {t.family for t in day.tasks}
        assert 2 <= len(families) <= 6 and 2 <= len(day.tasks) <= 6
        names = [c.name for c in day.colleagues]
        assert len(names) == len(set(names)), day.id
        assert len({t.id for t in day.tasks}) == len(day.tasks)


def test_day_two_keeps_the_families_with_new_parameters() -> None:
    first, second = generate_day(4, 3), generate_day(4, 3, phase=2)
    assert [t.family for t in first.tasks] == [t.family for t in second.tasks]
    assert first.drive != second.drive or first.colleagues != second.colleagues


@pytest.mark.slow  # the default run validates a hundred days already (tests/workplace/test_clues.py)
def test_fifty_days_validate() -> None:
    results = [validate_day(day) for day in generate_days(13, 50)]
    bad = [(r.day.id, r.errors) for r in results if not r.ok]
    assert not bad


def test_generate_command(tmp_path: Path) -> None:
    for out in ("x", "y"):
        done = subprocess.run([sys.executable, "-m", "occubench", "workplace", "generate", "--days", "5",
                               "--seed", "21", "--out", str(tmp_path / out)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    assert _files(tmp_path / "x") == _files(tmp_path / "y") and len(_files(tmp_path / "x")) == 5


def test_each_family_has_its_own_industry_category() -> None:
    categories = {name: family.category for name, family in FAMILIES.items()}
    assert set(categories.values()) <= set(CATEGORY_ABBREVIATIONS) and len(set(categories.values())) >= 5
    assert categories["service_health"] == "Technology & IT"
    for day in generate_days(2, 20):
        assert all(task.category == categories[task.family] for task in day.tasks)
    tables, data = listing()
    assert tables[0].columns[-1] == "Category"
    assert {f["name"]: f["category"] for f in data["families"]} == categories
    assert {row[0]: row[-1] for row in tables[0].rows} == categories


def test_a_day_takes_the_most_common_category_of_its_tasks() -> None:
    day = generate_day(4, 3)
    template = day.tasks[0]

    def day_of(*categories: str) -> Day:
        tasks = [replace(template, id=f"t{i}", category=c) for i, c in enumerate(categories)]
        return replace(day, id="-".join(categories), tasks=tasks)
    cases = {("Agri",): "Agri", ("Agri", "Tech", "Tech"): "Tech", ("Tech", "Agri", "Agri", "Tech"): "Tech",
             ("Agri", "Tech", "Sci", "Tech", "Sci"): "Tech", ("Agri", "Sci", "Tech"): "Agri"}  # ties: first task's
    for categories, expected in cases.items():
        assert day_category(day_of(*categories)) == expected, categories
    suite = DaySuite(LIBRARY, [planned(day_of(*c)) for c in cases])
    assert [task.category for task in suite.tasks()] == list(cases.values())
