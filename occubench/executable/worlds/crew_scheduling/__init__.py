"""Airline crew scheduling: crew with ranks, bases, type ratings and 7-day duty hours; flights needing a captain,
a first officer and cabin crew; rostering, sickness and legality fixes."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Literal

from occubench.executable.world import Call, Check, ExecTask, ToolError, World, found, one, only_changed, rows, scalar

world = World(
    name="crew_scheduling", scenario="Airline Crew Scheduling", category="Transportation & Logistics",
    domain="Airline Operations", directory=Path(__file__).parent,
    main_tables=("crew_members", "type_ratings", "flights", "assignments"),
    description="A regional airline's crew control desk on 2025-11-14, rostering the 15 November flights: crew "
                "members with rank, base, status and duty hours in the last 7 days, aircraft type ratings with "
                "expiry dates, flights needing a captain, a first officer and a number of cabin crew.",
)

NOW = "2025-11-14 11:00"
_RANK_FOR = {"captain": "CPT", "first_officer": "FO", "cabin": "FA"}


def _crew(db: sqlite3.Connection, crew_id: str) -> dict[str, Any]:
    return found(db, "SELECT * FROM crew_members WHERE crew_id = ?", crew_id,
                 missing=f"crew member {crew_id} not found")


def _flight(db: sqlite3.Connection, flight_id: str) -> dict[str, Any]:
    return found(db, "SELECT * FROM flights WHERE flight_id = ?", flight_id, missing=f"flight {flight_id} not found")


def _ratings(db: sqlite3.Connection, crew_id: str) -> list[dict[str, Any]]:
    return rows(db, "SELECT aircraft_type, valid_until FROM type_ratings WHERE crew_id = ? ORDER BY aircraft_type",
                crew_id)


def _roster(db: sqlite3.Connection, crew_id: str) -> list[dict[str, Any]]:
    return rows(db, "SELECT f.flight_id, a.position, f.origin, f.destination, f.departure, f.arrival, "
                    "f.aircraft_type, f.duty_hours FROM assignments a JOIN flights f USING (flight_id) "
                    "WHERE a.crew_id = ? AND f.status = 'scheduled' ORDER BY f.departure", crew_id)


@world.tool
def list_flights(db: sqlite3.Connection, origin: str | None = None, aircraft_type: str | None = None,
                 status: Literal["scheduled", "cancelled"] | None = None) -> dict[str, Any]:
    """Flights with their times, aircraft type, duty hours and how far each position is staffed.

    Args:
        origin: Only flights departing this airport, e.g. TRD.
        aircraft_type: Only flights operated by this type: A320, E190 or ATR72.
        status: scheduled or cancelled.
    """
    found = rows(db, "SELECT f.*, "
                     "(SELECT crew_id FROM assignments a WHERE a.flight_id = f.flight_id AND position = 'captain') "
                     "AS captain, "
                     "(SELECT crew_id FROM assignments a WHERE a.flight_id = f.flight_id "
                     "AND position = 'first_officer') "
                     "AS first_officer, "
                     "(SELECT COUNT(*) FROM assignments a WHERE a.flight_id = f.flight_id AND position = 'cabin') "
                     "AS cabin_assigned FROM flights f WHERE (? IS NULL OR origin = ?) AND "
                     "(? IS NULL OR aircraft_type = ?) AND (? IS NULL OR status = ?) ORDER BY departure, flight_id",
                     origin, origin, aircraft_type, aircraft_type, status, status)
    return {"flights": found, "count": len(found)}


@world.tool
def get_flight(db: sqlite3.Connection, flight_id: str) -> dict[str, Any]:
    """One flight and the crew rostered on it, by position.

    Args:
        flight_id: Flight number, e.g. NW512.
    """
    flight = _flight(db, flight_id)
    flight["crew"] = rows(db, "SELECT a.crew_id, c.name, c.rank, a.position FROM assignments a JOIN crew_members c "
                              "USING (crew_id) WHERE a.flight_id = ? ORDER BY CASE a.position WHEN 'captain' THEN 0 "
                              "WHEN 'first_officer' THEN 1 ELSE 2 END, a.crew_id", flight_id)
    return flight


@world.tool
def search_crew(db: sqlite3.Connection, rank: Literal["CPT", "FO", "FA"] | None = None, base: str | None = None,
                aircraft_type: str | None = None,
                status: Literal["active", "sick", "leave"] | None = None) -> dict[str, Any]:
    """Crew members with their status, type ratings (and expiry), duty hours in the last 7 days and the duty hours
    already rostered for 15 November.

    Args:
        rank: CPT (captain), FO (first officer) or FA (flight attendant).
        base: Home base, e.g. OSL, BGO or TRD.
        aircraft_type: Only crew holding a rating (current or expired) on this type: A320, E190 or ATR72.
        status: active, sick or leave.
    """
    found = rows(db, "SELECT c.*, COALESCE((SELECT SUM(f.duty_hours) FROM assignments a JOIN flights f "
                     "USING (flight_id) WHERE a.crew_id = c.crew_id AND f.status = 'scheduled'), 0) "
                     "AS rostered_duty_hours FROM crew_members c WHERE (? IS NULL OR rank = ?) AND "
                     "(? IS NULL OR base = ?) AND (? IS NULL OR status = ?) AND (? IS NULL OR EXISTS (SELECT 1 FROM "
                     "type_ratings t WHERE t.crew_id = c.crew_id AND t.aircraft_type = ?)) ORDER BY c.crew_id",
                     rank, rank, base, base, status, status, aircraft_type, aircraft_type)
    for member in found:
        member["type_ratings"] = _ratings(db, member["crew_id"])
    return {"crew": found, "count": len(found)}


@world.tool
def get_crew_member(db: sqlite3.Connection, crew_id: str) -> dict[str, Any]:
    """A crew member's details, type ratings, duty hours in the last 7 days and their rostered flights.

    Args:
        crew_id: Crew identifier, e.g. FO-302.
    """
    member = _crew(db, crew_id)
    member["type_ratings"] = _ratings(db, crew_id)
    member["roster"] = _roster(db, crew_id)
    member["rostered_duty_hours"] = sum(f["duty_hours"] for f in member["roster"])
    return member


@world.tool(writes=True)
def assign_crew(db: sqlite3.Connection, flight_id: str, crew_id: str,
                position: Literal["captain", "first_officer", "cabin"]) -> dict[str, Any]:
    """Roster a crew member on a flight. The system checks status, rank, vacancies and overlapping flights; type
    ratings and duty-time limits are the scheduler's responsibility.

    Args:
        flight_id: The flight, e.g. NW412.
        crew_id: The crew member to roster.
        position: captain, first_officer or cabin.
    """
    flight = _flight(db, flight_id)
    if flight["status"] != "scheduled":
        raise ToolError(f"flight {flight_id} is {flight['status']}")
    member = _crew(db, crew_id)
    if member["status"] != "active":
        raise ToolError(f"{crew_id} is {member['status']}; only active crew can be rostered")
    if member["rank"] != _RANK_FOR[position]:
        raise ToolError(f"{crew_id} is {member['rank']}; the {position} position needs a {_RANK_FOR[position]}")
    if one(db, "SELECT 1 FROM assignments WHERE flight_id = ? AND crew_id = ?", flight_id, crew_id):
        raise ToolError(f"{crew_id} is already rostered on {flight_id}")
    taken = scalar(db, "SELECT COUNT(*) FROM assignments WHERE flight_id = ? AND position = ?",
                   flight_id, position)
    seats = flight["cabin_required"] if position == "cabin" else 1
    if taken >= seats:
        raise ToolError(f"{flight_id} already has its {position} position{'s' if seats > 1 else ''} filled "
                        f"({taken} of {seats}); remove someone first")
    clash = one(db, "SELECT f.flight_id, f.departure, f.arrival FROM assignments a JOIN flights f USING (flight_id) "
                    "WHERE a.crew_id = ? AND f.status = 'scheduled' AND f.departure < ? AND f.arrival > ?",
                crew_id, flight["arrival"], flight["departure"])
    if clash:
        raise ToolError(f"{crew_id} is already rostered on {clash['flight_id']} ({clash['departure']} to "
                        f"{clash['arrival']}), which overlaps {flight_id}")
    cursor = db.execute("INSERT INTO assignments (flight_id, crew_id, position) VALUES (?, ?, ?)",
                        (flight_id, crew_id, position))
    return {"assignment_id": cursor.lastrowid, "flight_id": flight_id, "crew_id": crew_id, "name": member["name"],
            "position": position}


@world.tool(writes=True)
def remove_crew(db: sqlite3.Connection, flight_id: str, crew_id: str) -> dict[str, Any]:
    """Take a crew member off a flight, leaving their position vacant.

    Args:
        flight_id: The flight, e.g. NW512.
        crew_id: The crew member to remove.
    """
    _flight(db, flight_id)
    assignment = one(db, "SELECT * FROM assignments WHERE flight_id = ? AND crew_id = ?", flight_id, crew_id)
    if assignment is None:
        raise ToolError(f"{crew_id} is not rostered on {flight_id}")
    db.execute("DELETE FROM assignments WHERE assignment_id = ?", (assignment["assignment_id"],))
    return {"removed": {"flight_id": flight_id, "crew_id": crew_id, "position": assignment["position"]},
            "vacant_position": assignment["position"]}


@world.tool(writes=True)
def set_crew_status(db: sqlite3.Connection, crew_id: str, status: Literal["active", "sick", "leave"],
                    note: str) -> dict[str, Any]:
    """Record a crew member as active, sick or on leave. Their existing roster is not changed.

    Args:
        crew_id: The crew member.
        status: active, sick or leave.
        note: The reason, e.g. what the crew member reported.
    """
    member = _crew(db, crew_id)
    if member["status"] == status:
        raise ToolError(f"{crew_id} is already {status}")
    db.execute("UPDATE crew_members SET status = ? WHERE crew_id = ?", (status, crew_id))
    db.execute("INSERT INTO status_log (crew_id, old_status, new_status, note, logged_at) VALUES (?, ?, ?, ?, ?)",
               (crew_id, member["status"], status, note, NOW))
    return {"crew_id": crew_id, "old_status": member["status"], "status": status,
            "rostered_flights": [f["flight_id"] for f in _roster(db, crew_id)]}


# --- tasks --------------------------------------------------------------------------------------------------------

Slot = tuple[str, str, str]


def _slots(db: sqlite3.Connection) -> set[Slot]:
    return {(r["flight_id"], r["crew_id"], r["position"]) for r in rows(db, "SELECT * FROM assignments")}


def _roster_check(initial: sqlite3.Connection, final: sqlite3.Connection, removed: set[Slot],
                  added: set[Slot]) -> Check:
    want, got = (_slots(initial) - removed) | added, _slots(final)
    return Check("roster changed exactly as required", got == want,
                 f"missing {sorted(want - got)}; unexpected {sorted(got - want)}" if got != want else "")


def _verify_first_officer(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    fo = one(final, "SELECT crew_id FROM assignments WHERE flight_id = 'NW412' AND position = 'first_officer'")
    return [
        Check("NW412 first officer is FO-012 Sofie Dahl", (fo or {}).get("crew_id") == "FO-012", f"got {fo}"),
        _roster_check(initial, final, set(), {("NW412", "FO-012", "first_officer")}),
        only_changed(initial, final, "crew_members", "crew_id", set()),
        Check("answer names the first officer", "FO-012" in answer or "Sofie Dahl" in answer),
    ]


world.task(ExecTask(
    id="staff_first_officer", difficulty=1,
    instruction="NW412 (Oslo to Trondheim, A320, 15 November) still has no first officer. Roster an Oslo-based "
                "first officer who holds an A320 type rating valid on the flight date and who stays within the "
                "limit of 60 duty hours: duty hours in the last 7 days plus everything rostered for 15 November, "
                "including this flight, must not exceed 60. If several qualify, choose the one with the fewest duty "
                "hours in the last 7 days. Tell me who you assigned.",
    verify=_verify_first_officer,
    reference=[Call("get_flight", {"flight_id": "NW412"}),
               Call("search_crew", {"rank": "FO", "base": "OSL", "aircraft_type": "A320"}),
               Call("get_crew_member", {"crew_id": "FO-012"}),
               Call("assign_crew", {"flight_id": "NW412", "crew_id": "FO-012", "position": "first_officer"})],
    answer="FO-012 Sofie Dahl is rostered as first officer on NW412: A320 rating valid to 2026-08-31, 34.0 duty "
           "hours in the last 7 days, nothing else rostered, so 38.0 with NW412.",
    wrong=[Call("get_flight", {"flight_id": "NW412"}),
           Call("search_crew", {"rank": "FO", "base": "OSL", "aircraft_type": "A320"}),
           Call("get_crew_member", {"crew_id": "FO-011"}),
           Call("assign_crew", {"flight_id": "NW412", "crew_id": "FO-011", "position": "first_officer"})],
    wrong_answer="FO-011 Mats Lunde, the A320 first officer with the fewest duty hours (22.5), is on NW412.",
    rubric="OSL first officers rated on the A320: FO-011 (22.5 h) - rating expired 2025-11-10; FO-014 - sick; "
           "FO-012 (34.0 h, valid) -> 38.0; FO-016 (36.0 h) is on NW401/NW402, which overlap NW412; FO-017 (40.0 h); "
           "FO-010 (51.0 h); FO-015 (57.0 h) would reach 61.0 - illegal. The answer is FO-012 Sofie Dahl.",
))

_SICK_OUT = {("NW731", "CPT-105", "captain"), ("NW732", "CPT-105", "captain")}
_SICK_IN = {("NW731", "CPT-101", "captain"), ("NW732", "CPT-101", "captain")}


def _verify_sick_captain(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    sick = one(final, "SELECT status FROM crew_members WHERE crew_id = 'CPT-105'") or {}
    captains = {r["flight_id"]: r["crew_id"] for r in rows(
        final, "SELECT * FROM assignments WHERE position = 'captain' AND flight_id IN ('NW731', 'NW732')")}
    return [
        Check("CPT-105 recorded as sick", sick.get("status") == "sick", f"status is {sick.get('status')}"),
        Check("CPT-101 Astrid Nygaard captains NW731 and NW732",
              captains == {"NW731": "CPT-101", "NW732": "CPT-101"}, f"captains {captains}"),
        _roster_check(initial, final, _SICK_OUT, _SICK_IN),
        only_changed(initial, final, "crew_members", "crew_id", {"CPT-105"}),
        Check("answer names the replacement captain", "CPT-101" in answer or "Astrid Nygaard" in answer),
    ]


world.task(ExecTask(
    id="replace_sick_captain", difficulty=2,
    instruction="Captain Henrik Vold (CPT-105) has just called in sick. Record him as sick, take him off his "
                "flights on 15 November, and put one Bergen-based captain on both of those legs (the aircraft "
                "turns in Oslo, so one captain must fly the pair). The replacement must be active, hold a type "
                "rating for the aircraft valid on the flight date, and stay within 60 duty hours: duty hours in the "
                "last 7 days plus everything already rostered for 15 November plus both legs. If several qualify, "
                "choose the one with the fewest duty hours in the last 7 days. Tell me who is flying them.",
    verify=_verify_sick_captain,
    reference=[Call("get_crew_member", {"crew_id": "CPT-105"}),
               Call("set_crew_status", {"crew_id": "CPT-105", "status": "sick", "note": "called in sick"}),
               Call("remove_crew", {"flight_id": "NW731", "crew_id": "CPT-105"}),
               Call("remove_crew", {"flight_id": "NW732", "crew_id": "CPT-105"}),
               Call("search_crew", {"rank": "CPT", "base": "BGO", "aircraft_type": "E190"}),
               Call("get_crew_member", {"crew_id": "CPT-102"}),
               Call("get_crew_member", {"crew_id": "CPT-101"}),
               Call("assign_crew", {"flight_id": "NW731", "crew_id": "CPT-101", "position": "captain"}),
               Call("assign_crew", {"flight_id": "NW732", "crew_id": "CPT-101", "position": "captain"})],
    answer="CPT-105 is recorded sick and off NW731/NW732. CPT-101 Astrid Nygaard now captains both legs: 46.5 h in "
           "the last 7 days + 7.0 h for the pair = 53.5 h. CPT-102 Leif Sande has fewer hours (44.0) but is already "
           "rostered for 9.5 h on NW741/NW742, which would take him to 60.5 h.",
    wrong=[Call("get_crew_member", {"crew_id": "CPT-105"}),
           Call("set_crew_status", {"crew_id": "CPT-105", "status": "sick", "note": "called in sick"}),
           Call("remove_crew", {"flight_id": "NW731", "crew_id": "CPT-105"}),
           Call("remove_crew", {"flight_id": "NW732", "crew_id": "CPT-105"}),
           Call("search_crew", {"rank": "CPT", "base": "BGO", "aircraft_type": "E190", "status": "active"}),
           Call("assign_crew", {"flight_id": "NW731", "crew_id": "CPT-102", "position": "captain"}),
           Call("assign_crew", {"flight_id": "NW732", "crew_id": "CPT-102", "position": "captain"})],
    wrong_answer="CPT-102 Leif Sande (44.0 h, the fewest among E190 captains in Bergen) now flies NW731 and NW732.",
    rubric="CPT-105 flies NW731 and NW732 (E190, 3.5 h each = 7.0 h). BGO E190 captains: CPT-102 44.0 h + 9.5 h "
           "already rostered (NW741/NW742) + 7.0 = 60.5 - illegal; CPT-103 45.0 h - E190 rating expired "
           "2025-10-31; CPT-106 - on leave; CPT-101 46.5 + 0 + 7.0 = 53.5 - legal. CPT-104 is ATR72 only and "
           "CPT-005 is Oslo-based. CPT-105 must be set to sick and CPT-101 must captain both legs.",
))

_ILLEGAL = {("NW512", "FO-301", "first_officer"), ("NW514", "FA-310", "cabin"), ("NW516", "CPT-305", "captain")}
_FIXES = {("NW512", "FO-304", "first_officer"), ("NW514", "FA-311", "cabin"), ("NW516", "CPT-302", "captain")}


def _verify_roster_audit(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    got = _slots(final)
    return [
        Check("illegal assignments removed (FO-301 expired A320 rating, FA-310 at 60.5 h, CPT-305 on leave)",
              not (_ILLEGAL & got), f"still rostered {sorted(_ILLEGAL & got)}"),
        Check("replacements FO-304 on NW512, FA-311 on NW514, CPT-302 on NW516", _FIXES <= got,
              f"missing {sorted(_FIXES - got)}"),
        _roster_check(initial, final, _ILLEGAL, _FIXES),
        only_changed(initial, final, "crew_members", "crew_id", set()),
        Check("answer reports the three removed crew members",
              all(c in answer or n in answer for c, n in (("FO-301", "Per Aas"), ("FA-310", "Nina Moe"),
                                                          ("CPT-305", "Vidar Lien")))),
    ]


world.task(ExecTask(
    id="audit_trd_roster", difficulty=3,
    instruction="Before we publish the 15 November roster, audit the crews of all scheduled flights departing "
                "Trondheim (TRD). Every rostered crew member must be active (not sick or on leave), hold a type "
                "rating for the flight's aircraft valid on the flight date, and stay within 60 duty hours (duty "
                "hours in the last 7 days plus all their duty rostered for 15 November). Take off everyone who "
                "breaks a rule and replace each with a Trondheim-based crew member of the same rank who meets all "
                "three rules once the new flight is added; if several qualify, take the one with the fewest duty "
                "hours in the last 7 days. Report every change you made.",
    verify=_verify_roster_audit,
    reference=[Call("list_flights", {"origin": "TRD", "status": "scheduled"}),
               Call("get_flight", {"flight_id": "NW512"}),
               Call("get_flight", {"flight_id": "NW514"}),
               Call("get_flight", {"flight_id": "NW516"}),
               Call("get_flight", {"flight_id": "NW520"}),
               Call("search_crew", {"base": "TRD"}),
               Call("remove_crew", {"flight_id": "NW512", "crew_id": "FO-301"}),
               Call("assign_crew", {"flight_id": "NW512", "crew_id": "FO-304", "position": "first_officer"}),
               Call("remove_crew", {"flight_id": "NW514", "crew_id": "FA-310"}),
               Call("assign_crew", {"flight_id": "NW514", "crew_id": "FA-311", "position": "cabin"}),
               Call("remove_crew", {"flight_id": "NW516", "crew_id": "CPT-305"}),
               Call("assign_crew", {"flight_id": "NW516", "crew_id": "CPT-302", "position": "captain"})],
    answer="Three violations fixed. NW512: FO-301 Per Aas (A320 rating expired 2025-11-01) replaced by FO-304 Dag "
           "Hov (29.5 h -> 32.5 h). NW514: FA-310 Nina Moe (57.5 + 3.0 = 60.5 h) replaced by FA-311 Ole Rud (35.0 h "
           "-> 38.0 h). NW516: CPT-305 Vidar Lien (on leave) replaced by CPT-302 Morten Ask (42.0 h -> 46.5 h). "
           "FA-312 Berit Holt on NW512 is exactly at 60.0 h, which is legal; NW520 is fully legal.",
    wrong=[Call("list_flights", {"origin": "TRD"}),
           Call("get_flight", {"flight_id": "NW512"}),
           Call("get_flight", {"flight_id": "NW514"}),
           Call("get_flight", {"flight_id": "NW516"}),
           Call("search_crew", {"base": "TRD"}),
           Call("remove_crew", {"flight_id": "NW512", "crew_id": "FO-301"}),
           Call("assign_crew", {"flight_id": "NW512", "crew_id": "FO-304", "position": "first_officer"}),
           Call("remove_crew", {"flight_id": "NW512", "crew_id": "FA-312"}),
           Call("assign_crew", {"flight_id": "NW512", "crew_id": "FA-315", "position": "cabin"}),
           Call("remove_crew", {"flight_id": "NW516", "crew_id": "CPT-305"}),
           Call("assign_crew", {"flight_id": "NW516", "crew_id": "CPT-302", "position": "captain"})],
    wrong_answer="Replaced FO-301 with FO-304 on NW512, FA-312 (at the 60-hour limit) with FA-315 on NW512, and "
                 "CPT-305 (on leave) with CPT-302 on NW516.",
    rubric="TRD departures: NW512, NW514, NW516, NW520 (NW522 is cancelled). Violations: FO-301 on NW512 (A320 "
           "rating expired 2025-11-01) -> FO-304 (29.5 h; FO-302 31.0, FO-306 44.0 also legal; FO-305 sick); "
           "FA-310 on NW514 (57.5 + 3.0 = 60.5 h) -> FA-311 (35.0 h; FA-314's ATR72 rating expired, FA-315 has no "
           "ATR72 rating, FA-313 is already on NW514, FA-321 37.0 h and FA-322 43.0 h qualify but have more hours); "
           "CPT-305 on NW516 (on leave) -> CPT-302 (42.0 h; CPT-306's A320 rating expired, CPT-303/CPT-304 are "
           "ATR72 only, CPT-301 48.0 h). FA-312 on NW512 totals exactly 60.0 h, which is within the limit and must "
           "stay. No crew status changes.",
))
