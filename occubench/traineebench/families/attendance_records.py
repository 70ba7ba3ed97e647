"""The month of attendance an Attendance Statistics task is about, made as the reference makes it: a staff roster
of eight departments, punch records (late arrivals, early leaves, overtime, remote days, missed punches and their
approved make-ups) under the rules of a difficulty level, the rules manual, and each employee's totals under those
rules, from which every task's answer follows."""

from __future__ import annotations

import calendar
import csv
import io
import json
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from random import Random
from typing import Any

#: The month of the reference's shipped benchmark (its evaluator asks for `attendance_2025-12.csv` by name).
YEAR, MONTH = 2025, 12
CSV = f"attendance_{YEAR}-{MONTH:02d}.csv"
ROSTER = "staff_roster.json"
MANUAL = "manuals_for_attendance_rules.md"
APPROVALS = "approvals.json"
#: The reference company's departments, in its order.
DEPARTMENTS = ("Engineering", "Sales_1", "Sales_2", "Sales_3", "Marketing", "Product", "Human Resources", "Finance")
EMPLOYMENT = (("full_time", 0.75), ("intern", 0.15), ("contract", 0.10))
FIRST = ("Aiden", "Bella", "Carlos", "Dana", "Elif", "Farah", "Gavin", "Hana", "Ivan", "Jade", "Kofi", "Lena",
         "Mateo", "Nora", "Omar", "Priya", "Quinn", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wes", "Xin", "Yara",
         "Zane")
LAST = ("Abbott", "Banerjee", "Castro", "Dubois", "Eriksen", "Fischer", "Gallo", "Haddad", "Ito", "Jansen", "Kaur",
        "Lindqvist", "Moreau", "Novak", "Okafor", "Petrov", "Quint", "Rossi", "Sato", "Tanaka", "Ueda", "Varga",
        "Weber", "Yilmaz", "Zhou")
#: Punches outside these times of a day are not that day's.
EARLIEST, LATEST = time(6, 0), time(23, 59, 59)
STAMP = "%Y-%m-%d %H:%M:%S"
MINUTE = timedelta(minutes=1)
COUNTS = ("workdays", "present_days", "absence_days", "late_days", "late_minutes_total", "early_days",
          "early_minutes_total", "overtime_minutes_total", "remote_days")


@dataclass(frozen=True)
class Rules:
    """A department's effective attendance rules (remote work and overtime are on everywhere, Monday to Friday)."""

    start: time = time(9, 0)
    end: time = time(18, 0)
    flex: bool = False
    flex_window: int = 30
    min_hours: float = 8.0
    grace_late: int = 5
    grace_early: int = 5
    lunch: int = 60
    overtime_after: time = time(18, 30)
    #: Said in the manual; the reference's answers count every overtime minute regardless.
    overtime_block: int = 30
    absent_if_missing: bool = True
    makeup: bool = True
    headcount: int = 10
    remote_ratio: float = 0.20


_LONG_DAYS: dict[str, Any] = {"start": time(10, 0), "end": time(20, 0), "flex": True, "min_hours": 9.0}
LEVELS: dict[str | None, dict[str, Any]] = {
    None: {}, "L3": {}, "L5": {},
    "L1": {"grace_late": 10, "grace_early": 10, "absent_if_missing": False, "makeup": False},
    "L2": {"start": time(9, 30), "end": time(18, 30), "makeup": False},
    "L4": _LONG_DAYS,
}
#: The punches' chances and spreads (the reference's `rng_cfg`); `p_remote` gives way to each department's ratio.
CHANCES = {"p_late": 0.25, "p_early": 0.12, "p_absence": 0.06, "p_remote": 0.15, "p_ot": 0.35, "late_mean": 10.0,
           "late_std": 6.0, "p_missing_in": 0.03, "p_missing_out": 0.03}


