"""Eight families, each alone in a day of its own over 300 seeded draws, played through the real environment and
scoring: the reference solution meets every checkpoint by its deadline, doing nothing meets none; the reference's
questions release every clue it needs and a request for everything releases none; the guidance hints (where to
look, whom to ask, the plan) never give away a checked value; and the obvious shortcut that skips the colleague's
fact or the file's fine print gives a wrong answer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from occubench.core.task import CATEGORY_ABBREVIATIONS
from occubench.workplace.model import Day, WorkTask
from occubench.workplace.schedule import TOOLSET, reference_schedule
from occubench.workplace.scoring import _has
from occubench.workplace.templates import FAMILIES
from occubench.workplace.templates.base import ROOMS
from occubench.workplace.validate import validate_day
from tests.workplace import families
from tests.workplace.test_clues import GENERIC

#: name → (kind, difficulty, category)
MINE = {"discharge_summary": ("synthesis", "hard", "Healthcare & Life Sciences"),
        "field_inspection_visit": ("scheduling", "easy", "Agriculture & Environment"),
        "equipment_fault_triage": ("inquiry", "hard", "Industrial & Engineering"),
        "public_consultation_digest": ("synthesis", "easy", "Public Service & Governance"),
        "server_capacity_plan": ("optimisation", "hard", "Technology & IT"),
        "course_timetable": ("scheduling", "hard", "Education & Culture"),
        "supplier_quote_compare": ("optimisation", "easy", "Commerce & Consumer"),
        "experiment_anomaly_watch": ("inquiry", "easy", "Science & Research")}
DRAWS = 300
TOOLS = TOOLSET.tools


def alone(family: str, draw: int) -> Day:
    return families.alone(family, draw, "families-b")


@pytest.fixture(scope="module")
def days() -> dict[str, list[Day]]:
    return {family: [alone(family, draw) for draw in range(DRAWS)] for family in MINE}


def test_the_families_are_registered_as_intended() -> None:
    for name, (kind, difficulty, category) in MINE.items():
        family = FAMILIES[name]
        assert (family.name, family.kind, family.difficulty, family.category) == (name, kind, difficulty, category)
        assert category in CATEGORY_ABBREVIATIONS


@pytest.mark.parametrize("family", sorted(MINE))
def test_reference_solves_every_draw_and_doing_nothing_solves_none(family: str, days: dict[str, list[Day]]) -> None:
    for day in days[family]:
        validation = validate_day(day)  # the reference schedule and an untouched environment, scored
        assert not validation.errors, (day.id, validation.errors)
        assert all(s.points == s.full for s in validation.reference), (day.id, validation.reference)
        assert all(s.points == 0 for s in validation.noop), day.id
        assert [t.family for t in day.tasks] == [family]
        assert all(t.deadline and "{" not in t.objective and t.category == MINE[family][2] for t in day.tasks)


@pytest.mark.parametrize("family", sorted(MINE))
def test_clues_need_the_right_question_and_are_not_on_the_drive(family: str, days: dict[str, list[Day]]) -> None:
    for day in days[family]:
        asked = [s["arguments"] for s in reference_schedule(day)[0] if s["tool"] == "send_message"]
        public = "\n".join([*day.drive.values(), *(t.objective for t in day.tasks)])
        clues = [clue for colleague in day.colleagues for clue in colleague.clues]
        assert clues, day.id
        for colleague in day.colleagues:
            questions = [a["text"] for a in asked if colleague.name in day.groups.get(a["to"], [a["to"]])]
            for clue in colleague.clues:
                assert any(clue.asked_by(q) for q in questions), (day.id, clue.id, questions)
                assert not any(clue.asked_by(message) for message in GENERIC), (day.id, clue.id)
                assert clue.text not in public, (day.id, clue.id)


def _checked(task: WorkTask) -> list[str]:
    """Every value a checkpoint of ``task`` checks for or against, booking times included."""
    values: list[str] = []
    for c in task.checkpoints:
        values += [*c.check.get("values", []), *c.check.get("absent", [])]
        values += [c.check[key] for key in ("start", "end") if key in c.check]
    return values


@pytest.mark.parametrize("family", sorted(MINE))
def test_hints_guide_without_giving_the_answer(family: str, days: dict[str, list[Day]]) -> None:
    for day in days[family]:
        people = [c.name for c in day.colleagues]
        for task in day.tasks:
            assert len(task.hints) == 3 and all(task.hints) and len(set(task.hints)) == 3, day.id
            where, whom, plan = task.hints
            assert any(name in whom for name in people), (day.id, whom)  # tier 2 names whom to ask
            assert sum(tool in plan for tool in TOOLS) >= 2, (day.id, plan)  # tier 3 goes tool by tool
            for hint in task.hints:
                leaked = [v for v in _checked(task) if _has(hint, [v])]
                seats = [c.check["min_capacity"] for c in task.checkpoints if c.check["kind"] == "booking"]
                leaked += [n for n in seats if re.search(rf"\b{n}\b", hint)]
                assert not leaked, (day.id, leaked, hint)
            assert not any(_has(task.objective, [v]) for c in task.checkpoints for v in c.check.get("values", [])
                           if v not in people), (day.id, task.objective)


def _provisional_clinic(day: Day) -> str:
    """The follow-up clinic in the admission note, without asking the consultant."""
    mrn = re.search(r"\((MRN-\d+)\)", day.tasks[0].objective)[1]  # type: ignore[index]
    chart = next(content for path, content in day.drive.items() if path.endswith(f"chart_{mrn}.txt"))
    return re.search(r"follow-up in the (\w+) clinic", chart)[1]  # type: ignore[index]


def _weekly_slot(day: Day) -> str:
    """The section's regular weekly start, without asking the timetabling officer."""
    objective = day.tasks[0].objective
    course, section = re.search(r"'s (\S+) .* for section (\w)", objective).groups()  # type: ignore[union-attr]
    return next(r["start"] for r in families.rows(day, "weekly_timetable") if r["course"] == course and
                r["section"] == section)


