"""Meeting Book: book a meeting for a given slot with every department's manager or the Marketing department,
asking each invitee first (busy managers say so; a Marketing member defers to the manager, who says who may be left
off), then join it on time. Scored as the reference: a booking of exactly that slot (1), joined at most five minutes
after its start (1), every eligible invitee on it (1), no one who cannot come (1); the last booking for the slot
counts."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from occubench.errors import ConfigError
from occubench.traineebench.families._common import REQUIRED, arguments, deadline, drawn, one_of
from occubench.traineebench.family import Day, Employee, Hints, Meeting, Outcome, Score, TaskSpec
from occubench.workplace.calendar import on_time

NAME = "Meeting Book"
#: The reference's calendar has ten rooms, Room_01 to Room_10, with no capacity limit.
ROOMS = tuple(f"Room_{number:02d}" for number in range(1, 11))
#: The department the reference's department variant invites, and how many of its members say they are busy.
DEPARTMENT, BUSY = "Marketing", 3
#: The values the reference's sampler draws each argument from.
SAMPLED = {"task_type": ("department", "manager"),
           "start_time": ("2025-10-01T13:00:00", "2025-10-01T14:30:00", "2025-10-01T15:00:00"),
           "last_time": (0.5, 1.0, 1.5, 2.0), "conflict_nums": (1, 2, 3)}


def add_rooms(day: Day) -> None:
    """Put the reference's rooms on the day; a room holds the whole company (the reference sets no capacity)."""
    for room in ROOMS:
        day.rooms.setdefault(room, len(day.company.employees) + 1)


def moment(family: str, name: str, value: str) -> datetime:
    """An ISO date and time, as the reference's configs give a meeting's start."""
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise ConfigError(f"{family}: argument {name} must be an ISO date and time (2025-10-01T09:00:00), "
                          f"not {value!r:.80}") from None


def hours_of(family: str, name: str, value: float) -> float:
    """A meeting's length in hours: more than none, at most a day (checked before a float is made of it)."""
    if not 0 < value <= 24:
        raise ConfigError(f"{family}: argument {name} must be more than 0 and at most 24 hours, not {value!r:.40}")
    return float(value)


def slot(start: datetime, end: datetime) -> str:
    return f"`{start.isoformat()}` to `{end.isoformat()}`"