def policy(level: str | None, rng: Random) -> dict[str, Rules]:
    """Each department's rules at a level; at L5 three departments, drawn, keep long flexible days and are bigger
    and more remote."""
    base = Rules(**LEVELS[level])
    rules = dict.fromkeys(DEPARTMENTS, base)
    if level == "L5":
        for department in rng.sample(DEPARTMENTS, 3):
            rules[department] = replace(base, headcount=12, remote_ratio=0.30, **_LONG_DAYS)
    return rules


def roster(rules: dict[str, Rules], rng: Random) -> list[dict[str, Any]]:
    people: list[dict[str, Any]] = []
    for department, own in rules.items():
        for _ in range(own.headcount):
            draw, kind = rng.random(), EMPLOYMENT[-1][0]
            for name, share in EMPLOYMENT:
                draw -= share
                if draw <= 0:
                    kind = name
                    break
            people.append({"employee_id": f"E{1001 + len(people)}", "name": f"{rng.choice(FIRST)} {rng.choice(LAST)}",
                           "department": department, "employment_type": kind, "active": True})
    return people


def workdays() -> list[date]:
    return [date(YEAR, MONTH, d) for d in range(1, calendar.monthrange(YEAR, MONTH)[1] + 1)
            if date(YEAR, MONTH, d).weekday() < 5]


def _minutes(rng: Random, mean: float, spread: float, low: int, high: int) -> int:
    return round(min(high, max(low, rng.gauss(mean, spread))))


def _shift(day: date, own: Rules) -> tuple[datetime, datetime]:
    start, end = datetime.combine(day, own.start), datetime.combine(day, own.end)
    return start, end if own.end > own.start else end + timedelta(days=1)


def _out(rng: Random, end: datetime, own: Rules, chances: dict[str, float]) -> datetime:
    if rng.random() < chances["p_early"]:
        return end - timedelta(minutes=max(1, _minutes(rng, 10, 8, 1, 120)))
    if rng.random() < chances["p_ot"]:
        after = max(end, datetime.combine(end.date(), own.overtime_after))
        return after + timedelta(minutes=max(30, _minutes(rng, 60, 30, 30, 240)))
    return end + timedelta(minutes=_minutes(rng, 0, 3, -5, 10))


def punches(people: list[dict[str, Any]], rules: dict[str, Rules], chances: dict[str, float],
            rng: Random) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """Every gate punch of the month and the approved make-ups of missed ones (at the levels that allow them)."""
    records, approvals = [], []
    for person in people:
        own = rules[person["department"]]
        for day in workdays():
            if rng.random() < chances["p_absence"]:
                continue
            start, end = _shift(day, own)
            late = (max(1, _minutes(rng, chances["late_mean"], chances["late_std"], 1, 120))
                    if rng.random() < chances["p_late"] else _minutes(rng, 0, 2, -5, 5))
            came, left = start + timedelta(minutes=late), _out(rng, end, own, chances)
            tags = json.dumps({"remote": rng.random() < own.remote_ratio})
            missed_in = rng.random() < chances["p_missing_in"]
            missed_out = not missed_in and rng.random() < chances["p_missing_out"]
            for way, at, missed, makeup_at in (("in", came, missed_in, came + 5 * MINUTE),
                                               ("out", left, missed_out, left - 5 * MINUTE)):
                if not missed:
                    records.append(_punch(person, at, way, "gate", tags))
                elif own.makeup:
                    approvals.append(_punch(person, makeup_at, way, "approval", tags))
    punched = {_order(r) for r in records}
    return sorted(records + [a for a in approvals if _order(a) not in punched], key=_order), approvals


def _punch(person: dict[str, Any], at: datetime, way: str, source: str, tags: str) -> dict[str, str]:
    return {"employee_id": person["employee_id"], "timestamp": at.strftime(STAMP), "io": way,
            "source": source, "tags": tags}


def _order(record: dict[str, str]) -> tuple[str, str, str]:
    return record["employee_id"], record["timestamp"], record["io"]


