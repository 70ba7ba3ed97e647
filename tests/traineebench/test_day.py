"""A day generated from a config entry: its folders, company and tasks, the same for the same seed, the config's
deadline on each task (numbered t1, t2... in the day, with its family's difficulty), the reference's rooms, and a
family's refusal of an argument named with its place."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from occubench.errors import ConfigError
from occubench.traineebench.config import DayEntry, TaskEntry
from occubench.traineebench.day import build_day
from occubench.traineebench.families import family
from occubench.traineebench.family import Day, Family, Outcome, Score, TaskSpec


class Dice:
    """A stand-in family: rolls the day's dice into a workspace file; scores whether the answer file repeats it."""

    name = "Dice"
    difficulty = "hard"

    def hints(self, task: TaskSpec) -> tuple[str, str, str]:
        return ("The roll is in your workspace.", "Finance's manager knows where.", "Read roll.txt, write answer.txt.")

    def generate(self, day: Day, *, sides: int) -> TaskSpec:
        if not isinstance(sides, int) or sides < 2:
            raise ConfigError(f"sides: expected an integer of at least 2, not {sides!r}")
        roll = day.rng.randint(1, sides)
        (day.workspace / "roll.txt").write_text(str(roll))
        day.company.add_rule(day.company.manager_of("Finance"), "Point the intern to roll.txt.")
        return TaskSpec(self.name, "Copy the roll into answer.txt.", day.start, {"roll": roll})

    def evaluate(self, task: TaskSpec, outcome: Outcome) -> Score:
        answer = outcome.workspace / "answer.txt"
        return Score(float(answer.is_file() and answer.read_text() == str(task.check["roll"])), 1.0)


def _families(name: str) -> Family:
    return Dice() if name == "Dice" else family(name)


@pytest.fixture(autouse=True)
def reference(tmp_path: Path) -> None:
    """The one reference file every day reads: the intern's manual."""
    (tmp_path / "schemas" / "templates").mkdir(parents=True)
    (tmp_path / "schemas" / "templates" / "manuals_for_intern.md").write_text("stand-in intern manual")


def _entry(**arguments: Any) -> DayEntry:
    return DayEntry("day_1", (TaskEntry("Dice", arguments, datetime(2025, 10, 1, 20)),))


def test_the_same_seed_gives_the_same_day(tmp_path: Path) -> None:
    built = [build_day(tmp_path / str(n), "s", _entry(sides=1000), seed=seed, reference=tmp_path, families=_families)
             for n, seed in enumerate((1, 1, 2))]
    rolls = [(b.day.workspace / "roll.txt").read_text() for b in built]
    assert rolls[0] == rolls[1] and built[0].day.company == built[1].day.company
    assert built[2].day.company != built[0].day.company
    [task] = built[0].tasks
    assert task.deadline == datetime(2025, 10, 1, 20) and task.check["roll"] == int(rolls[0])
    assert (task.id, task.family, task.difficulty) == ("t1", "Dice", "hard")
    finance = built[0].day.company.manager_of("Finance").name
    # The family's rule first, then what the reference tells every colleague.
    assert built[0].day.company.rules[finance] == [
        "Point the intern to roll.txt.", "For general questions about the company, see "
        "CloudDisk:manuals_for_intern.md."]
    # The reference's ten rooms, each holding the whole company, though no task books one.
    assert built[0].day.rooms == {f"Room_{n:02d}": len(built[0].day.company.employees) + 1 for n in range(1, 11)}
    assert (built[0].day.cloud_disk / "manuals_for_intern.md").read_text() == "stand-in intern manual"


def test_a_refused_argument_and_an_unknown_family_name_their_place(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"scenarios\[0\].days\[1\].tasks\[0\] \(Dice\): sides"):
        build_day(tmp_path / "a", "s", _entry(sides=0), seed=0, reference=tmp_path, families=_families,
                  where="scenarios[0].days[1].")
    with pytest.raises(ConfigError, match=r"tasks\[0\] \(Dice\).arguments: .*colour"):
        build_day(tmp_path / "b", "s", _entry(sides=6, colour="red"), seed=0, reference=tmp_path,
                  families=_families)
    with pytest.raises(ConfigError, match="unknown task family 'Coffee'"):
        family("Coffee")
