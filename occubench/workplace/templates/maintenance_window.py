"""Scheduling (hard): a one-hour maintenance review for a production line, held while the line is stopped. The
afternoon schedule has a stop too short for it and two that last an hour; the maintenance crew, whose lead must
attend, is busy during one of those (only the lead says so). Then a free room with a seat for everyone."""

from __future__ import annotations

import random

from occubench.workplace.model import Clue, minutes
from occubench.workplace.templates._shared import book, booked, csv, free_room, later, read_file, send_message, told
from occubench.workplace.templates.base import Family, Names, Piece, colleague, task

_LINES = ("Press line", "Paint line", "Assembly line A", "Assembly line B", "Packaging line", "Extrusion line",
          "Moulding line", "Welding cell", "Bottling line", "Coating line")
_PLANTS = ("Riverside", "Eastgate", "Hillcrest", "Northfield", "Quayside", "Westmoor")
_JOBS = ("compressor inspection", "boiler inspection", "crane load test", "conveyor belt replacement",
         "fire pump test", "transformer check")
#: Hour-long planned stops of the line this afternoon; two of them are drawn, with production in between.
_STOPS = ("14:00", "15:30", "17:00")
#: Half-hour changeovers: too short for the review.
_CHANGEOVERS = ("12:30", "13:00")
_GUESTS = (("Safety officer", "Health & Safety"), ("Electrical technician", "Maintenance"),
           ("Quality engineer", "Quality"), ("Process engineer", "Engineering"))


def _timeline(stops: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """A line's afternoon, 12:00 to 18:00: its stops (start, end, activity) with production in the gaps."""
    rows, now = [], "12:00"
    for start, end, activity in sorted(stops, key=lambda s: minutes(s[0])):
        if minutes(start) > minutes(now):
            rows.append((now, start, "production"))
        rows.append((start, end, activity))
        now = end
    if minutes(now) < minutes("18:00"):
        rows.append((now, "18:00", "production"))
    return rows


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    plant = names.pick(_PLANTS)
    line, *others = rng.sample(_LINES, 4)
    slot, decoy = rng.sample(_STOPS, 2)
    end = later(slot, 60)
    changeover = rng.choice(_CHANGEOVERS)
    schedule = {line: _timeline([(slot, end, "planned stop"), (decoy, later(decoy, 60), "planned stop"),
                                 (changeover, later(changeover, 30), "changeover")])}
    for other in others:  # the other lines stop at other times, an hour at the slot nobody picked among them
        free = [s for s in _STOPS if s not in (slot, decoy)] + [rng.choice(("12:00", "16:30"))]
        start = rng.choice(free)
        schedule[other] = _timeline([(start, later(start, 60), rng.choice(("planned stop", "cleaning")))])
    lead = colleague(names, "Maintenance lead", "Maintenance")
    job = rng.choice(_JOBS)
    lead.clues.append(Clue(f"{task_id}-crew", f"My crew and I are on the {job} in the {others[0]} hall from {decoy} to "
                           f"{later(decoy, 60)} this afternoon, so we can't be anywhere else then. Otherwise we're "
                           "around.",
                           [["availab*", "free", "busy", "crew", "when", "time", "slot", "schedule", "scheduled",
                             "commitment*", "conflict*", "join", "attend"]]))
    supervisor = colleague(names, f"{line} supervisor", "Production")
    guests = [colleague(names, role, department) for role, department in rng.sample(_GUESTS, rng.randint(1, 2))]
    manager = colleague(names, "Plant manager", f"{plant} plant")
    attendees = [manager.name, lead.name, supervisor.name, *(g.name for g in guests)]
    seats = len(attendees) + 1  # and you
    room, busy = free_room(seats, slot, end, rng)
    source = f"plant/production_schedule_{task_id}.csv"
    invited = [*attendees[1:], manager.name]
    everyone = ", ".join(invited[:-1]) + f" and {invited[-1]}"
    rows = [(name, *row) for name in sorted(schedule) for row in schedule[name]]
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{manager.name}, the {plant} plant manager, wants a one-hour maintenance review of the {line} "
                    "this afternoon, held while the line is stopped so the team can inspect it. This afternoon's "
                    f"production schedule is {source} on the drive. Invite {everyone}; "
                    f"{lead.name}'s maintenance crew has other jobs this afternoon, so check with them. Book a "
                    f"free room with a seat for everyone and for you, and tell {manager.name} the time and room by "
                    "{deadline}.",
                    [booked("review booked in the line's stop", 3, "Book an hour while the line has a planned stop "
                            "that long (a changeover is too short) and the maintenance crew is free — ask the "
                            "maintenance lead — in a room with a seat for every invitee and you, inviting all of them.",
                            slot, end, attendees, seats),
                     told("plant manager told the time", 1,
                          "Tell the plant manager the start and end time of the review you booked.",
                          manager.name, [slot, end])],
                    [read_file(source),
                     send_message(lead.name,
                                  f"When is your crew busy this afternoon? I need an hour for the {line} review."),
                     *book(room, slot, end, seats, attendees),
                     send_message(manager.name, f"The {line} maintenance review is booked {slot}-{end} in {room}.")],
                    hints=(f"The afternoon's line schedule is {source} on the drive (only the {line} rows matter); "
                           "get_available_rooms shows which rooms are free at a given time.",
                           f"Ask {lead.name}, the maintenance lead, when the crew is busy this afternoon; the time "
                           f"and room you book go to {manager.name}.",
                           f"Read {source}, keep the {line}'s planned stops that last a full hour, ask the "
                           "maintenance lead when the crew is busy and drop the stop that clashes, call "
                           "get_available_rooms for the stop that is left with a seat for each invitee and you, book "
                           f"one of those rooms inviting everyone named, and message {manager.name} the start and end "
                           "time and the room."))],
        colleagues=[manager, lead, supervisor, *guests],
        drive={source: csv("line,start,end,activity", rows)},
        busy=busy,
    )


FAMILY = Family("maintenance_window", "scheduling", "hard", "Industrial & Engineering", build)
