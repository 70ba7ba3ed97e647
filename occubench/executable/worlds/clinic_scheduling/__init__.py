"""Outpatient clinic scheduling: book referrals into clinicians' slots, cover clinician absences, cancel
appointments and backfill freed slots from the waitlist."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any, Literal

from occubench.executable.world import Call, Check, ExecTask, ToolError, World, found, next_id, one, only_changed, rows

#: The booking system's business date: slots before it cannot be booked.
TODAY = "2025-11-10"

world = World(
    name="clinic_scheduling", scenario="Outpatient Clinic Scheduling", category="Healthcare & Life Sciences",
    domain="Outpatient Care", directory=Path(__file__).parent,
    main_tables=("patients", "referrals", "slots", "appointments"),
    description="An outpatient booking office: clinicians with specialties and bookable slots (new-patient or "
                "follow-up), GP referrals with urgency, appointments, a waitlist and clinician absences. The "
                f"business date is {TODAY}.",
)

_URGENCY = Literal["urgent", "soon", "routine"]


def _slot(db: sqlite3.Connection, slot_id: str) -> dict[str, Any]:
    slot = one(db, "SELECT s.*, c.name AS clinician_name, c.specialty, c.site FROM slots s "
                   "JOIN clinicians c ON c.clinician_id = s.clinician_id WHERE s.slot_id = ?", slot_id)
    if slot is None:
        raise ToolError(f"slot {slot_id} not found")
    return slot


def _appointment(db: sqlite3.Connection, appt_id: str) -> dict[str, Any]:
    return found(db, "SELECT * FROM appointments WHERE appt_id = ?", appt_id,
                 missing=f"appointment {appt_id} not found")


def _bookable(db: sqlite3.Connection, slot_id: str) -> dict[str, Any]:
    slot = _slot(db, slot_id)
    if slot["status"] != "open":
        raise ToolError(f"slot {slot_id} is {slot['status']}, not open")
    if slot["starts_at"][:10] < TODAY:
        raise ToolError(f"slot {slot_id} ({slot['starts_at']}) is in the past")
    return slot


def _no_clash(db: sqlite3.Connection, patient_id: str, starts_at: str, except_appt: str | None = None) -> None:
    clash = one(db, "SELECT a.appt_id FROM appointments a JOIN slots s ON s.slot_id = a.slot_id WHERE a.patient_id = ? "
                    "AND a.status = 'booked' AND s.starts_at = ? AND a.appt_id IS NOT ?", patient_id, starts_at,
                except_appt)
    if clash:
        raise ToolError(f"patient {patient_id} already has appointment {clash['appt_id']} at {starts_at}")


def _release_slot(db: sqlite3.Connection, slot_id: str) -> str:
    """Free a slot: open again, or blocked if its clinician is absent that day."""
    slot = _slot(db, slot_id)
    absent = one(db, "SELECT 1 FROM absences WHERE clinician_id = ? AND absence_date = ?", slot["clinician_id"],
                 slot["starts_at"][:10])
    status = "blocked" if absent else "open"
    db.execute("UPDATE slots SET status = ? WHERE slot_id = ?", (status, slot_id))
    return status


@world.tool
def find_patient(db: sqlite3.Connection, name: str) -> dict[str, Any]:
    """Find patients by (part of) their name, with date of birth and GP practice.

    Args:
        name: Full or partial name, e.g. "Santos".
    """
    found = rows(db, "SELECT * FROM patients WHERE name LIKE ? ORDER BY patient_id", f"%{name.strip()}%")
    return {"patients": found, "count": len(found)}


@world.tool
def list_referrals(db: sqlite3.Connection, status: Literal["waiting", "booked", "closed"] | None = None,
                   specialty: str | None = None, urgency: _URGENCY | None = None) -> dict[str, Any]:
    """List GP referrals, optionally filtered.

    Args:
        status: waiting (not yet booked), booked or closed.
        specialty: e.g. cardiology, dermatology, neurology.
        urgency: urgent, soon or routine.
    """
    found = rows(db, "SELECT r.*, p.name AS patient_name FROM referrals r "
                     "JOIN patients p ON p.patient_id = r.patient_id "
                     "WHERE (? IS NULL OR r.status = ?) AND (? IS NULL OR r.specialty = ?) "
                     "AND (? IS NULL OR r.urgency = ?) "
                     "ORDER BY r.received_on, r.referral_id", status, status, specialty, specialty, urgency, urgency)
    return {"referrals": found, "count": len(found)}


@world.tool
def find_open_slots(db: sqlite3.Connection, specialty: str | None = None, clinician_id: str | None = None,
                    slot_type: Literal["new", "follow_up"] | None = None, from_date: str | None = None,
                    to_date: str | None = None) -> dict[str, Any]:
    """Open (bookable) slots from today on, earliest first, with the clinician's name, specialty and site.

    Args:
        specialty: Only clinicians of exactly this specialty, e.g. cardiology.
        clinician_id: Only this clinician, e.g. CLN-02.
        slot_type: new (new-patient, 40 minutes) or follow_up (20 minutes).
        from_date: Earliest date, YYYY-MM-DD.
        to_date: Latest date, YYYY-MM-DD (inclusive).
    """
    found = rows(db, "SELECT s.slot_id, s.starts_at, s.minutes, s.slot_type, s.clinician_id, c.name AS clinician_name, "
                     "c.specialty, c.site FROM slots s JOIN clinicians c ON c.clinician_id = s.clinician_id "
                     "WHERE s.status = 'open' AND substr(s.starts_at, 1, 10) >= ? "
                     "AND (? IS NULL OR c.specialty = ?) AND (? IS NULL OR s.clinician_id = ?) "
                     "AND (? IS NULL OR s.slot_type = ?) AND (? IS NULL OR substr(s.starts_at, 1, 10) >= ?) "
                     "AND (? IS NULL OR substr(s.starts_at, 1, 10) <= ?) ORDER BY s.starts_at, s.slot_id",
                 TODAY, specialty, specialty, clinician_id, clinician_id, slot_type, slot_type, from_date, from_date,
                 to_date, to_date)
    return {"slots": found, "count": len(found)}


@world.tool
def list_appointments(db: sqlite3.Connection, patient_id: str | None = None, clinician_id: str | None = None,
                      date: str | None = None,
                      status: Literal["booked", "cancelled", "attended", "no_show"] | None = None) -> dict[str, Any]:
    """Appointments with their slot time, clinician and patient, optionally filtered.

    Args:
        patient_id: Only this patient's appointments, e.g. PAT-2005.
        clinician_id: Only this clinician's appointments.
        date: Only appointments on this day, YYYY-MM-DD.
        status: booked, cancelled, attended or no_show.
    """
    found = rows(db, "SELECT a.appt_id, a.patient_id, p.name AS patient_name, a.slot_id, s.starts_at, s.slot_type, "
                     "s.clinician_id, c.name AS clinician_name, c.specialty, a.referral_id, a.status, a.note "
                     "FROM appointments a JOIN slots s ON s.slot_id = a.slot_id "
                     "JOIN clinicians c ON c.clinician_id = s.clinician_id "
                     "JOIN patients p ON p.patient_id = a.patient_id "
                     "WHERE (? IS NULL OR a.patient_id = ?) AND (? IS NULL OR s.clinician_id = ?) "
                     "AND (? IS NULL OR substr(s.starts_at, 1, 10) = ?) AND (? IS NULL OR a.status = ?) "
                     "ORDER BY s.starts_at, a.appt_id", patient_id, patient_id, clinician_id, clinician_id, date, date,
                 status, status)
    return {"appointments": found, "count": len(found)}


@world.tool
def list_waitlist(db: sqlite3.Connection, specialty: str | None = None,
                  status: Literal["waiting", "booked", "removed"] | None = "waiting") -> dict[str, Any]:
    """Waitlist entries (patients waiting for an earlier or cancelled slot), with urgency, the date added, and any
    clinician the patient asked for.

    Args:
        specialty: e.g. neurology.
        status: waiting (default), booked or removed.
    """
    found = rows(db, "SELECT w.*, p.name AS patient_name, c.name AS preferred_clinician_name FROM waitlist w "
                     "JOIN patients p ON p.patient_id = w.patient_id "
                     "LEFT JOIN clinicians c ON c.clinician_id = w.preferred_clinician_id "
                     "WHERE (? IS NULL OR w.specialty = ?) AND (? IS NULL OR w.status = ?) ORDER BY w.entry_id",
                 specialty, specialty, status, status)
    return {"entries": found, "count": len(found)}


@world.tool(writes=True)
def book_appointment(db: sqlite3.Connection, patient_id: str, slot_id: str, referral_id: str | None = None,
                     note: str | None = None) -> dict[str, Any]:
    """Book a patient into an open slot. Booked against a referral, the referral (and its waitlist entry, if any)
    becomes booked; the referral must be the patient's, waiting, and for the clinician's specialty.

    Args:
        patient_id: The patient, e.g. PAT-2011.
        slot_id: An open slot, e.g. S-104.
        referral_id: The referral this appointment is for, e.g. REF-3011.
        note: Optional booking note.
    """
    if one(db, "SELECT 1 FROM patients WHERE patient_id = ?", patient_id) is None:
        raise ToolError(f"patient {patient_id} not found")
    slot = _bookable(db, slot_id)
    _no_clash(db, patient_id, slot["starts_at"])
    if referral_id is not None:
        referral = one(db, "SELECT * FROM referrals WHERE referral_id = ?", referral_id)
        if referral is None:
            raise ToolError(f"referral {referral_id} not found")
        if referral["patient_id"] != patient_id:
            raise ToolError(f"referral {referral_id} belongs to {referral['patient_id']}, not {patient_id}")
        if referral["status"] != "waiting":
            raise ToolError(f"referral {referral_id} is {referral['status']}, not waiting")
        if referral["specialty"] != slot["specialty"]:
            raise ToolError(f"referral {referral_id} is for {referral['specialty']}; {slot['clinician_name']} is "
                            f"{slot['specialty']}")
        db.execute("UPDATE referrals SET status = 'booked' WHERE referral_id = ?", (referral_id,))
        db.execute("UPDATE waitlist SET status = 'booked' WHERE referral_id = ? AND status = 'waiting'", (referral_id,))
    appt_id = next_id(db, "appointments", "appt_id", "APT-", 4000)
    db.execute("INSERT INTO appointments VALUES (?, ?, ?, ?, 'booked', ?, ?)",
               (appt_id, patient_id, slot_id, referral_id, TODAY, note))
    db.execute("UPDATE slots SET status = 'booked' WHERE slot_id = ?", (slot_id,))
    return {"appt_id": appt_id, "patient_id": patient_id, "slot_id": slot_id, "starts_at": slot["starts_at"],
            "clinician": slot["clinician_name"], "site": slot["site"], "referral_id": referral_id}


@world.tool(writes=True)
def reschedule_appointment(db: sqlite3.Connection, appt_id: str, new_slot_id: str) -> dict[str, Any]:
    """Move a booked appointment to another open slot with a clinician of the same specialty; the old slot is
    freed (or stays blocked if its clinician is absent that day).

    Args:
        appt_id: The booked appointment, e.g. APT-4001.
        new_slot_id: The open slot to move it to.
    """
    appt = _appointment(db, appt_id)
    if appt["status"] != "booked":
        raise ToolError(f"appointment {appt_id} is {appt['status']}; only booked appointments can be moved")
    old, new = _slot(db, appt["slot_id"]), _bookable(db, new_slot_id)
    if new["specialty"] != old["specialty"]:
        raise ToolError(f"{new['clinician_name']} is {new['specialty']}; the appointment needs {old['specialty']}")
    _no_clash(db, appt["patient_id"], new["starts_at"], appt_id)
    db.execute("UPDATE appointments SET slot_id = ? WHERE appt_id = ?", (new_slot_id, appt_id))
    db.execute("UPDATE slots SET status = 'booked' WHERE slot_id = ?", (new_slot_id,))
    old_status = _release_slot(db, old["slot_id"])
    return {"appt_id": appt_id, "from": {"slot_id": old["slot_id"], "starts_at": old["starts_at"],
                                         "slot_now": old_status},
            "to": {"slot_id": new_slot_id, "starts_at": new["starts_at"], "clinician": new["clinician_name"],
                   "site": new["site"]}}


@world.tool(writes=True)
def cancel_appointment(db: sqlite3.Connection, appt_id: str, reason: str) -> dict[str, Any]:
    """Cancel a booked appointment: its slot opens again and its referral goes back to waiting (unless another
    booked appointment still uses it).

    Args:
        appt_id: The appointment to cancel.
        reason: Why it is cancelled.
    """
    appt = _appointment(db, appt_id)
    if appt["status"] != "booked":
        raise ToolError(f"appointment {appt_id} is {appt['status']}; only booked appointments can be cancelled")
    db.execute("UPDATE appointments SET status = 'cancelled', note = ? WHERE appt_id = ?", (reason, appt_id))
    slot_status = _release_slot(db, appt["slot_id"])
    referral_status = None
    if appt["referral_id"]:
        still = one(db, "SELECT 1 FROM appointments WHERE referral_id = ? AND status = 'booked'", appt["referral_id"])
        referral_status = "booked" if still else "waiting"
        db.execute("UPDATE referrals SET status = ? WHERE referral_id = ?", (referral_status, appt["referral_id"]))
    return {"appt_id": appt_id, "status": "cancelled", "slot_id": appt["slot_id"], "slot_now": slot_status,
            "referral_id": appt["referral_id"], "referral_now": referral_status}


@world.tool(writes=True)
def record_absence(db: sqlite3.Connection, clinician_id: str, date: str, reason: str) -> dict[str, Any]:
    """Record a clinician's absence for a day: their open slots that day are blocked, and the booked appointments
    that need moving are returned (they are not moved automatically).

    Args:
        clinician_id: The absent clinician, e.g. CLN-04.
        date: The day, YYYY-MM-DD.
        reason: e.g. sick leave.
    """
    if one(db, "SELECT 1 FROM clinicians WHERE clinician_id = ?", clinician_id) is None:
        raise ToolError(f"clinician {clinician_id} not found")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
        raise ToolError(f"date {date!r} must be YYYY-MM-DD")
    if one(db, "SELECT 1 FROM absences WHERE clinician_id = ? AND absence_date = ?", clinician_id, date):
        raise ToolError(f"{clinician_id} is already recorded absent on {date}")
    db.execute("INSERT INTO absences (clinician_id, absence_date, reason) VALUES (?, ?, ?)",
               (clinician_id, date, reason))
    blocked = db.execute("UPDATE slots SET status = 'blocked' WHERE clinician_id = ? AND status = 'open' "
                         "AND substr(starts_at, 1, 10) = ?", (clinician_id, date)).rowcount
    affected = list_appointments(db, clinician_id=clinician_id, date=date, status="booked")["appointments"]
    return {"clinician_id": clinician_id, "date": date, "open_slots_blocked": blocked,
            "appointments_to_move": affected}


# ---------------------------------------------------------------------------------------------------- tasks

def _new_appointments(initial: sqlite3.Connection, final: sqlite3.Connection) -> list[dict[str, Any]]:
    seen = {row["appt_id"] for row in rows(initial, "SELECT appt_id FROM appointments")}
    return [row for row in rows(final, "SELECT * FROM appointments ORDER BY appt_id") if row["appt_id"] not in seen]


def _field(db: sqlite3.Connection, table: str, key: str, value: str, column: str) -> Any:
    row = one(db, f'SELECT "{column}" AS v FROM "{table}" WHERE "{key}" = ?', value)  # names from the verifier
    return row["v"] if row else None


def _verify_urgent(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    new = [(a["patient_id"], a["slot_id"], a["referral_id"], a["status"]) for a in _new_appointments(initial, final)]
    return [
        Check("Tariq Aziz booked into S-104 (Dr. Iyer, 13 Nov 10:00) against REF-3011",
              new == [("PAT-2011", "S-104", "REF-3011", "booked")], f"new appointments {new}"),
        Check("S-104 booked", _field(final, "slots", "slot_id", "S-104", "status") == "booked"),
        Check("REF-3011 booked", _field(final, "referrals", "referral_id", "REF-3011", "status") == "booked"),
        only_changed(initial, final, "slots", "slot_id", {"S-104"}),
        only_changed(initial, final, "referrals", "referral_id", {"REF-3011"}),
        only_changed(initial, final, "appointments", "appt_id",
                     {a["appt_id"] for a in _new_appointments(initial, final)}),
        Check("answer names Dr. Iyer", "iyer" in answer.lower()),
    ]


world.task(ExecTask(
    id="book_urgent_cardiology", difficulty=1,
    instruction="There is an urgent cardiology referral waiting to be booked. Book the patient into the earliest "
                "open new-patient slot with a clinician of the referral's specialty, against the referral, and tell "
                "me who was booked, with whom, and when.",
    verify=_verify_urgent,
    reference=[Call("list_referrals", {"status": "waiting", "specialty": "cardiology", "urgency": "urgent"}),
               Call("find_open_slots", {"specialty": "cardiology", "slot_type": "new"}),
               Call("book_appointment", {"patient_id": "PAT-2011", "slot_id": "S-104", "referral_id": "REF-3011",
                                         "note": "Urgent: exertional chest pain"}),
               Call("list_appointments", {"patient_id": "PAT-2011"})],
    answer="Tariq Aziz (PAT-2011, urgent referral REF-3011) is booked with Dr. Rajesh Iyer at Central Outpatients "
           "on 2025-11-13 at 10:00 (slot S-104), the earliest open new-patient cardiology slot.",
    wrong=[Call("list_referrals", {"status": "waiting", "specialty": "cardiology", "urgency": "urgent"}),
           Call("find_open_slots", {"specialty": "cardiology"}),
           Call("book_appointment", {"patient_id": "PAT-2011", "slot_id": "S-102", "referral_id": "REF-3011"}),
           Call("list_appointments", {"patient_id": "PAT-2011"})],
    wrong_answer="Tariq Aziz is booked with Dr. Helen Marsh on 2025-11-12 at 09:00.",
    rubric="The only waiting urgent cardiology referral is REF-3011 (Tariq Aziz); REF-3017 is paediatric cardiology. "
           "The earliest open cardiology slot, S-102 (Dr. Marsh, 12 Nov 09:00), is a 20-minute follow-up slot; "
           "the earliest open new-patient cardiology slot is S-104, Dr. Rajesh Iyer, 2025-11-13 10:00.",
))

_MOVES = {"APT-4001": "S-212", "APT-4002": "S-211", "APT-4003": "S-214"}


def _verify_absence(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    moved = {appt: _field(final, "appointments", "appt_id", appt, "slot_id") for appt in _MOVES}
    absences = [(a["clinician_id"], a["absence_date"]) for a in rows(final, "SELECT * FROM absences")]
    old_slots = {s: _field(final, "slots", "slot_id", s, "status") for s in ("S-201", "S-202", "S-203", "S-204")}
    new_slots = {s: _field(final, "slots", "slot_id", s, "status") for s in _MOVES.values()}
    return [
        Check("Dr. Okafor's absence on 2025-11-13 recorded", ("CLN-04", "2025-11-13") in absences, f"{absences}"),
        Check("APT-4001 -> S-212, APT-4002 -> S-211, APT-4003 -> S-214 (Dr. Meyer, same slot type)",
              moved == _MOVES, f"now {moved}"),
        Check("all three still booked", all(_field(final, "appointments", "appt_id", a, "status") == "booked"
                                           for a in _MOVES)),
        Check("Dr. Okafor's 13 Nov slots all blocked", set(old_slots.values()) == {"blocked"}, f"{old_slots}"),
        Check("the new slots are booked", set(new_slots.values()) == {"booked"}, f"{new_slots}"),
        only_changed(initial, final, "appointments", "appt_id", set(_MOVES)),
        only_changed(initial, final, "slots", "slot_id", set(old_slots) | set(_MOVES.values())),
        only_changed(initial, final, "referrals", "referral_id", set()),
    ]


world.task(ExecTask(
    id="cover_dermatology_absence", difficulty=2,
    instruction="Dr. Amara Okafor (dermatology) is off sick on 2025-11-13. Record her absence, then move each of "
                "her appointments that day, in order of their original time, to the earliest open slot of the same "
                "type (new-patient or follow-up) with another dermatologist. Tell me where each patient now is.",
    verify=_verify_absence,
    reference=[Call("list_appointments", {"clinician_id": "CLN-04", "date": "2025-11-13", "status": "booked"}),
               Call("record_absence", {"clinician_id": "CLN-04", "date": "2025-11-13", "reason": "sick leave"}),
               Call("find_open_slots", {"specialty": "dermatology", "from_date": "2025-11-13"}),
               Call("reschedule_appointment", {"appt_id": "APT-4001", "new_slot_id": "S-212"}),
               Call("reschedule_appointment", {"appt_id": "APT-4002", "new_slot_id": "S-211"}),
               Call("reschedule_appointment", {"appt_id": "APT-4003", "new_slot_id": "S-214"})],
    answer="Absence recorded. Chloe Martin (APT-4001, new) -> Dr. Lukas Meyer 2025-11-14 09:00 (S-212); George "
           "Papadopoulos (APT-4002, follow-up) -> Dr. Meyer 2025-11-13 11:00 (S-211); Mohammed Rahimi (APT-4003, "
           "new) -> Dr. Meyer 2025-11-17 10:00 (S-214).",
    wrong=[Call("list_appointments", {"clinician_id": "CLN-04", "date": "2025-11-13", "status": "booked"}),
           Call("record_absence", {"clinician_id": "CLN-04", "date": "2025-11-13", "reason": "sick leave"}),
           Call("find_open_slots", {"specialty": "dermatology", "from_date": "2025-11-13"}),
           Call("reschedule_appointment", {"appt_id": "APT-4001", "new_slot_id": "S-212"}),
           Call("reschedule_appointment", {"appt_id": "APT-4002", "new_slot_id": "S-211"}),
           Call("reschedule_appointment", {"appt_id": "APT-4003", "new_slot_id": "S-220"})],
    wrong_answer="Moved APT-4001 to S-212, APT-4002 to S-211 and APT-4003 to S-220 (17 Nov 09:00).",
    rubric="Okafor's booked appointments on 13 Nov: APT-4001 09:00 new, APT-4002 09:40 follow-up, APT-4003 10:20 "
           "new; her open S-203 gets blocked. With Dr. Meyer (the other dermatologist): first new slot S-212 "
           "(14 Nov 09:00) to APT-4001, follow-up S-211 (13 Nov 11:00) to APT-4002, next new slot S-214 (17 Nov "
           "10:00) to APT-4003. S-220 (17 Nov 09:00) is earlier but is Dr. Okafor's own slot.",
))


def _verify_backfill(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    new = _new_appointments(initial, final)
    booked = [(a["patient_id"], a["slot_id"], a["referral_id"], a["status"]) for a in new]
    return [
        Check("APT-4010 (Maria Santos, born 1983) cancelled",
              _field(final, "appointments", "appt_id", "APT-4010", "status") == "cancelled"),
        Check("Laura Jensen booked into S-301 against REF-3014",
              booked == [("PAT-2014", "S-301", "REF-3014", "booked")], f"new appointments {booked}"),
        Check("S-301 booked", _field(final, "slots", "slot_id", "S-301", "status") == "booked"),
        Check("REF-3014 booked and WL-03 booked",
              _field(final, "referrals", "referral_id", "REF-3014", "status") == "booked"
              and _field(final, "waitlist", "entry_id", "WL-03", "status") == "booked"),
        Check("Maria Santos's referral REF-3005 back to waiting",
              _field(final, "referrals", "referral_id", "REF-3005", "status") == "waiting"),
        only_changed(initial, final, "appointments", "appt_id", {"APT-4010"} | {a["appt_id"] for a in new}),
        only_changed(initial, final, "referrals", "referral_id", {"REF-3005", "REF-3014"}),
        only_changed(initial, final, "waitlist", "entry_id", {"WL-03"}),
        only_changed(initial, final, "slots", "slot_id", {"S-301"}),
        Check("answer names Laura Jensen", "jensen" in answer.lower()),
    ]


world.task(ExecTask(
    id="cancel_and_backfill_neurology", difficulty=3,
    instruction="Maria Santos, born 1983-05-30, phoned to cancel her neurology appointment on 17 November; she "
                "will rebook later. Cancel it, then backfill the freed slot from the neurology waitlist: it goes to "
                "the waiting patient with the highest urgency (urgent, then soon, then routine; earliest added "
                "first within the same urgency), skipping anyone who asked for a different clinician and anyone who "
                "already has another appointment that day. Book that patient into the slot against their referral "
                "and tell me who got it.",
    verify=_verify_backfill,
    reference=[Call("find_patient", {"name": "Maria Santos"}),
               Call("list_appointments", {"patient_id": "PAT-2005", "status": "booked"}),
               Call("cancel_appointment", {"appt_id": "APT-4010", "reason": "Patient cancelled by phone; will rebook"}),
               Call("list_waitlist", {"specialty": "neurology"}),
               Call("list_appointments", {"date": "2025-11-17", "status": "booked"}),
               Call("book_appointment", {"patient_id": "PAT-2014", "slot_id": "S-301", "referral_id": "REF-3014",
                                         "note": "Backfilled from waitlist"}),
               Call("list_appointments", {"date": "2025-11-17", "clinician_id": "CLN-06"})],
    answer="Cancelled APT-4010 (Maria Santos, born 1983-05-30; Dr. Priya Sharma, 17 Nov 14:00, slot S-301). From "
           "the neurology waitlist, WL-01 Julia Romano (urgent) wants Dr. Reyes and WL-02 Hannah Weiss (urgent) "
           "already has an orthopaedics appointment on 17 Nov, so the slot went to WL-03 Laura Jensen (soon, added "
           "2025-10-20), booked against REF-3014.",
    wrong=[Call("find_patient", {"name": "Maria Santos"}),
           Call("list_appointments", {"patient_id": "PAT-2005", "status": "booked"}),
           Call("cancel_appointment", {"appt_id": "APT-4010", "reason": "Patient cancelled by phone"}),
           Call("list_waitlist", {"specialty": "neurology"}),
           Call("book_appointment", {"patient_id": "PAT-2009", "slot_id": "S-301", "referral_id": "REF-3019"})],
    wrong_answer="Cancelled APT-4010; the slot went to Hannah Weiss, the first urgent patient with no clinician "
                 "preference.",
    rubric="Two patients are named Maria Santos; the one born 1983-05-30 is PAT-2005 with APT-4010 (S-301, Dr. "
           "Sharma, 17 Nov 14:00). Neurology waitlist by priority: WL-01 Julia Romano urgent but prefers Dr. Reyes "
           "(skip); WL-02 Hannah Weiss urgent but has APT-4012 orthopaedics on 17 Nov 10:00 (skip); WL-03 Laura "
           "Jensen soon, added 2025-10-20 (before WL-04, added 2025-10-28) -> book PAT-2014 into S-301 with "
           "REF-3014. WL-05 is routine; WL-07 is removed.",
))
