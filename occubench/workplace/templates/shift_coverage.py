"""Scheduling (easy): fill tonight's late-shift gap on a hospital ward. The roster is on the drive; who may cover
(the competency the shift needs, the weekly hours limit) is the staffing coordinator's rule. The nurse with the
fewest hours lacks the competency, so the rule has to be asked for."""

from __future__ import annotations

import random

from occubench.workplace.model import Clue
from occubench.workplace.templates._shared import csv, in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, colleague, task

_WARDS = ("Rowan", "Willow", "Hawthorn", "Linden", "Aspen", "Juniper", "Maple", "Alder", "Hazel", "Sorrel")
_COMPETENCIES = ("IV medication", "tracheostomy care", "chemotherapy", "cardiac telemetry", "blood transfusion",
                 "paediatric life support", "epidural care", "ventilator care")
#: (start, end) of the late shift; every shift is eight hours.
_SHIFTS = (("13:30", "21:30"), ("14:00", "22:00"), ("14:30", "22:30"))
LENGTH = 8


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    ward = names.pick(_WARDS)
    needed, *others = rng.sample(_COMPETENCIES, 4)
    cap = rng.choice((36, 40, 44, 48))
    start, end = rng.choice(_SHIFTS)
    room = cap - LENGTH  # the most hours a nurse may have worked so far this week to take the shift

    def skills(*extra: str) -> str:
        return "; ".join(sorted({*extra, *rng.sample(others, rng.randint(0, 2))}))

    cover_hours = rng.randint(room - 12, room)
    # (grade, competencies, shift today, hours this week): one nurse meets the whole rule, each other fails one part
    # of it; the nurse with the fewest hours off today lacks the competency.
    staff = [("RN", skills(needed), "off", cover_hours),
             ("RN", skills(), "off", rng.randint(4, cover_hours - 4)),
             ("RN", skills(needed), "off", rng.randint(room + 2, cap - 1)),
             ("RN", skills(needed), rng.choice(("early", "night")), rng.randint(8, room)),
             ("HCA", "", "off", rng.randint(0, cover_hours - 2)),
             ("RN", skills(needed), "annual leave", 0)]
    if rng.random() < 0.5:
        staff.append(("RN", skills(), rng.choice(("early", "late")), rng.randint(8, room)))
    roles = {"RN": "Staff nurse", "HCA": "Healthcare assistant"}
    nurses = [colleague(names, roles[grade], f"{ward} ward") for grade, _, _, _ in staff]
    cover = nurses[0]
    cover.clues.append(Clue(f"{task_id}-accept", f"Yes, I can take tonight's late shift on {ward} ward — put me on "
                            "the roster.", [["shift", "cover", "covering"]]))
    sick = names.person()
    coordinator = colleague(names, "Nurse staffing coordinator", "Nursing workforce",
                            Clue(f"{task_id}-rule", f"For a late shift on {ward} ward the cover must be a registered "
                                 f"nurse (RN) signed off for {needed}, who is off today and stays within {cap} hours "
                                 f"this week once the {LENGTH}-hour shift is added. Nobody on annual leave is asked.",
                                 [["cover", "covering", "rule", "rules", "eligib*", "who can", "who may", "replace*",
                                   "requirement*", "criteri*", "qualif*", "allowed", "policy"]]))
    charge = colleague(names, "Charge nurse", f"{ward} ward")
    rows = sorted([*((n.name, *s) for n, s in zip(nurses, staff)), (sick, "RN", skills(needed), "late (off sick)",
                                                                     rng.randint(16, room))])
    roster = f"wards/{ward.lower()}_roster_{task_id}.csv"
    note = f"{ward.lower()}_late_cover_{task_id}.txt"
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{sick} has called in sick for tonight's late shift ({start}-{end}) on {ward} ward, and "
                    f"{charge.name}, the charge nurse, needs the gap filled. The ward roster, with each person's "
                    f"grade, competencies, shift today and hours worked this week, is {roster} on the drive; "
                    f"{coordinator.name}, the nurse staffing coordinator, sets the rule for who may cover. Ask the "
                    f"nurse who meets the rule to take the shift, write the cover arrangement (who covers which "
                    f"shift) to {note} in your workspace, and tell {charge.name} who is covering by {{deadline}}.",
                    [in_file("cover recorded", 2, "The cover must be the one nurse who meets every part of the "
                             "staffing rule (grade, competency, off today, weekly hours after the shift); ask the "
                             "coordinator for the rule instead of taking whoever has the fewest hours.",
                             note, [cover.name], absent=[n.name for n in nurses[1:]]),
                     told("cover nurse asked", 1,
                          "Ask the nurse who meets the rule to take the shift, naming the ward.", cover.name, [ward]),
                     told("charge nurse told", 1, "Tell the charge nurse who is covering the shift.",
                          charge.name, [cover.name])],
                    [read_file(roster),
                     send_message(coordinator.name, f"What is the rule for who can cover a late shift on {ward} ward?"),
                     send_message(cover.name, f"Could you cover tonight's late shift ({start}-{end}) on {ward} ward?"),
                     write_file(note, f"{ward} ward late shift {start}-{end}: covered by {cover.name} (for {sick}).\n"),
                     send_message(charge.name, f"{cover.name} will cover tonight's late shift on {ward} ward.")],
                    hints=(f"The {ward} ward roster is {roster} on the drive: grade, competencies, today's shift and "
                           "hours this week for everyone; the rule for who may cover is not in it.",
                           f"Ask {coordinator.name}, the nurse staffing coordinator, what rule a nurse covering the "
                           f"late shift must meet; then ask that nurse to take the shift and tell {charge.name}, "
                           "the charge nurse.",
                           f"Read {roster}, ask the staffing coordinator for the cover rule, keep only the people "
                           "who meet every part of it (grade, competency, off today, hours once the shift is "
                           f"added), message the one left asking them to cover the late shift on {ward} ward, write "
                           f"who covers to {note}, then message {charge.name} that nurse's name."))],
        colleagues=[*nurses, coordinator, charge],
        drive={roster: csv("name,grade,competencies,today,hours_this_week", rows)},
    )


FAMILY = Family("shift_coverage", "scheduling", "easy", "Healthcare & Life Sciences", build)
