"""The meeting-room calendar of a day, with Trainee-Bench's rules: rooms are booked within office hours when
free and big enough, a booking fails when any participant is already in a meeting then (each one's clashes listed),
only the one who booked a meeting may cancel it, and attending records when the agent joined (on time: no more than
five minutes after the start). It holds the day's meetings (never cancellable by the agent) and the agent's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from occubench.core.tools import ToolError
from occubench.workplace.people import AGENT
from occubench.workplace.world import Attendance, Meeting

#: The most invitees one booking may name, and the longest name: an agent's list can be any size.
MAX_ATTENDEES, MAX_NAME = 500, 200
#: Joining up to this long after the start counts as on time (earlier counts too).
LATENESS = timedelta(minutes=5)


def on_time(attended: Iterable[Attendance], meeting: str, start: datetime, by: datetime | None = None) -> bool:
    """Whether the agent was in ``meeting`` by five minutes past its start (having joined by ``by``, when given);
    the last time the agent joined counts, as in Trainee-Bench's reference."""
    joined = [a.joined for a in attended if a.meeting == meeting and a.joined is not None
              and (a.joined.tzinfo is None) == (start.tzinfo is None)  # naive and aware times do not subtract
              and (by is None or a.joined <= by)]
    return bool(joined) and max(joined) - start <= LATENESS


def moment(argument: str, text: str, day: datetime) -> datetime:
    """``text`` as a local ISO date and time, or as HH:MM on ``day``'s date; a :class:`ToolError` naming
    ``argument`` otherwise."""
    try:
        value = datetime.fromisoformat(text) if len(text) > 5 else \
            datetime.combine(day.date(), time.fromisoformat(text))
    except ValueError:
        raise ToolError(f"{argument} must be a time such as {day:%Y-%m-%d}T13:00:00 or 13:00, not "
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

    def __init__(self, rooms: Mapping[str, int], meetings: Iterable[Meeting], hours: tuple[int, int] = (9, 17)) -> None:
        self.rooms = dict(rooms)
        self.opens, self.closes = time(hours[0]), time(hours[1])
        self.entries = [Entry(m, None) for m in meetings]
        self.attended: list[Attendance] = []
        self._bookings = 0

    def booked(self) -> list[Meeting]:
        """The agent's bookings that stand, in the order they were made."""
        return [e.meeting for e in self.entries if e.applicant == AGENT]

    def meetings(self) -> list[Meeting]:
        """The meetings the agent is expected at or booked, by start."""
        return sorted((e.meeting for e in self.entries if e.involves(AGENT)), key=lambda m: m.start)

    def available(self, start: datetime, end: datetime, seats: int = 1) -> list[str]:
        if not start < end:
            raise ToolError(f"the meeting must end after it starts, not {_slot(start, end)}")
        if start.date() != end.date() or start.time() < self.opens or end.time() > self.closes:
            raise ToolError(f"meetings are between {self.opens:%H:%M} and {self.closes:%H:%M} on one day, not "
                            f"{_slot(start, end)}")
        taken = {e.meeting.room for e in self.entries if e.overlaps(start, end)}
        return [room for room, capacity in self.rooms.items() if room not in taken and capacity >= seats]

    def book(self, attendees: list[str], room: str, start: datetime, end: datetime, now: datetime) -> Meeting:
        if room not in self.rooms:
            raise ToolError(f"no room {room!r:.80}; the rooms are {', '.join(self.rooms)}")
        if start < now:
            raise ToolError(f"{start.isoformat(timespec='minutes')} has already passed (it is "
                            f"{now.isoformat(timespec='minutes')})")
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
                          tuple(invited), booked_at=now)
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


def _names(attendees: list[str]) -> list[str]:
    """The invitees, each once, in order; blank names left out."""
    if len(attendees) > MAX_ATTENDEES or any(len(name) > MAX_NAME for name in attendees):
        raise ToolError(f"at most {MAX_ATTENDEES} invitees, of at most {MAX_NAME} characters each")
    return list(dict.fromkeys(name.strip() for name in attendees if name.strip()))
