"""Seven families, each alone in a day of its own over 300 seeded draws, played through the real environment and
scoring: the reference solution meets every checkpoint by its deadline, doing nothing meets none; the reference's
questions release every clue it needs, and a request for everything releases none. Together with the other families
the suite covers the four kinds of work and at least six industries."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pytest

from occubench.core.task import CATEGORY_ABBREVIATIONS
from occubench.workplace.model import Day
from occubench.workplace.schedule import reference_schedule
from occubench.workplace.templates import FAMILIES
from occubench.workplace.validate import validate_day
from tests.workplace import families
from tests.workplace.test_clues import GENERIC

#: name → (kind, difficulty, category)
MINE = {"shift_coverage": ("scheduling", "easy", "Healthcare & Life Sciences"),
        "lab_sample_tracking": ("inquiry", "hard", "Science & Research"),
        "crop_yield_report": ("synthesis", "easy", "Agriculture & Environment"),
        "maintenance_window": ("scheduling", "hard", "Industrial & Engineering"),
        "permit_backlog": ("inquiry", "easy", "Public Service & Governance"),
        "freight_consolidation": ("optimisation", "hard", "Transportation & Logistics"),
        "grant_budget_check": ("optimisation", "easy", "Science & Research")}
DRAWS = 300


def alone(family: str, draw: int) -> Day:
    return families.alone(family, draw, "families-a")


def test_the_families_are_registered_as_intended() -> None:
    for name, (kind, difficulty, category) in MINE.items():
        family = FAMILIES[name]
        assert (family.kind, family.difficulty, family.category) == (kind, difficulty, category)
    assert {f.kind for f in FAMILIES.values()} == {"synthesis", "scheduling", "inquiry", "optimisation"}
    categories = {f.category for f in FAMILIES.values()}
    assert categories <= set(CATEGORY_ABBREVIATIONS) and len(categories) >= 6


@pytest.mark.parametrize("family", sorted(MINE))
def test_reference_solves_every_draw_and_doing_nothing_solves_none(family: str) -> None:
    for draw in range(DRAWS):
        day = alone(family, draw)
        validation = validate_day(day)  # the reference schedule and an untouched environment, scored
        assert not validation.errors, (family, draw, validation.errors)
        assert all(s.points == s.full for s in validation.reference), (family, draw, validation.reference)
        assert all(s.points == 0 for s in validation.noop), (family, draw)
        assert [t.family for t in day.tasks] == [family] and all(t.deadline and "{" not in t.objective
                                                                 for t in day.tasks)


@pytest.mark.parametrize("family", sorted(MINE))
def test_clues_need_the_right_question(family: str) -> None:
    for draw in range(DRAWS):
        day = alone(family, draw)
        asked = [s["arguments"] for s in reference_schedule(day)[0] if s["tool"] == "send_message"]
        for colleague in day.colleagues:
            questions = [a["text"] for a in asked if a["to"] == colleague.name]
            for clue in colleague.clues:
                assert any(clue.asked_by(q) for q in questions), (family, draw, clue.id, questions)
                assert not any(clue.asked_by(message) for message in GENERIC), (family, draw, clue.id)


@pytest.mark.parametrize("family", sorted(MINE))
def test_what_colleagues_know_is_not_on_the_drive(family: str) -> None:
    for draw in range(DRAWS):
        day = alone(family, draw)
        public = "\n".join([*day.drive.values(), *(t.objective for t in day.tasks)])
        for clue in (clue for colleague in day.colleagues for clue in colleague.clues):
            assert clue.text not in public, (family, draw, clue.id)


def _fewest_hours(day: Day) -> str:
    """Whoever is off today with the fewest hours, without the coordinator's rule."""
    off = [r for r in families.rows(day, "roster") if r["today"] == "off"]
    return min(off, key=lambda r: int(r["hours_this_week"]))["name"]


def _average_over_every_field(day: Day) -> str:
    """The crop's weight over the area of all its fields, harvested or not."""
    harvested = [line.split(",") for line in families.values(day, "field totals right")]
    crop = next(r["crop"] for r in families.rows(day, "fields") if r["field"] == harvested[0][0])
    area = sum(Fraction(r["area_ha"]) for r in families.rows(day, "fields") if r["crop"] == crop)
    return f"{round(sum(Fraction(int(kg), 1000) for _, kg, _ in harvested) / area * 10) / 10:.1f}"


def _largest_under_the_cap(day: Day) -> str:
    """The largest scenario within the cap, the equipment limit ignored."""
    call = next(content for path, content in day.drive.items() if "_call_" in path)
    cap = int(re.search(r"Maximum request per project: EUR ([\d,]+)", call)[1].replace(",", ""))  # type: ignore[index]
    totals = {r["scenario"]: sum(int(v) for k, v in r.items() if k != "scenario")
              for r in families.rows(day, "budget_scenarios")}
    return max((code for code in totals if totals[code] <= cap), key=totals.__getitem__)


def _cheapest_at_any_speed(day: Day) -> str:
    """The cheapest quote for the lane with room and certification, the customer's transit limit ignored."""
    orders = [r for r in families.rows(day, "open_orders") if r["status"] == "ready"]
    customer = next(t.objective for t in day.tasks).split(" wants all ")[1].split(" orders")[0]
    city = next(r["city"] for r in orders if r["customer"] == customer)
    mine = [r for r in orders if r["customer"] == customer and r["city"] == city]
    pallets, hazardous = sum(int(r["pallets"]) for r in mine), any(r["dangerous_goods"] == "yes" for r in mine)
    fit = [q for q in families.rows(day, "carrier_quotes") if q["lane"] == f"to {city}"
           and int(q["max_pallets"]) >= pallets and (q["adr_certified"] == "yes" or not hazardous)]
    return min(fit, key=lambda q: int(q["fixed_fee_eur"]) + int(q["rate_per_pallet_eur"]) * pallets)["quote_id"]


#: family → (the checkpoint a shortcut misses, the shortcut's answer from the drive alone)
SHORTCUTS = {"shift_coverage": ("cover recorded", _fewest_hours),
             "crop_yield_report": ("manager told the average", _average_over_every_field),
             "grant_budget_check": ("largest allowed scenario chosen", _largest_under_the_cap),
             "freight_consolidation": ("cheapest feasible quote chosen", _cheapest_at_any_speed)}


@pytest.mark.parametrize("family", sorted(SHORTCUTS))
def test_the_obvious_shortcut_gives_a_wrong_answer(family: str) -> None:
    """Reading the drive and skipping the step the task turns on (the colleague's rule, the status column, the
    call's second limit) never gives a checked answer."""
    checkpoint, shortcut = SHORTCUTS[family]
    for draw in range(DRAWS):
        day = alone(family, draw)
        assert shortcut(day) not in families.values(day, checkpoint), (family, draw)


@pytest.mark.parametrize("family", sorted(MINE))
def test_same_draw_same_piece(family: str) -> None:
    assert alone(family, 7).to_json() == alone(family, 7).to_json()
    assert alone(family, 7).to_json() != alone(family, 8).to_json()


def test_a_late_reference_does_not_count(tmp_path: Path) -> None:
    day = alone("maintenance_window", 0)
    env = families.played(day, tmp_path / "day")
    [work] = day.tasks
    env.now = env.now.replace(hour=17, minute=30)  # after every afternoon stop: the booking is refused, the message
    for step in work.reference:                     # comes too late
        env.call(step["tool"], step["arguments"])
    [score] = families.scores(env)
    assert score.points == 0
