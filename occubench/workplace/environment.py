"""A workplace day as an environment: drive, workspace, messages, calendar, a clock that only moves forward.

Every action costs minutes of the working day; a call the tool contract rejects (unknown tool, invalid arguments)
costs none. Files live in memory under two roots, the shared drive and the agent's workspace; paths cannot leave
them and the day's answers are not among them. Colleagues answer messages through a responder (deterministic by
default, an LLM when one is given).
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Protocol

from occubench.core.calculator import calculate
from occubench.core.environment import Environment, JSONObject
from occubench.core.tools import TOOL_TIME_LIMIT, ToolError, ToolSpec, spec_of
from occubench.workplace.model import Colleague, Day, clock, minutes
from occubench.workplace.scoring import checkpoint_met

#: Minutes each action takes.
COSTS = {"list_tasks": 1, "list_colleagues": 1, "drive_list": 1, "drive_read": 3, "drive_copy": 1,
         "workspace_read": 2, "workspace_write": 4, "send_message": 5, "calendar_list": 1,
         "calendar_free_rooms": 1, "calendar_book": 3, "calendar_cancel": 1, "calendar_attend": 0,
         "clock_now": 0, "calculator": 1, "finish_day": 0}
#: Arriving this many minutes after a meeting starts still counts as on time.
GRACE = 2


class Responder(Protocol):
    def reply(self, colleague: Colleague, message: str, history: list[tuple[str, str]]) -> str: ...


class KeywordResponder:
    """Offline colleagues: a clue is released when the message meets every group of its triggers, as whole words
    (:meth:`Clue.asked_by`), so a request for everything asks for nothing in particular."""

    def reply(self, colleague: Colleague, message: str, history: list[tuple[str, str]]) -> str:
        released = [clue.text for clue in colleague.clues if clue.asked_by(message)]
        if released:
            return " ".join(released)
        return (f"Hi, this is {colleague.name} ({colleague.role}, {colleague.department}). I'm not sure what you "
                "need from me — could you say exactly what you are looking for?")


class WorkplaceEnvironment(Environment):
    """One working day under the tool contract of :class:`Environment`. A call is limited to ``time_limit``
    seconds when the colleagues are code; colleagues played by a model wait on requests with their own timeouts
    and retries, which an interrupt would cut short, so then calls have no limit."""

    def __init__(self, day: Day, responder: Responder | None = None, *,
                 time_limit: float | None = TOOL_TIME_LIMIT, guidance: int = 0) -> None:
        self.day = day
        #: Hint tiers each listed task shows (``--guidance``): 0 none, up to 3 (all of them).
        self.guidance = guidance
        self.responder = responder or KeywordResponder()
        self.time_limit = time_limit if isinstance(self.responder, KeywordResponder) else None
        self.reset()

    def reset(self) -> None:
        self.now = minutes(self.day.start)
        self.drive = dict(self.day.drive)
        self.workspace: dict[str, str] = {}
        self.events: list[dict[str, Any]] = []
        self.bookings: list[dict[str, Any]] = []
        self.conversations: dict[str, list[tuple[str, str]]] = {}
        self.finished = False
        self.notes: str | None = None
        self._announced: set[str] = set()

    # -- the tools -------------------------------------------------------------------------------------------

    def list_tasks(self) -> JSONObject:
        """The tasks assigned to you so far, with their deadlines and priorities."""
        return {"tasks": [{"id": t.id, "objective": t.objective, "deadline": t.deadline, "priority": t.priority,
                           **({"guidance": " ".join(t.hints[:self.guidance])} if self.guidance and t.hints else {})}
                          for t in self.visible_tasks()]}

    def list_colleagues(self) -> JSONObject:
        """Colleagues you can message (name, role, department) and the group chats."""
        return {"colleagues": [{"name": c.name, "role": c.role, "department": c.department}
                               for c in self.day.colleagues], "groups": self.day.groups}

    def drive_list(self, folder: str = "") -> JSONObject:
        """Files on the shared cloud drive.

        Args:
            folder: Only files under this folder.
        """
        root = _inside(folder) if folder else ""
        return {"files": sorted(p for p in self.drive if p.startswith(root))}

    def drive_read(self, path: str) -> JSONObject:
        """Read a file on the shared drive.

        Args:
            path: The file's path on the drive.
        """
        return {"path": path, "content": self._file(self.drive, path, "drive")}

    def drive_copy(self, path: str) -> JSONObject:
        """Copy a drive file into your workspace, under the same name.

        Args:
            path: The file's path on the drive.
        """
        self.workspace[_inside(path)] = self._file(self.drive, path, "drive")
        return {"copied": path}

    def workspace_read(self, path: str) -> JSONObject:
        """Read a file in your workspace.

        Args:
            path: The file's path in the workspace.
        """
        return {"path": path, "content": self._file(self.workspace, path, "workspace")}

    def workspace_write(self, path: str, content: str) -> JSONObject:
        """Create or overwrite a file in your workspace.

        Args:
            path: The file's path in the workspace.
            content: The whole new content.
        """
        self.workspace[_inside(path)] = content
        self._log("write", path=_inside(path), content=content)
        return {"written": path, "characters": len(content)}

    def send_message(self, to: str, text: str) -> JSONObject:
        """Message a colleague or a group chat; colleagues reply at once.

        Args:
            to: A colleague's name or a group's name.
            text: Your message.
        """
        if to in self.day.groups:
            members = self.day.groups[to]
        elif any(c.name == to for c in self.day.colleagues):
            members = [to]
        else:
            raise ToolError(f"nobody called {to!r}; see list_colleagues")
        self._log("message", to=to, text=text)
        replies = []
        for colleague in (c for c in self.day.colleagues if c.name in members):
            history = self.conversations.setdefault(colleague.name, [])
            answer = self.responder.reply(colleague, text, history)
            history.append((text, answer))
            replies.append({"from": colleague.name, "text": answer})
        return {"delivered_to": to, "replies": replies}

    def calendar_list(self) -> JSONObject:
        """Today's meetings you are invited to and the rooms you have booked."""
        return {"meetings": [{"id": m.id, "title": m.title, "start": m.start, "end": m.end, "room": m.room}
                             for m in self.day.meetings],
                "bookings": [b for b in self.bookings if not b["cancelled"]]}

    def calendar_free_rooms(self, start: str, end: str, min_capacity: int = 1) -> JSONObject:
        """Rooms free for a whole time span today.

        Args:
            start: Start time, HH:MM.
            end: End time, HH:MM.
            min_capacity: Seats needed.
        """
        begin, finish = _span(start, end)
        return {"rooms": [{"room": room, "capacity": seats} for room, seats in sorted(self.day.rooms.items())
                          if seats >= min_capacity and self._free(room, begin, finish)]}

    def calendar_book(self, room: str, start: str, end: str, title: str, attendees: list[str]) -> JSONObject:
        """Book a room and invite colleagues.

        Args:
            room: The room's name.
            start: Start time, HH:MM.
            end: End time, HH:MM.
            title: The meeting's title.
            attendees: Names of the colleagues to invite.
        """
        begin, finish = _span(start, end)
        if room not in self.day.rooms:
            raise ToolError(f"no room called {room!r}")
        if begin < self.now:
            raise ToolError(f"{start} has already passed (it is {clock(self.now)})")
        if not self._free(room, begin, finish):
            raise ToolError(f"{room} is not free from {start} to {end}")
        unknown = [a for a in attendees if not any(c.name == a for c in self.day.colleagues)]
        if unknown:
            raise ToolError(f"unknown attendee(s): {', '.join(unknown)}")
        booking = {"id": f"B{len(self.bookings) + 1}", "room": room, "start": clock(begin), "end": clock(finish),
                   "title": title, "attendees": list(attendees), "cancelled": False}
        self.bookings.append(booking)
        self._log("book", booking=booking["id"])
        return dict(booking)  # a copy: the observation gains keys (new_tasks) the booking must not

    def calendar_cancel(self, booking_id: str) -> JSONObject:
        """Cancel one of your bookings.

        Args:
            booking_id: The booking's id, e.g. B1.
        """
        booking = next((b for b in self.bookings if b["id"] == booking_id and not b["cancelled"]), None)
        if booking is None:
            raise ToolError(f"no active booking {booking_id!r}")
        booking["cancelled"] = True
        self._log("cancel", booking=booking_id)
        return {"cancelled": booking_id}

    def calendar_attend(self, meeting_id: str) -> JSONObject:
        """Go to a meeting: you wait until it starts and stay to the end; what is said there is returned.

        Args:
            meeting_id: The meeting's id from calendar_list.
        """
        meeting = next((m for m in self.day.meetings if m.id == meeting_id), None)
        if meeting is None:
            raise ToolError(f"no meeting {meeting_id!r}")
        if self.now >= minutes(meeting.end):
            raise ToolError(f"{meeting.title} ended at {meeting.end}")
        on_time = self.now <= minutes(meeting.start) + GRACE
        arrived = clock(self.now)
        self.now = minutes(meeting.end)
        self._log("attend", meeting=meeting_id, on_time=on_time)
        return {"meeting": meeting.title, "arrived": arrived, "on_time": on_time, "notes": meeting.notes}

    def clock_now(self) -> JSONObject:
        """The current time of the working day."""
        return {"time": clock(self.now), "day_ends": self.day.end}

    def calculator(self, expression: str) -> JSONObject:
        """Evaluate arithmetic: numbers, + - * / // % ** and parentheses, magnitudes up to 1e100.

        Args:
            expression: For example (1200 - 150) * 0.2.
        """
        return {"expression": expression, "result": calculate(expression)}

    def finish_day(self, notes: str | None = None) -> JSONObject:
        """Declare your working day finished. Notes you leave are given back to you on your next day.

        Args:
            notes: Lessons or reminders for your next working day.
        """
        self.finished = True
        self.notes = notes
        self._log("finish")
        return {"finished_at": clock(self.now)}

    # -- the machinery -----------------------------------------------------------------------------------------

    TOOLS = ("list_tasks", "list_colleagues", "drive_list", "drive_read", "drive_copy", "workspace_read",
             "workspace_write", "send_message", "calendar_list", "calendar_free_rooms", "calendar_book",
             "calendar_cancel", "calendar_attend", "clock_now", "calculator", "finish_day")

    def tools(self) -> list[ToolSpec]:
        return list(_SPECS)

    def _call(self, name: str, arguments: JSONObject) -> JSONObject:
        if self.finished:
            raise ToolError("you have already finished your working day")
        if self.now >= minutes(self.day.end):
            raise ToolError(f"the working day ended at {self.day.end}")
        self.now += COSTS[name]
        observation: JSONObject = getattr(self, name)(**arguments)
        visible = self.visible_tasks()
        fresh = [t.id for t in visible if t.id not in self._announced]
        if fresh and name != "list_tasks":
            observation["new_tasks"] = fresh
        self._announced.update(t.id for t in visible)
        return observation

    def visible_tasks(self) -> list[Any]:
        visible = []
        for task in self.day.tasks:
            kind, _, ref = task.appears.partition(":")
            if kind == "start" or (kind == "meeting" and any(e["kind"] == "attend" and e["meeting"] == ref
                                                             for e in self.events)) or \
                    (kind == "task" and self._done(ref)):
                visible.append(task)
        return visible

    def _done(self, task_id: str) -> bool:
        task = next(t for t in self.day.tasks if t.id == task_id)
        return all(checkpoint_met(c.check, self, task.deadline) for c in task.checkpoints)

    def _log(self, kind: str, **details: Any) -> None:
        self.events.append({"time": self.now, "kind": kind, **details})

    def _free(self, room: str, begin: int, finish: int) -> bool:
        taken = [*self.day.busy, *(b for b in self.bookings if not b["cancelled"])]
        return not any(b["room"] == room and minutes(b["start"]) < finish and begin < minutes(b["end"])
                       for b in taken)

    def _file(self, files: dict[str, str], path: str, root: str) -> str:
        key = _inside(path)
        if key not in files:
            raise ToolError(f"no file {path!r} in the {root}")
        return files[key]

    def info(self) -> dict[str, Any]:
        return {"finished_at": clock(self.now), "day_notes": self.notes,
                **({"guidance": self.guidance} if self.guidance else {})}


def _inside(path: str) -> str:
    """A path kept inside its root: no absolute paths, no way up."""
    normal = posixpath.normpath(path.strip())
    if path.strip().startswith("/") or normal == ".." or normal.startswith("../"):
        raise ToolError(f"{path!r} is outside your files")
    return "" if normal == "." else normal


def _span(start: str, end: str) -> tuple[int, int]:
    if not all(re.fullmatch(r"([01]?[0-9]|2[0-3]):[0-5][0-9]", time) for time in (start, end)):
        raise ToolError("times are HH:MM, from 00:00 to 23:59")
    begin, finish = minutes(start), minutes(end)
    if finish <= begin:
        raise ToolError("the end must be after the start")
    return begin, finish


WRITES = frozenset({"drive_copy", "workspace_write", "send_message", "calendar_book", "calendar_cancel",
                    "calendar_attend", "finish_day"})
# spec_of skips a function's first parameter, here ``self``.
_SPECS = tuple(spec_of(getattr(WorkplaceEnvironment, name), name, writes=name in WRITES)
               for name in WorkplaceEnvironment.TOOLS)
