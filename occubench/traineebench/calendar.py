"""The meeting-room calendar of a Trainee-Bench day, with the reference calendar's rules: rooms are booked within
business hours (9:00 to 17:00) when free, a booking fails when any participant is already in a meeting then (each
one's clashes listed), only the one who booked a meeting may cancel it, and attending records when the agent
joined. It holds the day's meetings (booked by colleagues, never cancellable by the agent) and the agent's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from occubench.core.tools import ToolError
from occubench.traineebench.company import AGENT
from occubench.traineebench.family import Attendance, Meeting

OPENS, CLOSES = time(9), time(17)
#: The most invitees one booking may name, and the longest name: an agent's list can be any size.
MAX_ATTENDEES, MAX_NAME = 500, 200


def moment(argument: str, text: str) -> datetime:
    """``text`` as a local ISO date and time; a :class:`ToolError` naming ``argument`` otherwise."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ToolError(f"{argument} must be an ISO date and time such as 2025-10-01T13:00:00, not "
                        f"{text!r:.80}") from None
    if value.tzinfo is not None:  # the day's clock has no time zone; the two would not compare
        raise ToolError(f"{argument} must be a local time, without a time zone: {text!r:.80}")
    return value


def end_of(meeting: Meeting) -> datetime:
    return meeting.start + timedelta(hours=meeting.hours)


def _slot(start: datetime, end: datetime) -> str:
    return f"{start.isoformat(timespec='minutes')} to {end.isoformat(timespec='minutes')}"


@dataclass(frozen=True)
class Entry:
    meeting: Meeting
    #: Who booked it: the agent, or None for a meeting already on the calendar when the day began.
    applicant: str | None

    def involves(self, person: str) -> bool:
        return person == self.applicant or person in self.meeting.attendees

    def overlaps(self, start: datetime, end: datetime) -> bool:
        return self.meeting.start < end and start < end_of(self.meeting)


class Calendar:
    """The rooms (name → capacity) and their meetings; ``attended`` is every time the agent joined one."""

    def __init__(self, rooms: Mapping[str, int], meetings: Iterable[Meeting]) -> None:
        self.rooms = dict(rooms)
        self.entries = [Entry(m, None) for m in meetings]
        self.attended: list[Attendance] = []
        self._bookings = 0

    def booked(self) -> list[Meeting]:
        """The agent's bookings that stand, in the order they were made."""
        return [e.meeting for e in self.entries if e.applicant == AGENT]

    def available(self, start: datetime, end: datetime) -> list[str]:
        _business_hours(start, end)
        taken = {e.meeting.room for e in self.entries if e.overlaps(start, end)}
        return [room for room in self.rooms if room not in taken]

    def book(self, attendees: list[str], room: str, start: datetime, end: datetime) -> Meeting:
        if room not in self.rooms:
            raise ToolError(f"no room {room!r:.80}; the rooms are {', '.join(self.rooms)}")
        if room not in self.available(start, end):
            raise ToolError(f"{room} is taken at some time from {_slot(start, end)}")
        invited = _names(attendees)
        if len(invited) + 1 > self.rooms[room]:
            raise ToolError(f"{room} holds {self.rooms[room]} people, you and {len(invited)} invitees are more")
        clashes = {person: [e.meeting for e in self.entries if e.involves(person) and e.overlaps(start, end)]
                   for person in (AGENT, *invited)}
        clashes = {person: meetings for person, meetings in clashes.items() if meetings}
        if clashes:
            raise ToolError("not booked: some participants are in another meeting then.\n" + "\n".join(
                f"{person}: " + "; ".join(f"{_slot(m.start, end_of(m))} in {m.room}" for m in meetings)
                for person, meetings in clashes.items()))
        self._bookings += 1
        # Each booking's title is its own, so a join is never credited to a later booking of the same slot.
        meeting = Meeting(f"{AGENT}'s meeting {self._bookings}", start, (end - start) / timedelta(hours=1), room,
                          tuple(invited))
        self.entries.append(Entry(meeting, AGENT))
        return meeting

    def cancel(self, room: str, start: datetime, end: datetime) -> Meeting:
        entry = next((e for e in self._at(room, start, end) if e.applicant == AGENT), None)
        if entry is None:
            raise ToolError(f"you booked no meeting in {room!r:.80} from {_slot(start, end)}; you can cancel only "
                            "the meetings you booked")
        self.entries.remove(entry)
        return entry.meeting

    def attend(self, room: str, start: datetime, end: datetime, now: datetime) -> Meeting:
        """The meeting in ``room`` from ``start`` to ``end``, the agent recorded as joining it ``now``."""
        entry = next(iter(self._at(room, start, end)), None)
        if entry is None:
            raise ToolError(f"there is no meeting in {room!r:.80} from {_slot(start, end)}")
        self.attended.append(Attendance(entry.meeting.title, now))
        return entry.meeting

    def _at(self, room: str, start: datetime, end: datetime) -> list[Entry]:
        return [e for e in self.entries if e.meeting.room == room and e.meeting.start == start
                and end_of(e.meeting) == end]


def _business_hours(start: datetime, end: datetime) -> None:
    if not start < end:
        raise ToolError(f"the meeting must end after it starts, not {_slot(start, end)}")
    if start.date() != end.date() or start.time() < OPENS or end.time() > CLOSES:
        raise ToolError(f"meetings are between {OPENS:%H:%M} and {CLOSES:%H:%M} on one day, not {_slot(start, end)}")


def _names(attendees: list[str]) -> list[str]:
    """The invitees, each once, in order; blank names left out."""
    if len(attendees) > MAX_ATTENDEES or any(len(name) > MAX_NAME for name in attendees):
        raise ToolError(f"at most {MAX_ATTENDEES} invitees, of at most {MAX_NAME} characters each")
    return list(dict.fromkeys(name.strip() for name in attendees if name.strip()))
