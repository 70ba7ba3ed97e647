"""Inquiry (hard): a production line's alarm log holds many faults that were raised and cleared again, warnings
that do not count, and one unit whose fault is still active. The replacement part for that fault is known only to
the maintenance technician for its kind of fault (mechanical or electrical); the shift supervisor gets the report."""

from __future__ import annotations

import random

from occubench.workplace.model import Clue, clock
from occubench.workplace.templates._shared import in_file, not_in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, colleague, task

#: Unit kinds: (code prefix, what it is).
_UNITS = (("PMP", "pump"), ("CNV", "conveyor"), ("CMP", "compressor"), ("MIX", "mixer"), ("FAN", "extraction fan"),
          ("PRS", "press"), ("FLR", "filler"), ("LBL", "labeller"))
#: Fault codes by system, each with the part that fixes it; no code occurs inside another.
_FAULTS = {
    "MECH": (("VIBRATION-HIGH", "coupling insert"), ("BEARING-TEMP", "bearing kit"), ("BELT-SLIP", "drive belt"),
             ("SEAL-LEAK", "mechanical seal kit"), ("JAM-DETECTED", "guide rail set"),
             ("LUBE-PRESSURE", "lubrication pump")),
    "ELEC": (("OVERCURRENT", "motor contactor"), ("PHASE-LOSS", "phase monitoring relay"),
             ("ENCODER-FAULT", "rotary encoder"), ("INSULATION-LOW", "motor cable set"),
             ("VFD-TRIP", "drive control board"), ("SENSOR-OPEN", "proximity sensor")),
}
_WARNINGS = ("FILTER-DUE", "TEMP-RISING", "GREASE-DUE", "AIR-PRESSURE-LOW", "CYCLE-SLOW")
_INFO = ("CLEANING-DONE", "RECIPE-CHANGE", "OPERATOR-LOGIN", "BATCH-START", "SPEED-CHANGE")
_SYSTEMS = {"MECH": "mechanical", "ELEC": "electrical"}


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    line = rng.randint(2, 9)
    kinds = rng.sample(_UNITS, rng.randint(6, 8))
    units = [names.code(prefix) for prefix, _ in kinds]
    system = rng.choice(sorted(_FAULTS))
    faulty, warned, *others = units
    code, part = rng.choice(_FAULTS[system])
    # The log: (minute, unit, severity, system, code, state) over the early shift, 06:00 to 09:00.
    events: list[tuple[int, str, str, str, str, str]] = []

    def fault(unit: str, raised: int, cleared: int | None, which: tuple[str, str] | None = None) -> None:
        sys_ = rng.choice(sorted(_FAULTS)) if which is None else which[0]
        fault_code = rng.choice(_FAULTS[sys_])[0] if which is None else which[1]
        events.append((raised, unit, "FAULT", sys_, fault_code, "RAISED"))
        if cleared is not None:
            events.append((cleared, unit, "FAULT", sys_, fault_code, "CLEARED"))

    active_at = rng.randint(130, 165)
    if rng.random() < 0.6:  # the faulty unit had a fault earlier that was fixed
        start = rng.randint(5, 60)
        fault(faulty, start, start + rng.randint(10, 40))
    fault(faulty, active_at, None, (system, code))
    # Raised and cleared again, some more than once; one of them with the same code as the active fault and one
    # cleared only near the end of the log.
    cleared_units = rng.sample(others, min(len(others), rng.randint(3, 4)))
    for i, unit in enumerate(cleared_units):
        start = rng.randint(10, 60 if i == 1 else 120)
        fault(unit, start, start + rng.randint(8, 45), (system, code) if i == 0 else None)
        if i == 1:  # raised again, and cleared after the active fault was raised
            again = rng.randint(start + 50, 150)
            fault(unit, again, rng.randint(max(again + 5, active_at + 5), 175))
    warning = rng.choice(_WARNINGS)
    events.append((rng.randint(100, 170), warned, "WARN", rng.choice(sorted(_FAULTS)), warning, "RAISED"))
    for unit in rng.sample(units, 4):
        events.append((rng.randint(0, 175), unit, "INFO", "-", rng.choice(_INFO), "-"))
    rows = sorted(events)
    log = "time,unit,severity,system,code,state\n" + "".join(
        f"{clock(6 * 60 + m)},{u},{sev},{s},{c},{st}\n" for m, u, sev, s, c, st in rows)

    parts = {c: names.code("PN") for c, _ in _FAULTS[system]}
    answer = parts[code]
    mechanic = colleague(names, "Maintenance technician (mechanical)", "Maintenance")
    electrician = colleague(names, "Maintenance technician (electrical)", "Maintenance")
    holder = mechanic if system == "MECH" else electrician
    holder.clues.append(Clue(
        f"{task_id}-parts",
        f"Spares for {_SYSTEMS[system]} faults on line {line}: " +
        "; ".join(f"{c} — {what}, part number {parts[c]}" for c, what in _FAULTS[system]) +
        ". Tell the supervisor the part number and I'll pull it from the stores.",
        [["part", "part number", "spare", "replacement", "replace", "stores"]]))
    supervisor = colleague(names, "Shift supervisor", "Production")
    source = f"plant/line{line}_alarms_{task_id}.csv"
    note = f"fault_report_{task_id}.txt"
    wrong = sorted({*(u for u in units if u != faulty), *(p for p in parts.values() if p != answer)})
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"Line {line}'s alarm log for this morning's shift is {source} on the drive. One unit on the line "
                    "still has an active fault — a FAULT raised and not cleared since; warnings and info entries "
                    "do not count. Find that unit and get the part number of the replacement part for its fault "
                    "from the maintenance technician who looks after that kind of fault (mechanical or electrical). "
                    f"Write the unit, its fault code and the part number to {note} in your workspace, and report "
                    f"the unit and the part number to {supervisor.name}, the shift supervisor, by {{deadline}}.",
                    [in_file("faulty unit and part found", 2, "Name the one unit whose fault was raised and never "
                             "cleared, its fault code and the part number the right technician gives for that code.",
                             note, [faulty, code, answer]),
                     not_in_file("no other unit or part", 1, "Units whose faults were cleared, or that only raised "
                                 "warnings, and part numbers for other fault codes do not belong in the report.",
                                 note, wrong),
                     told("supervisor told", 2,
                          "Report the faulty unit and its replacement part number to the shift supervisor.",
                          supervisor.name, [faulty, answer])],
                    [read_file(source),
                     send_message(holder.name,
                                  f"Which replacement part do we need for a {code} fault on {faulty}? Part number?"),
                     write_file(note, f"Active fault: {faulty}\nCode: {code}\nReplacement part: {answer}\n"),
                     send_message(supervisor.name,
                                  f"{faulty} has an active {code} fault; the replacement part is {answer}.")],
                    hints=(f"The alarm log {source} on the drive shows which unit's fault is still active and what "
                           "kind of fault it is; part numbers are not on the drive.",
                           f"Ask the maintenance technician for that kind of fault — {mechanic.name} for mechanical, "
                           f"{electrician.name} for electrical — for the part number that fixes the fault code; "
                           f"{supervisor.name} only receives the report.",
                           f"read_file {source}; for each unit pair every FAULT RAISED with a later CLEARED of the "
                           "same code and keep the one left open (ignore WARN and INFO rows); note its code and "
                           "system; send_message the technician for that system asking for the part number for "
                           f"that code; write_file {note} with the unit, the code and the part number only; "
                           f"send_message {supervisor.name} the unit and the part number."))],
        colleagues=[mechanic, electrician, supervisor],
        drive={source: log},
    )


FAMILY = Family("equipment_fault_triage", "inquiry", "hard", "Industrial & Engineering", build)
