"""Time management: be at a meeting on time; an action item handed out there needs a room booked for a review."""

from __future__ import annotations

import random

from occubench.workplace.model import Meeting, clock, minutes
from occubench.workplace.templates._shared import book, booked, free_room, send_message, told
from occubench.workplace.templates.base import Family, Names, Piece, call, checkpoint, colleague, task

_PROJECTS = ("Falcon", "Juniper", "Mosaic", "Nimbus", "Orchid", "Quartz", "Saffron", "Tundra", "Umbra", "Zephyr")


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    organiser = colleague(names, "Programme lead", "Strategy")
    guests = [colleague(names, "Product analyst", "Product") for _ in range(rng.randint(2, 4))]
    project = names.pick(_PROJECTS)
    start = rng.choice(("13:30", "14:00", "14:30"))
    meeting = Meeting(f"{task_id}-m", f"{project} steering meeting", start, clock(minutes(start) + 30), "Dune")
    review = rng.choice(("16:00", "16:30", "17:00"))
    review_end = clock(minutes(review) + 30)
    seats = len(guests) + 2  # the guests, the organiser and you
    room, busy = free_room(seats, review, review_end)
    attendees = [organiser.name, *(g.name for g in guests)]
    meeting.notes = (f"Action item for you: book a room for the {project} design review today from {review} to "
                     f"{review_end} with {', '.join(attendees)}, then confirm the room to {organiser.name}.")
    follow_up = f"{task_id}b"
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"Attend the {meeting.title} at {start} in Dune; you will get an action item there.",
                    [checkpoint("attended on time", 1, "Time-critical meetings must be attended when they start.",
                                kind="attended", meeting=meeting.title, start=start)],
                    [call("attend_meeting", room_name=meeting.room, start=start, end=meeting.end)],
                    hints=(f"Your calendar (list_meetings) shows the {meeting.title}; the action item is only "
                           "handed out there, in person.",
                           f"Nobody needs to be asked beforehand: {organiser.name}, the programme lead, runs the "
                           "meeting and gives you the action item there.",
                           "Check the meeting's start with list_meetings, take on other work only if it is done well "
                           "before then, and call attend_meeting with the meeting's room, start and end no later than "
                           "its start; then read the notes it returns for your action item.")),
               task(follow_up, FAMILY, meeting.notes + " Do it by {deadline}.",
                    [booked("review room booked", 2, f"Book a free room with at least {seats} seats for the exact time "
                            "given, inviting everyone named.", review, review_end, attendees, seats),
                     told("organiser told the room", 1, "Confirm the booked room to whoever gave the action item.",
                          organiser.name, [room])],
                    [*book(room, review, review_end, seats, attendees),
                     send_message(organiser.name, f"Booked {room} for the {project} review.")],
                    appears=f"meeting:{meeting.title}",
                    hints=(f"The action item from the {meeting.title} gives the time and the people to invite; "
                           "get_available_rooms shows which rooms are free then.",
                           f"Invite everyone the action item names; once the room is booked, confirm it to "
                           f"{organiser.name}, who gave you the action item.",
                           "Count the seats needed (everyone named plus you), call get_available_rooms for exactly "
                           "the time given with that many seats, book one of the rooms it returns with book_meeting "
                           f"inviting everyone named, then message {organiser.name} which room you booked."))],
        colleagues=[organiser, *guests],
        meetings=[meeting],
        busy=busy,
    )


FAMILY = Family("meeting_followup", "scheduling", "hard", "Technology & IT", build)