def _cheapest_at_any_speed(day: Day) -> str:
    """The lowest total among quotes that take the quantity, the delivery limit ignored."""
    quantity = int(re.search(r"needs (\d+) ", day.tasks[0].objective)[1])  # type: ignore[index]
    quotes = [q for q in families.rows(day, "quotes_") if int(q["min_order_qty"]) <= quantity]
    return min(quotes, key=lambda q: round(float(q["unit_price_eur"]) * quantity) + int(q["shipping_eur"]))["supplier"]


def _highest_blank(day: Day) -> str:
    """The run with the highest blank, calibration runs included."""
    return max(families.rows(day, "_runs_"), key=lambda r: float(r["blank_au"]))["run_id"]


def _all_responses(day: Day) -> list[str]:
    """Counts by theme over every response, late ones included."""
    rows = families.rows(day, "_responses_")
    return [f"{t}: {sum(r['theme'] == t for r in rows)}" for t in sorted({r["theme"] for r in rows})]


#: family → (the checkpoint a shortcut misses, the shortcut's answer from the drive alone)
SHORTCUTS = {"discharge_summary": ("consultant's follow-up", _provisional_clinic),
             "course_timetable": ("make-up room booked", _weekly_slot),
             "supplier_quote_compare": ("best valid quote chosen", _cheapest_at_any_speed),
             "experiment_anomaly_watch": ("anomalous run found", _highest_blank)}


@pytest.mark.parametrize("family", sorted(SHORTCUTS))
def test_the_obvious_shortcut_gives_a_wrong_answer(family: str, days: dict[str, list[Day]]) -> None:
    """Skipping the colleague's fact (the consultant's plan, the make-up time, the delivery limit) or the file's fine
    print (calibration runs) never gives a checked answer."""
    name, shortcut = SHORTCUTS[family]
    for day in days[family]:
        check = next(c.check for t in day.tasks for c in t.checkpoints if c.name == name)
        assert shortcut(day) not in (check.get("values") or [check["start"]]), (day.id, shortcut(day))


def test_counting_late_responses_changes_the_counts(days: dict[str, list[Day]]) -> None:
    for day in days["public_consultation_digest"]:
        right = families.values(day, "counts by theme")
        assert len(set(_all_responses(day)) - set(right)) >= 2, day.id


def test_a_server_plan_that_skips_part_of_the_rule_is_refused(days: dict[str, list[Day]]) -> None:
    """Each partial rule (no memory floor, no headroom, no spare, sizing for the average) gives a configuration the
    plan must not hold, and the right one is not among them."""
    for day in days["server_capacity_plan"]:
        right = families.values(day, "cheapest configuration that meets the rule")
        absent = next(c.check["absent"] for c in day.tasks[0].checkpoints if c.name.startswith("no configuration"))
        assert len([a for a in absent if " x " in a]) >= 2 and not set(right) & set(absent), day.id


def test_only_the_right_technician_knows_the_part(days: dict[str, list[Day]]) -> None:
    for day in days["equipment_fault_triage"]:
        technicians = [c for c in day.colleagues if c.role.startswith("Maintenance technician")]
        assert sorted(len(c.clues) for c in technicians) == [0, 1], day.id
        holder = next(c for c in technicians if c.clues)
        system = "mechanical" if "mechanical" in holder.role else "electrical"
        unit, code, _ = families.values(day, "faulty unit and part found")
        row = [r for r in families.rows(day, "alarms") if r["unit"] == unit and r["code"] == code][-1]
        assert row["state"] == "RAISED" and {"MECH": "mechanical", "ELEC": "electrical"}[row["system"]] == system


def test_a_booking_too_late_or_in_a_room_too_small_does_not_count(days: dict[str, list[Day]], tmp_path: Path) -> None:
    day = days["course_timetable"][0]
    [work] = day.tasks
    booking = next(c.check for c in work.checkpoints if c.check["kind"] == "booking")
    env = families.played(day, tmp_path / "small")
    small = max((r for r, seats in ROOMS.items() if seats < booking["min_capacity"]), key=ROOMS.__getitem__)
    booked = env.call("book_meeting", {"room_name": small, "start": booking["start"], "end": booking["end"],
                                       "attendees": booking["attendees"]})
    assert booked["room"] == small  # free, and one seat short of the students
    assert families.scores(env)[0].points == 0
    late = families.played(day, tmp_path / "late")
    late.now = late.now.replace(hour=17, minute=45)  # after the session has started: the booking is refused
    for step in work.reference:
        late.call(step["tool"], step["arguments"])
    assert families.scores(late)[0].points == 0


@pytest.mark.parametrize("family", sorted(MINE))
def test_same_draw_same_piece(family: str) -> None:
    assert alone(family, 7).to_json() == alone(family, 7).to_json()
    assert alone(family, 7).to_json() != alone(family, 8).to_json()