def csv_text(records: list[dict[str, str]]) -> str:
    """The punches as CSV; the tags, JSON, are quoted."""
    out = io.StringIO()
    writer = csv.DictWriter(out, ("employee_id", "timestamp", "io", "source", "tags"), lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue()


def manual(rules: dict[str, Rules]) -> str:
    lines = ["# Attendance rules in force, department by department", ""]
    for department in sorted(rules):
        own = rules[department]
        lines += [f"## {department}", "- Workdays: Mon, Tue, Wed, Thu, Fri",
                  f"- Office hours: {own.start:%H:%M} to {own.end:%H:%M}, with a {own.lunch}-minute lunch break"]
        if own.flex:
            lines.append(f"- Flexible hours: on. Anyone may start up to {own.flex_window} minutes either side of "
                         f"the start time, as long as they work at least {own.min_hours:g} hours that day.")
        else:
            lines.append(f"- Grace period: arriving up to {own.grace_late} minutes late or leaving up to "
                         f"{own.grace_early} minutes early is not counted as late or early.")
        lines += [f"- Overtime: on; it counts after {own.overtime_after:%H:%M}, in blocks of at least "
                  f"{own.overtime_block} minutes",
                  '- Remote work: allowed; a punch tagged `"remote": true` marks a remote day']
        if own.absent_if_missing:
            lines.append("- Absence: a day missing its check-in or its check-out counts as an absence. " + (
                "A missed punch can be made up afterwards by a record a manager approved (source `approval`)."
                if own.makeup else "Missed punches cannot be made up."))
        lines += [f"- Records count from {EARLIEST:%H:%M} to {LATEST:%H:%M:%S} of the day", "", "-" * 20, ""]
    return "\n".join(lines)


def totals(people: list[dict[str, Any]], rules: dict[str, Rules],
           records: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Each employee's month under their department's rules: workdays, days present and absent, days late and
    left early with their minutes, overtime minutes, remote days (the reference's answer key)."""
    stamped: dict[str, list[tuple[datetime, dict[str, str]]]] = {}
    for record in records:
        stamped.setdefault(record["employee_id"], []).append((datetime.strptime(record["timestamp"], STAMP), record))
    rows = []
    for person in people:
        own = rules[person["department"]]
        row: dict[str, Any] = {key: person[key] for key in ("employee_id", "name", "department")}
        row.update(dict.fromkeys(COUNTS, 0))
        mine = sorted(stamped.get(person["employee_id"], []), key=lambda stamp: stamp[0])
        for day in workdays():
            start, end = _shift(day, own)
            first, last = datetime.combine(day, EARLIEST), datetime.combine(end.date(), LATEST)
            came = left = None
            remote = False
            for at, record in mine:
                if first <= at <= last:
                    remote = remote or bool(json.loads(record["tags"]).get("remote", False))
                    if record["io"] == "in" and came is None:
                        came = at
                    elif record["io"] == "out":
                        left = at
            row["workdays"] += 1
            if (came is None or left is None) and own.absent_if_missing:
                row["absence_days"] += 1
                continue
            row["present_days"] += 1
            row["remote_days"] += remote
            _count_day(row, own, start, end, came, left)
        rows.append(row)
    return rows


def _count_day(row: dict[str, Any], own: Rules, start: datetime, end: datetime, came: datetime | None,
               left: datetime | None) -> None:
    """Late: after the grace period (or the flexible window), counted from the start time. Early: before the end
    less the grace period, or, with flexible hours, short of the day's minimum hours net of lunch."""
    if came is not None and came > start + (own.flex_window if own.flex else own.grace_late) * MINUTE:
        row["late_days"] += 1
        row["late_minutes_total"] += (came - start) // MINUTE
    if left is None:
        return
    early = 0
    if own.flex:
        worked = max(0, (left - came) // MINUTE - own.lunch) if came is not None else 0
        early = max(0, int(own.min_hours * 60) - worked)
    elif left < end - own.grace_early * MINUTE:
        early = (end - left) // MINUTE
    if early:
        row["early_days"] += 1
        row["early_minutes_total"] += early
    after = max(end, datetime.combine(end.date(), own.overtime_after))
    if left > after:
        row["overtime_minutes_total"] += (left - after) // MINUTE
