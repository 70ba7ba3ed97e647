"""Scheduling through the calendar: book a case conference at the one half-hour this afternoon the visiting
consultant can make (hers to tell; the ward's request repeats an old guess), then chair it: be in your own booking
when it starts. The smallest room that fits is taken then, so the booking needs a look at the free rooms."""

from __future__ import annotations

import random

from occubench.workplace.model import Clue, clock, minutes
from occubench.workplace.templates._shared import book, free_room, read_file, send_message, told
from occubench.workplace.templates.base import Family, Names, Piece, call, checkpoint, colleague, task

_SPECIALTIES = ("cardiology", "nephrology", "geriatrics", "neurology", "respiratory medicine", "endocrinology")
#: Half-hour starts this afternoon.
_SLOTS = ("14:00", "14:30", "15:00", "15:30", "16:00")


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    specialty = rng.choice(_SPECIALTIES)
    slot, guess = rng.sample(_SLOTS, 2)
    end = clock(minutes(slot) + 30)
    consultant = colleague(names, f"Visiting consultant in {specialty}", "Visiting staff", Clue(
        f"{task_id}-availability", f"This afternoon I can only do {slot} to {end}; the rest of it I am in clinic "
        f"(the {guess} I mentioned last week is gone).",
        [["availab*", "free", "busy", "calendar", "schedule", "when", "time", "slot", "make it", "join"]]))
    manager = colleague(names, "Ward manager", "Nursing")
    nurses = [colleague(names, "Staff nurse", "Nursing") for _ in range(rng.randint(2, 3))]
    patient = names.code("MRN")
    attendees = [consultant.name, *(n.name for n in nurses)]
    seats = len(attendees) + 1  # and you, who chair it
    room, busy = free_room(seats, slot, end)
    request = f"ward/case_conference_{patient}.txt"
    booking = {"start": slot, "end": end, "attendees": attendees, "min_capacity": seats}
    piece = Piece(
        tasks=[task(task_id, FAMILY,
                    f"{manager.name} asks you to organise and chair a 30-minute case conference on patient "
                    f"{patient} this afternoon with {consultant.name}, the visiting {specialty} consultant; the "
                    f"request is in {request}. Book a room for it at a time the consultant can make, tell "
                    f"{manager.name} when it is, and be there when it starts: you chair it. All by {{deadline}}.",
                    [checkpoint("conference booked at the consultant's time", 2,
                                "Book a room with a seat for everyone invited and you, at the half-hour the "
                                "consultant says they can make today (ask them: the request's time is an old guess), "
                                "inviting everyone the request names.", kind="booking", **booking),
                     checkpoint("conference chaired on time", 2,
                                "Be in the meeting you booked when it starts (no more than five minutes late), and "
                                "keep the booking: whoever chairs it cannot be late for it.", kind="hosted", **booking),
                     told("ward manager told the time", 1, "Tell the ward manager when the conference is.",
                          manager.name, [slot])],
                    [read_file(request),
                     send_message(consultant.name,
                                  f"When are you free this afternoon for a 30-minute case conference on {patient}?"),
                     *book(room, slot, end, seats, attendees),
                     send_message(manager.name, f"The case conference on {patient} is at {slot} in {room}."),
                     call("attend_meeting", room_name=room, start=slot, end=end)],
                    hints=(f"{request} says whom to invite; when the consultant is free today is not on the drive, "
                           "and get_available_rooms shows the free rooms at a given time.",
                           f"Ask {consultant.name}, the visiting consultant, when they are free this afternoon; the "
                           f"time goes to {manager.name}.",
                           f"Read {request}, ask the consultant when they can come, call get_available_rooms for "
                           "that half-hour with a seat for every invitee and you, book_meeting one of those rooms "
                           f"inviting them, send_message {manager.name} the time, and attend_meeting your booking "
                           "no later than five minutes after it starts."))],
        colleagues=[manager, consultant, *nurses],
        drive={request: f"Case conference request, patient {patient}\nChair: you\nInvite: "
                        f"{', '.join(attendees)}\nLength: 30 minutes, this afternoon\nNote: {consultant.name} "
                        f"mentioned last week they could perhaps do {guess}; please confirm with them before booking."},
        busy=busy,
    )
    piece.tasks[0].deadline = clock(minutes(_SLOTS[-1]) + 30)  # the same for every slot: it tells nothing of it
    return piece


FAMILY = Family("case_conference", "scheduling", "hard", "Healthcare & Life Sciences", build)