class MeetingBook:
    name = NAME
    #: Hard: who may be invited is known only by asking every invitee (about ten managers in the reference's
    #: company), and in the department variant the answer sits behind a second colleague, the manager; the booking
    #: is then to be attended on time.
    difficulty = "hard"

    def generate(self, day: Day, **given: Any) -> TaskSpec:
        args = arguments(NAME, given, {"task_type": (str, REQUIRED), "start_time": (str, REQUIRED),
                                       "last_time": ((int, float), 1.0), "conflict_nums": (int, 3)})
        one_of(NAME, "task_type", args["task_type"], ("department", "manager"))
        one_of(NAME, "conflict_nums", args["conflict_nums"], (1, 2, 3))
        start = moment(NAME, "start_time", args["start_time"])
        end = start + timedelta(hours=hours_of(NAME, "last_time", args["last_time"]))
        conflicts: int = args["conflict_nums"]
        add_rooms(day)
        if args["task_type"] == "manager":
            attending, busy, description = self._managers(day, start, end, conflicts)
        else:
            attending, busy, description = self._department(day, start, end, conflicts)
        return TaskSpec(NAME, description, deadline(day), {
            "start": start.isoformat(), "end": end.isoformat(), "attending": attending, "busy": busy,
            "invite": args["task_type"]})  # the variant, which the hints follow

    @staticmethod
    def _managers(day: Day, start: datetime, end: datetime, conflicts: int) -> tuple[list[str], list[str], str]:
        managers = [e for e in day.company.employees if "Manager" in e.role]
        if len(managers) < conflicts:
            raise ConfigError(f"{NAME}: argument conflict_nums is {conflicts}, but the company has only "
                              f"{len(managers)} managers")
        busy = [e.name for e in day.rng.sample(managers, conflicts)]
        asked = f"If the intern asks whether you can attend a meeting from {slot(start, end)}"
        for manager in managers:
            day.company.add_rule(manager, f"{asked}, say you have reception duty then and cannot come, and ask "
                                 "not to be put on the attendee list." if manager.name in busy
                                 else f"{asked}, say you can come.")
        positions = ", ".join(dict.fromkeys(m.role for m in managers))
        description = (f"Book a meeting from {slot(start, end)} and invite the manager of every department "
                       f"(that is: {positions}). Before you book it, ask each manager whether they can come. "
                       "Then join the meeting on time (not too early).")
        return [m.name for m in managers if m.name not in busy], busy, description

    @staticmethod
    def _department(day: Day, start: datetime, end: datetime, conflicts: int) -> tuple[list[str], list[str], str]:
        if not day.company.in_department(DEPARTMENT):
            raise ConfigError(f"{NAME}: argument task_type 'department' needs a {DEPARTMENT} department")
        manager = day.company.manager_of(DEPARTMENT)
        members = [e for e in day.company.in_department(DEPARTMENT) if e is not manager]
        if len(members) < BUSY:
            raise ConfigError(f"{NAME}: argument task_type 'department' needs at least {BUSY} {DEPARTMENT} "
                              f"members besides the manager; the company has {len(members)}")
        asked_about = day.rng.sample(members, BUSY)
        # The last `conflicts` of those asked about are really busy; the manager keeps the others on the list.
        busy, keep = asked_about[BUSY - conflicts:], asked_about[:BUSY - conflicts]
        asked = f"If the intern asks whether you can attend a meeting from {slot(start, end)}"
        for member in members:
            day.company.add_rule(member, f"{asked}, say your manager has given you other work for that time, and "
                                 f"that the {DEPARTMENT} manager has to confirm whether you attend."
                                 if member in asked_about else f"{asked}, say you can come.")
        day.company.add_rule(manager, f"{asked}, say you can come.")
        day.company.add_rule(manager, f"If the intern asks whether {_names(asked_about)} should be on the attendee "
                             "list: " + (f"{_names(keep)} should stay on it; {_names(busy)} need not be on it."
                                         if keep else "none of them needs to be on it."))
        description = (f"Book a meeting from {slot(start, end)} and invite every member of the {DEPARTMENT} "
                       "department. Before you book it, ask each member whether they can come. Then join the "
                       "meeting on time (not too early).")
        return [e.name for e in members if e not in busy] + [manager.name], [e.name for e in busy], description

    def sample_arguments(self, rng: random.Random) -> dict[str, Any]:
        return drawn(rng, SAMPLED)

    def hints(self, task: TaskSpec) -> Hints:
        when = "from the start to the end the task gives"
        attend = ("attend_meeting that room at its start (no more than five minutes late, not long before; "
                  "jump_time if you are early), then done.")
        if task.check["invite"] == "manager":
            return (
                "Only asking tells who can come: some managers cannot make this slot, and inviting one of them "
                "costs as much as leaving out one who can. After booking, you still have to be in the meeting "
                "yourself, on time.",
                "Ask each department's manager (list_users shows every position with Manager in it) whether they "
                "can attend; invite exactly those who say they can. Nobody else needs to be asked.",
                f"list_users and note every manager; send_message each one asking whether they can attend {when}, "
                "and keep each answer; get_available_rooms for the slot; book_meeting one of those rooms for "
                "exactly that slot with only the managers who can come; work on other tasks meanwhile; " + attend)
        return (
            f"Some {DEPARTMENT} members will not give a straight answer: they say their manager decides. The "
            "invitation list is settled only once their manager has said which of them should attend; and after "
            "booking you have to be in the meeting yourself, on time.",
            f"Ask every {DEPARTMENT} member, the manager included, whether they can attend. About each one who "
            f"defers, ask the {DEPARTMENT} Manager whether they should be on the attendee list, and follow that "
            "answer.",
            f"list_users and pick out the {DEPARTMENT} department; send_message each member, the manager too, "
            f"asking whether they can attend {when}; send the {DEPARTMENT} Manager the names of those who said "
            "the manager must confirm, asking which of them should be on the list; get_available_rooms for the "
            "slot; book_meeting a free room for exactly that slot with everyone who can come and those the "
            "manager keeps, leaving out anyone released or unable to come; " + attend)

    def evaluate(self, task: TaskSpec, outcome: Outcome) -> Score:
        start, end = datetime.fromisoformat(task.check["start"]), datetime.fromisoformat(task.check["end"])
        ours = [m for m in outcome.booked if m.start == start and _lasts(m) == end - start]
        booking: Meeting | None = ours[-1] if ours else None
        checks = {
            "booked": booking is not None,
            "on time": booking is not None and on_time(outcome.attended, booking.title, start),
            "all invited": booking is not None and all(n in booking.attendees for n in task.check["attending"]),
            "no busy invitee": booking is not None and not set(task.check["busy"]) & set(booking.attendees),
        }
        return Score(float(sum(checks.values())), 4.0, tuple(NOTES[name] for name, ok in checks.items() if not ok))


NOTES = {
    "booked": "No meeting was booked for the required slot: find a room free at that time and book it.",
    "on time": "You did not join the meeting on time: watch the clock and leave other work to join as it starts.",
    "all invited": "Not every eligible invitee was on the booking: invite everyone the task asks for who can come.",
    "no busy invitee": "Someone who cannot come was invited: ask each invitee first, and when one is unsure, "
                       "ask their manager whether they should attend.",
}


def _lasts(meeting: Meeting) -> timedelta | None:
    """How long a booking lasts; None for hours no timedelta holds (NaN, 1e300, text)."""
    try:
        return timedelta(hours=meeting.hours)
    except (TypeError, ValueError, OverflowError):
        return None


def _names(people: list[Employee]) -> str:
    return ", ".join(e.name for e in people)


FAMILY = MeetingBook()
