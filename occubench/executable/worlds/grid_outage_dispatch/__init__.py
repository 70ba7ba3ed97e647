"""Power distribution outage dispatch: feeders with ratings and loads, tie switches, outages with customers and
critical facilities, repair crews with skills and shifts, and work orders."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any, Literal

from occubench.executable.world import (
    Call,
    Check,
    ExecTask,
    ToolError,
    World,
    found,
    mentions_number,
    next_id,
    one,
    only_changed,
    rows,
    scalar,
)

world = World(
    name="grid_outage_dispatch", scenario="Distribution Outage Dispatch", category="Industrial & Engineering",
    domain="Power Distribution", directory=Path(__file__).parent,
    main_tables=("feeders", "outages", "crews", "work_orders"),
    description="A utility's distribution control room at 14:00 on a stormy 2025-11-14: substations and feeders "
                "with ratings and live loads, tie switches between feeders, outages with customers affected, "
                "critical facilities and the skill needed, repair crews with skills, districts and shifts, and "
                "the work orders that send crews to outages.",
)

NOW = "2025-11-14 14:00"
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$")


def _outage(db: sqlite3.Connection, outage_id: str) -> dict[str, Any]:
    return found(db, "SELECT * FROM outages WHERE outage_id = ?", outage_id, missing=f"outage {outage_id} not found")


def _crew(db: sqlite3.Connection, crew_id: str) -> dict[str, Any]:
    return found(db, "SELECT * FROM crews WHERE crew_id = ?", crew_id, missing=f"crew {crew_id} not found")


def _feeder(db: sqlite3.Connection, feeder_id: str) -> dict[str, Any]:
    return found(db, "SELECT * FROM feeders WHERE feeder_id = ?", feeder_id, missing=f"feeder {feeder_id} not found")


def _facilities(text: str) -> list[str]:
    return [name.strip() for name in text.split(";") if name.strip()]


def _skills(crew: dict[str, Any]) -> list[str]:
    return [skill.strip() for skill in crew["skills"].split(",") if skill.strip()]


def _pct(load: float, rating: float) -> float:
    return round(100 * load / rating, 1)


def _refresh_feeder(db: sqlite3.Connection, feeder_id: str) -> None:
    feeder = _feeder(db, feeder_id)
    if feeder["status"] == "de-energized" or feeder["status"] == "backfed":
        return
    active = scalar(db, "SELECT COUNT(*) FROM outages WHERE feeder_id = ? AND status <> 'restored'", feeder_id)
    db.execute("UPDATE feeders SET status = ? WHERE feeder_id = ?", ("partial" if active else "energized", feeder_id))


@world.tool
def list_outages(db: sqlite3.Connection, status: Literal["reported", "dispatched", "backfed", "restored"] | None = None,
                 district: str | None = None, feeder_id: str | None = None) -> dict[str, Any]:
    """Outages with their feeder, location, customers affected, number of critical facilities, required crew skill
    and status (reported = no crew yet).

    Args:
        status: reported, dispatched, backfed or restored.
        district: Central, Riverside, Northgate, Hillcrest or Eastfield.
        feeder_id: Only outages on this feeder, e.g. F-204.
    """
    found = rows(db, "SELECT outage_id, feeder_id, district, location, cause, reported_at, customers_affected, "
                     "critical_facilities, required_skill, status FROM outages WHERE (? IS NULL OR status = ?) AND "
                     "(? IS NULL OR district = ?) AND (? IS NULL OR feeder_id = ?) ORDER BY outage_id",
                     status, status, district, district, feeder_id, feeder_id)
    for outage in found:
        outage["critical_facility_count"] = len(_facilities(outage.pop("critical_facilities")))
    return {"outages": found, "count": len(found)}


@world.tool
def get_outage(db: sqlite3.Connection, outage_id: str) -> dict[str, Any]:
    """Everything about one outage: critical facilities by name, interrupted load, status and its work orders.

    Args:
        outage_id: Outage identifier, e.g. OUT-2214.
    """
    outage = _outage(db, outage_id)
    outage["critical_facilities"] = _facilities(outage["critical_facilities"])
    outage["work_orders"] = rows(db, "SELECT wo_id, crew_id, created_at, status, closed_at, notes FROM work_orders "
                                     "WHERE outage_id = ? ORDER BY wo_id", outage_id)
    return outage


@world.tool
def list_crews(db: sqlite3.Connection, status: Literal["available", "assigned", "off_shift"] | None = None,
               skill: Literal["overhead", "underground", "tree", "substation"] | None = None,
               district: str | None = None) -> dict[str, Any]:
    """Repair crews with their skills, home district, shift window and status.

    Args:
        status: available, assigned or off_shift.
        skill: Only crews with this skill: overhead, underground, tree or substation.
        district: Only crews based in this district.
    """
    found = [dict(c, skills=_skills(c)) for c in rows(
        db, "SELECT * FROM crews WHERE (? IS NULL OR status = ?) AND (? IS NULL OR district = ?) ORDER BY crew_id",
        status, status, district, district)]
    if skill is not None:
        found = [c for c in found if skill in c["skills"]]
    return {"now": NOW, "crews": found, "count": len(found)}


@world.tool
def list_work_orders(db: sqlite3.Connection, crew_id: str | None = None, outage_id: str | None = None,
                     status: Literal["open", "closed", "cancelled"] | None = None) -> dict[str, Any]:
    """Work orders (a crew sent to an outage), optionally filtered.

    Args:
        crew_id: Only this crew's work orders, e.g. CR-07.
        outage_id: Only work orders for this outage.
        status: open, closed or cancelled.
    """
    found = rows(db, "SELECT w.*, o.location, o.feeder_id FROM work_orders w JOIN outages o USING (outage_id) "
                     "WHERE (? IS NULL OR w.crew_id = ?) AND (? IS NULL OR w.outage_id = ?) AND "
                     "(? IS NULL OR w.status = ?) ORDER BY w.wo_id",
                     crew_id, crew_id, outage_id, outage_id, status, status)
    return {"work_orders": found, "count": len(found)}


@world.tool
def get_feeder(db: sqlite3.Connection, feeder_id: str) -> dict[str, Any]:
    """A feeder's rating, present load and loading, its tie switches to other feeders and its active outages.

    Args:
        feeder_id: Feeder identifier, e.g. F-301.
    """
    feeder = _feeder(db, feeder_id)
    feeder["loading_pct"] = _pct(feeder["load_mw"], feeder["rating_mw"])
    feeder["tie_switches"] = rows(db, "SELECT switch_id, CASE WHEN feeder_a = ? THEN feeder_b ELSE feeder_a END AS "
                                      "other_feeder, location, status, note FROM tie_switches WHERE feeder_a = ? OR "
                                      "feeder_b = ? ORDER BY switch_id", feeder_id, feeder_id, feeder_id)
    feeder["active_outages"] = rows(db, "SELECT outage_id, location, customers_affected, load_mw, status FROM "
                                        "outages WHERE feeder_id = ? AND status <> 'restored' ORDER BY outage_id",
                                    feeder_id)
    return feeder


@world.tool(writes=True)
def dispatch_crew(db: sqlite3.Connection, outage_id: str, crew_id: str) -> dict[str, Any]:
    """Send an available, on-shift crew with the required skill to an outage, opening a work order.

    Args:
        outage_id: The outage, e.g. OUT-2214.
        crew_id: The crew to send, e.g. CR-05.
    """
    outage = _outage(db, outage_id)
    if outage["status"] not in ("reported", "backfed"):
        raise ToolError(f"outage {outage_id} is {outage['status']}; only reported or backfed outages need a crew")
    if one(db, "SELECT 1 FROM work_orders WHERE outage_id = ? AND status = 'open'", outage_id):
        raise ToolError(f"outage {outage_id} already has an open work order")
    crew = _crew(db, crew_id)
    if crew["status"] != "available":
        raise ToolError(f"crew {crew_id} is {crew['status'].replace('_', ' ')}, not available")
    if not crew["shift_start"] <= NOW < crew["shift_end"]:
        raise ToolError(f"crew {crew_id} is not on shift (shift {crew['shift_start']} to {crew['shift_end']})")
    if outage["required_skill"] not in _skills(crew):
        raise ToolError(f"outage {outage_id} needs the {outage['required_skill']} skill; {crew_id} has "
                        f"{crew['skills']}")
    wo_id = next_id(db, "work_orders", "wo_id", "WO-", 3300)
    db.execute("INSERT INTO work_orders (wo_id, outage_id, crew_id, created_at, status) VALUES (?, ?, ?, ?, 'open')",
               (wo_id, outage_id, crew_id, NOW))
    db.execute("UPDATE crews SET status = 'assigned' WHERE crew_id = ?", (crew_id,))
    if outage["status"] == "reported":
        db.execute("UPDATE outages SET status = 'dispatched' WHERE outage_id = ?", (outage_id,))
    return {"wo_id": wo_id, "outage_id": outage_id, "crew_id": crew_id, "crew_shift_end": crew["shift_end"]}


@world.tool(writes=True)
def restore_outage(db: sqlite3.Connection, outage_id: str, restored_at: str) -> dict[str, Any]:
    """Record that a crew's repair has put customers back on supply; the outage's load returns to its feeder (a
    backfeed tie switch is opened again).

    Args:
        outage_id: The repaired outage.
        restored_at: When supply was restored, YYYY-MM-DD HH:MM (not in the future).
    """
    outage = _outage(db, outage_id)
    if outage["status"] == "restored":
        raise ToolError(f"outage {outage_id} was already restored at {outage['restored_at']}")
    if not one(db, "SELECT 1 FROM work_orders WHERE outage_id = ? AND status = 'open'", outage_id):
        raise ToolError(f"outage {outage_id} has no crew on an open work order; it cannot have been repaired")
    if not _TIME.match(restored_at):
        raise ToolError("restored_at must be YYYY-MM-DD HH:MM")
    if not outage["reported_at"] <= restored_at <= NOW:
        raise ToolError(f"restored_at must be between {outage['reported_at']} (reported) and {NOW} (now)")
    if outage["backfeed_switch"]:
        switch = found(db, "SELECT * FROM tie_switches WHERE switch_id = ?", outage["backfeed_switch"],
                       missing=f"tie switch {outage['backfeed_switch']} not found")
        other = switch["feeder_b"] if switch["feeder_a"] == outage["feeder_id"] else switch["feeder_a"]
        db.execute("UPDATE tie_switches SET status = 'open' WHERE switch_id = ?", (switch["switch_id"],))
        db.execute("UPDATE feeders SET load_mw = ROUND(load_mw - ?, 2) WHERE feeder_id = ?", (outage["load_mw"], other))
        db.execute("UPDATE feeders SET status = 'partial' WHERE feeder_id = ?", (outage["feeder_id"],))
    elif _feeder(db, outage["feeder_id"])["status"] == "de-energized":
        db.execute("UPDATE feeders SET status = 'partial' WHERE feeder_id = ?", (outage["feeder_id"],))
    db.execute("UPDATE feeders SET load_mw = ROUND(load_mw + ?, 2) WHERE feeder_id = ?",
               (outage["load_mw"], outage["feeder_id"]))
    db.execute("UPDATE outages SET status = 'restored', restored_at = ? WHERE outage_id = ?", (restored_at, outage_id))
    _refresh_feeder(db, outage["feeder_id"])
    return {"outage_id": outage_id, "status": "restored", "restored_at": restored_at,
            "customers_restored": outage["customers_affected"], "feeder": _feeder(db, outage["feeder_id"])}


@world.tool(writes=True)
def close_work_order(db: sqlite3.Connection, wo_id: str, notes: str) -> dict[str, Any]:
    """Close a work order once its outage is restored; the crew becomes available again (or goes off shift).

    Args:
        wo_id: The work order, e.g. WO-3309.
        notes: What the crew did.
    """
    order = one(db, "SELECT * FROM work_orders WHERE wo_id = ?", wo_id)
    if order is None:
        raise ToolError(f"work order {wo_id} not found")
    if order["status"] != "open":
        raise ToolError(f"work order {wo_id} is already {order['status']}")
    outage = _outage(db, order["outage_id"])
    if outage["status"] != "restored":
        raise ToolError(f"outage {outage['outage_id']} is still {outage['status']}; restore it before closing {wo_id}")
    db.execute("UPDATE work_orders SET status = 'closed', closed_at = ?, notes = ? WHERE wo_id = ?",
               (NOW, notes, wo_id))
    crew = _crew(db, order["crew_id"])
    busy = one(db, "SELECT 1 FROM work_orders WHERE crew_id = ? AND status = 'open'", crew["crew_id"])
    if not busy:
        status = "available" if crew["shift_start"] <= NOW < crew["shift_end"] else "off_shift"
        db.execute("UPDATE crews SET status = ? WHERE crew_id = ?", (status, crew["crew_id"]))
    return {"wo_id": wo_id, "status": "closed", "crew_id": crew["crew_id"],
            "crew_status": _crew(db, crew["crew_id"])["status"]}


@world.tool(writes=True)
def close_tie_switch(db: sqlite3.Connection, switch_id: str, outage_id: str) -> dict[str, Any]:
    """Backfeed a de-energized feeder: close a tie switch so the adjacent feeder picks up the outage's load. The
    switch is refused only if the adjacent feeder would exceed 100% of its rating; planning margins are the
    operator's call.

    Args:
        switch_id: The tie switch to close, e.g. TS-14.
        outage_id: The outage whose customers are picked up.
    """
    switch = one(db, "SELECT * FROM tie_switches WHERE switch_id = ?", switch_id)
    if switch is None:
        raise ToolError(f"tie switch {switch_id} not found")
    if switch["status"] != "open":
        raise ToolError(f"tie switch {switch_id} is {switch['status']}" + (f" ({switch['note']})" if switch["note"]
                                                                           else "") + "; it cannot be closed")
    outage = _outage(db, outage_id)
    if outage["status"] not in ("reported", "dispatched"):
        raise ToolError(f"outage {outage_id} is {outage['status']}")
    if outage["feeder_id"] not in (switch["feeder_a"], switch["feeder_b"]):
        raise ToolError(f"tie switch {switch_id} does not connect to feeder {outage['feeder_id']}")
    source = _feeder(db, outage["feeder_id"])
    if source["status"] != "de-energized":
        raise ToolError(f"feeder {source['feeder_id']} is {source['status']}; only a fully de-energized, isolated "
                        "feeder can be backfed through a tie")
    other = _feeder(db, switch["feeder_b"] if switch["feeder_a"] == source["feeder_id"] else switch["feeder_a"])
    if other["status"] not in ("energized", "partial"):
        raise ToolError(f"feeder {other['feeder_id']} is {other['status']} and cannot pick up load")
    new_load = round(other["load_mw"] + outage["load_mw"], 2)
    if new_load > other["rating_mw"]:
        raise ToolError(f"feeder {other['feeder_id']} would carry {new_load} MW, above its {other['rating_mw']} MW "
                        "rating; protection would trip")
    db.execute("UPDATE tie_switches SET status = 'closed' WHERE switch_id = ?", (switch_id,))
    db.execute("UPDATE feeders SET load_mw = ? WHERE feeder_id = ?", (new_load, other["feeder_id"]))
    db.execute("UPDATE feeders SET status = 'backfed' WHERE feeder_id = ?", (source["feeder_id"],))
    db.execute("UPDATE outages SET status = 'backfed', backfeed_switch = ? WHERE outage_id = ?", (switch_id, outage_id))
    return {"switch_id": switch_id, "status": "closed", "outage_id": outage_id,
            "customers_picked_up": outage["customers_affected"], "receiving_feeder": other["feeder_id"],
            "receiving_load_mw": new_load, "receiving_rating_mw": other["rating_mw"]}


# --- tasks --------------------------------------------------------------------------------------------------------

def _verify_restoration(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    outage = one(final, "SELECT * FROM outages WHERE outage_id = 'OUT-2207'") or {}
    order = one(final, "SELECT * FROM work_orders WHERE wo_id = 'WO-3309'") or {}
    crew = one(final, "SELECT * FROM crews WHERE crew_id = 'CR-07'") or {}
    feeder = one(final, "SELECT * FROM feeders WHERE feeder_id = 'F-204'") or {}
    return [
        Check("OUT-2207 restored at 13:52", (outage.get("status"), outage.get("restored_at")) ==
              ("restored", "2025-11-14 13:52"), f"{outage.get('status')} at {outage.get('restored_at')}"),
        Check("WO-3309 closed with a note",
              order.get("status") == "closed" and bool((order.get("notes") or "").strip()),
              f"status {order.get('status')}, notes {order.get('notes')!r}"),
        Check("CR-07 available again", crew.get("status") == "available", f"status {crew.get('status')}"),
        Check("F-204 carries the restored 0.9 MW (5.8 MW) and stays partial (OUT-2205 still out)",
              abs((feeder.get("load_mw") or 0) - 5.8) < 0.01 and feeder.get("status") == "partial",
              f"{feeder.get('load_mw')} MW, {feeder.get('status')}"),
        only_changed(initial, final, "outages", "outage_id", {"OUT-2207"}),
        only_changed(initial, final, "work_orders", "wo_id", {"WO-3309"}),
        only_changed(initial, final, "crews", "crew_id", {"CR-07"}),
        Check("answer states the 312 customers restored", mentions_number(answer, 312)),
    ]


world.task(ExecTask(
    id="close_repaired_outage", difficulty=1,
    instruction="Crew CR-07 just radioed in: their Elm Street repair on feeder F-204 is finished and customers were "
                "back on supply at 13:52 today. Record the restoration, close the crew's work order with a short note "
                "of the work done, and tell me how many customers got their power back.",
    verify=_verify_restoration,
    reference=[Call("list_work_orders", {"crew_id": "CR-07", "status": "open"}),
               Call("get_outage", {"outage_id": "OUT-2207"}),
               Call("restore_outage", {"outage_id": "OUT-2207", "restored_at": "2025-11-14 13:52"}),
               Call("close_work_order", {"wo_id": "WO-3309", "notes": "repaired downed conductor at Elm St & Linden "
                                                                       "Ave; supply restored 13:52"})],
    answer="OUT-2207 (Elm St & Linden Ave, downed conductor) is restored as of 13:52 and CR-07's work order WO-3309 is "
           "closed; 312 customers are back on. CR-07 is available again.",
    wrong=[Call("list_outages", {"feeder_id": "F-204", "status": "dispatched"}),
           Call("get_outage", {"outage_id": "OUT-2205"}),
           Call("restore_outage", {"outage_id": "OUT-2205", "restored_at": "2025-11-14 13:52"}),
           Call("close_work_order", {"wo_id": "WO-3308", "notes": "Elm St repair complete"})],
    wrong_answer="The Elm St outage OUT-2205 is restored and WO-3308 closed; 156 customers are back on.",
    rubric="CR-07's open work order is WO-3309 for OUT-2207 (Elm St & Linden Ave, 312 customers, 0.9 MW). Restore "
           "OUT-2207 at 2025-11-14 13:52, close WO-3309, CR-07 becomes available, F-204 rises from 4.9 to 5.8 MW and "
           "stays partial because OUT-2205 (Elm St north, CR-09) is still out. Restoring OUT-2205, the first Elm St "
           "outage on F-204, is wrong.",
))


def _verify_backfeed(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    switches = {s["switch_id"]: s["status"] for s in rows(final, "SELECT * FROM tie_switches")}
    outage = one(final, "SELECT * FROM outages WHERE outage_id = 'OUT-2212'") or {}
    receiving = one(final, "SELECT * FROM feeders WHERE feeder_id = 'F-405'") or {}
    return [
        Check("TS-15 (to F-405) closed", switches.get("TS-15") == "closed", f"TS-15 is {switches.get('TS-15')}"),
        Check("OUT-2212 backfed through TS-15",
              (outage.get("status"), outage.get("backfeed_switch")) == ("backfed", "TS-15"),
              f"{outage.get('status')} via {outage.get('backfeed_switch')}"),
        Check("F-405 carries 5.0 + 3.6 = 8.6 MW", abs((receiving.get("load_mw") or 0) - 8.6) < 0.01,
              f"F-405 load {receiving.get('load_mw')}"),
        only_changed(initial, final, "tie_switches", "switch_id", {"TS-15"}),
        only_changed(initial, final, "feeders", "feeder_id", {"F-301", "F-405"}),
        only_changed(initial, final, "outages", "outage_id", {"OUT-2212"}),
        Check("answer names TS-15 and the 71.7% loading", "TS-15" in answer and mentions_number(answer, 71.7, 0.05)),
    ]


world.task(ExecTask(
    id="backfeed_through_tie", difficulty=2,
    instruction="OUT-2212 is a breaker failure at Northgate substation that has taken the whole of feeder F-301 "
                "out, and no substation crew is on shift until tonight. Get those customers back by backfeeding "
                "F-301 through one of its tie switches. The feeder that picks up the load must stay at or below 90% "
                "of its rating afterwards; if more than one tie qualifies, use the one that leaves the receiving "
                "feeder with the lowest percentage loading. Tell me which switch you closed and the receiving "
                "feeder's loading afterwards.",
    verify=_verify_backfeed,
    reference=[Call("get_outage", {"outage_id": "OUT-2212"}),
               Call("get_feeder", {"feeder_id": "F-301"}),
               Call("get_feeder", {"feeder_id": "F-302"}),
               Call("get_feeder", {"feeder_id": "F-405"}),
               Call("get_feeder", {"feeder_id": "F-505"}),
               Call("close_tie_switch", {"switch_id": "TS-15", "outage_id": "OUT-2212"})],
    answer="Closed TS-15: F-405 picks up F-301's 3.6 MW and goes from 5.0 to 8.6 MW of its 12.0 MW rating, 71.7% "
           "loaded. TS-14 would put F-302 at 98.0% and TS-16 would put F-505 at 85.0%; TS-17 is tagged out of "
           "service. All 1,840 customers of OUT-2212 are back on via the backfeed.",
    wrong=[Call("get_outage", {"outage_id": "OUT-2212"}),
           Call("get_feeder", {"feeder_id": "F-301"}),
           Call("get_feeder", {"feeder_id": "F-302"}),
           Call("close_tie_switch", {"switch_id": "TS-14", "outage_id": "OUT-2212"})],
    wrong_answer="Closed TS-14: F-302 now carries 9.8 MW of its 10.0 MW rating (98%) and OUT-2212 is backfed.",
    rubric="OUT-2212 interrupts 3.6 MW on F-301. Ties: TS-14 to F-302 (6.2 + 3.6 = 9.8 of 10.0 MW = 98%, over 90%); "
           "TS-15 to F-405 (5.0 + 3.6 = 8.6 of 12.0 = 71.7%); TS-16 to F-505 (3.2 + 3.6 = 6.8 of 8.0 = 85.0%); "
           "TS-17 to F-303 is out of service. Both TS-15 and TS-16 qualify; TS-15 gives the lowest loading. "
           "Closing TS-14, the first tie listed, is wrong.",
))

_DISPATCH = {("OUT-2214", "CR-05"), ("OUT-2217", "CR-08"), ("OUT-2216", "CR-04"), ("OUT-2215", "CR-11")}


def _verify_dispatch(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    old = {w["wo_id"] for w in rows(initial, "SELECT wo_id FROM work_orders")}
    new = [w for w in rows(final, "SELECT * FROM work_orders") if w["wo_id"] not in old]
    pairs = {(w["outage_id"], w["crew_id"]) for w in new if w["status"] == "open"}
    status = {o["outage_id"]: o["status"] for o in rows(final, "SELECT * FROM outages")}
    return [
        Check("CR-05 -> OUT-2214 (hospital), CR-08 -> OUT-2217 (dialysis), CR-04 -> OUT-2216, CR-11 -> OUT-2215",
              pairs == _DISPATCH and len(new) == 4, f"new work orders {sorted(pairs)} ({len(new)} rows)"),
        Check("the four outages are dispatched",
              all(status.get(o) == "dispatched" for o, _ in _DISPATCH), f"statuses {status}"),
        Check("OUT-2212 (no substation crew) and OUT-2218 (no crew left) still waiting",
              status.get("OUT-2212") == "reported" and status.get("OUT-2218") == "reported"),
        only_changed(initial, final, "outages", "outage_id", {o for o, _ in _DISPATCH}),
        only_changed(initial, final, "crews", "crew_id", {c for _, c in _DISPATCH}),
        only_changed(initial, final, "work_orders", "wo_id", {w["wo_id"] for w in new}),
        Check("answer names the outages still waiting", "OUT-2212" in answer and "OUT-2218" in answer),
    ]


world.task(ExecTask(
    id="dispatch_by_priority", difficulty=3,
    instruction="It is 14:00. Send the available crews to the outages that have no crew yet, working down the "
                "priority list: outages affecting critical facilities come first (more critical facilities first), "
                "then the rest by customers affected, most first. For each outage in that order, use an available "
                "crew with the outage's required skill whose shift runs until at least 18:00, preferring a crew "
                "based in the outage's district and otherwise any qualifying crew. One outage per crew; an outage "
                "with no qualifying crew left waits. Tell me which crew went where and which outages are still "
                "waiting.",
    verify=_verify_dispatch,
    reference=[Call("list_outages", {"status": "reported"}),
               Call("get_outage", {"outage_id": "OUT-2212"}),
               Call("get_outage", {"outage_id": "OUT-2214"}),
               Call("get_outage", {"outage_id": "OUT-2217"}),
               Call("list_crews", {"status": "available"}),
               Call("dispatch_crew", {"outage_id": "OUT-2214", "crew_id": "CR-05"}),
               Call("dispatch_crew", {"outage_id": "OUT-2217", "crew_id": "CR-08"}),
               Call("dispatch_crew", {"outage_id": "OUT-2216", "crew_id": "CR-04"}),
               Call("dispatch_crew", {"outage_id": "OUT-2215", "crew_id": "CR-11"})],
    answer="Priority order: OUT-2212 (pumping station, 1,840) - no substation crew available, waits; OUT-2214 (St. "
           "Olav Hospital, 420) -> CR-05 (Riverside; CR-02's shift ends 14:30); OUT-2217 (dialysis center, 85, "
           "tree) -> CR-08 (Hillcrest; CR-12's shift ends 15:00); OUT-2216 (1,150) -> CR-04; OUT-2215 (960, "
           "underground) -> CR-11. OUT-2218 (35 customers) waits: no qualifying crew left.",
    wrong=[Call("list_outages", {"status": "reported"}),
           Call("list_crews", {"status": "available"}),
           Call("dispatch_crew", {"outage_id": "OUT-2214", "crew_id": "CR-02"}),
           Call("dispatch_crew", {"outage_id": "OUT-2217", "crew_id": "CR-05"}),
           Call("dispatch_crew", {"outage_id": "OUT-2216", "crew_id": "CR-04"}),
           Call("dispatch_crew", {"outage_id": "OUT-2215", "crew_id": "CR-11"})],
    wrong_answer="Dispatched the local crews: CR-02 to OUT-2214, CR-05 to OUT-2217, CR-04 to OUT-2216, CR-11 to "
                 "OUT-2215. OUT-2212 and OUT-2218 wait.",
    rubric="Reported outages by priority: OUT-2212 (1 critical, 1,840, substation), OUT-2214 (1 critical, 420, "
           "overhead, Riverside), OUT-2217 (1 critical, 85, tree, Riverside), OUT-2216 (1,150, overhead, "
           "Hillcrest), OUT-2215 (960, underground, Eastfield), OUT-2218 (35, overhead, Northgate). Available "
           "crews whose shift reaches 18:00: CR-04 (overhead, Hillcrest), CR-05 (overhead+tree, Riverside), CR-08 "
           "(tree+overhead, Hillcrest), CR-11 (underground, Eastfield); CR-01, CR-02 (end 14:30) and CR-12 (ends "
           "15:00) do not qualify and no substation crew is available. So OUT-2214 -> CR-05, OUT-2217 -> CR-08, "
           "OUT-2216 -> CR-04, OUT-2215 -> CR-11; OUT-2212 and OUT-2218 wait. Sending CR-02 (shift ends 14:30) to "
           "the hospital is wrong.",
))
