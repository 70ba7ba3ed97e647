"""Scheduling: find the one half-hour this morning that every invitee can make (one of them keeps their calendar
off the drive and has to be asked), then book a free room big enough for everyone."""

from __future__ import annotations

import random

from occubench.workplace.model import Clue, minutes
from occubench.workplace.templates._shared import book, booked, csv, free_room, later, read_file, send_message, told
from occubench.workplace.templates.base import ROOMS, Family, Names, Piece, colleague, task

_TOPICS = ("pricing review", "launch readiness check", "vendor shortlist", "hiring plan", "Q3 roadmap sync",
           "incident retrospective", "budget walkthrough", "onboarding revamp", "data migration kickoff",
           "customer escalation review")
_ROLES = (("Product designer", "Product"), ("Data analyst", "Analytics"), ("Backend engineer", "Engineering"),
          ("Account manager", "Sales"), ("QA lead", "Engineering"), ("Procurement specialist", "Operations"),
          ("Marketing manager", "Marketing"), ("HR business partner", "People"))
_BLOCKS = ("1:1 with manager", "Customer call", "Candidate interview", "Sprint planning", "Training session",
           "Vendor demo", "Budget review", "Design critique", "Board prep", "Supplier call")
_OUTSIDE = (("09:00", "09:30"), ("09:30", "10:00"), ("12:00", "13:00"), ("13:30", "14:30"), ("15:00", "15:30"),
            ("16:00", "17:00"))
#: Half-hour starts in the 10:00-12:00 window.
_SLOTS = ("10:00", "10:30", "11:00", "11:30")


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    requester = colleague(names, "Team lead", "Operations")
    roles = rng.sample(_ROLES, rng.randint(2, 4))
    roles[rng.randrange(len(roles))] = ("External consultant", "Contractors")  # no calendar on the shared drive
    invitees = [colleague(names, role, department) for role, department in roles]
    hidden = next(p for p in invitees if p.department == "Contractors")
    topic = rng.choice(_TOPICS)
    # The one slot everyone can make is the last of the window, so the booking is still in the future when the
    # reference makes it even as the last task of a full day; the slot only the hidden colleague cannot make comes
    # earlier, the first a careless look at the drive would take.
    slot = _SLOTS[-1]
    decoy = rng.choice([s for s in _SLOTS if s < slot])
    shared = [requester, *(p for p in invitees if p is not hidden)]
    blocks = []  # (person, start, end, what)
    for start in (s for s in _SLOTS if s not in (slot, decoy)):
        blocks.append((rng.choice(shared).name, start, later(start, 30), rng.choice(_BLOCKS)))
    for person in shared:
        for start, end in rng.sample(_OUTSIDE, rng.randint(2, 3)):
            blocks.append((person.name, start, end, rng.choice(_BLOCKS)))
    rows = sorted(blocks, key=lambda b: (b[0], minutes(b[1])))
    hidden.clues.append(Clue(f"{task_id}-availability",
                             f"This morning I'm free except {decoy}-{later(decoy, 30)}, when I have a client call "
                             "I can't move.",
                             [["availab*", "free", "busy", "calendar", "schedule", "scheduled", "when", "time",
                               "slot", "make it", "conflict", "join"]]))
    seats = len(invitees) + 2  # the invitees, the requester and you
    end = later(slot, 30)
    room, busy = free_room(seats, slot, end, rng)
    for start in rng.sample([s for s in _SLOTS if s != slot], 2):  # the rest of the morning is not empty either
        busy.append({"room": rng.choice(sorted(ROOMS)), "start": start, "end": later(start, 30)})
    attendees = [requester.name, *(p.name for p in invitees)]
    source = f"calendars/team_busy_{task_id}.csv"
    guests = ", ".join(p.name for p in invitees[:-1]) + f" and {invitees[-1].name}"
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{requester.name} wants a 30-minute meeting on the {topic} this morning, between 10:00 and "
                    f"12:00, with {guests}. Find the half-hour slot that everyone, {requester.name} included, can "
                    f"make, book a free room with a seat for each of them and for you, invite them, and tell "
                    f"{requester.name} the time and room. The busy times of everyone except {hidden.name} are in "
                    f"{source} on the drive; {hidden.name} is an external consultant who does not share a "
                    f"calendar, so ask them. Do it by {{deadline}}.",
                    [booked("room booked at the common slot", 3, "Book a room with a seat for every invitee, the "
                            "requester and you, at the only half-hour slot of the morning that all of them can make, "
                            "inviting all of them; the consultant's availability had to be asked for, it is not on the "
                            "drive.", slot, end, attendees, seats),
                     told("requester told the slot", 1,
                          "Tell the requester the start and end time of the meeting you booked.",
                          requester.name, [slot, end])],
                    [read_file(source),
                     send_message(hidden.name,
                                  f"When are you free this morning for a 30-minute meeting on the {topic}?"),
                     *book(room, slot, end, seats, attendees),
                     send_message(requester.name,
                                  f"The {topic} is booked {slot}-{end} in {room}; everyone is invited.")],
                    hints=(f"The busy times of everyone but {hidden.name} are in {source} on the drive; "
                           "get_available_rooms shows which rooms are free at a given time.",
                           f"Ask {hidden.name}, the external consultant, when they are free this morning; the time "
                           f"you book goes to {requester.name}.",
                           f"Read {source}, ask the consultant for their availability, find the half-hour in the "
                           "window when nobody is busy, call get_available_rooms for it with a seat for each "
                           "invitee, the requester and you, book one of those rooms inviting all of them, and "
                           f"message {requester.name} the start and end time."))],
        colleagues=[requester, *invitees],
        drive={source: csv("person,start,end,what", rows)},
        busy=busy,
    )


FAMILY = Family("room_booking", "scheduling", "easy", "Business & Enterprise", build)
