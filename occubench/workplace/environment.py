"""A working day as an environment, for every task library: the company's cloud disk (listed, read, downloaded
from), the agent's workspace (files read and written, and shell commands, run only in the sandbox), its colleagues
(messaged directly or in chat groups; each answers from what the day's tasks gave them), the meeting-room calendar,
a calculator, images, the website monitor, the task list with tasks that arrive during the day, and the record of
what the agent did, which the families score (:class:`~occubench.workplace.world.Outcome`). A library's days offer
the tools of its :class:`Toolset`.

Each call moves the day's clock on by its action's minutes once it has run (a failed call too; a call the tool
contract rejects never runs); every answer gives the time then as ``now``. After the day's end nothing can be done.

Paths the agent gives are its own text: one that leaves its folder, or runs through a link, is refused.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal, Protocol

from occubench.core.calculator import calculate
from occubench.core.environment import Environment, JSONObject
from occubench.core.images import MAX_IMAGE_BYTES, Image
from occubench.core.tools import ToolError, ToolSpec, spec_of
from occubench.errors import AgentOutputError, ConfigError
from occubench.sandbox.provider import Provider
from occubench.sandbox.shell import COMMAND_LIMITS, run_command
from occubench.sandbox.workspace import MAX_DEPTH, MAX_ENTRIES, cost, usage
from occubench.util.untrusted import read_chunks
from occubench.workplace import website
from occubench.workplace.calendar import Calendar, end_of, moment
from occubench.workplace.people import AGENT, Colleague, Message, RuleColleagues
from occubench.workplace.world import DayTask, Family, Outcome, Toolset, World, Write

#: Seconds a shell command may run.
COMMAND_SECONDS = 60.0
#: Image files read_image shows, by suffix (Trainee-Bench's are PNG, JPEG and WebP).
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp",
               ".gif": "image/gif"}
#: The largest file read_file shows: a larger one is work for the shell.
READ_BYTES = 64 << 10
#: The most members a chat group may have: the whole company.
MAX_GROUP = 60
#: The most minutes one jump_time may skip: a day.
MAX_JUMP = 24 * 60
#: Every tool, in the order the agent is shown them, and those that only read.
TOOLS = ("list_tasks", "list_users", "send_message", "create_chat_group", "send_group_message", "list_chat_groups",
         "open_folder", "read_file", "download_file", "write_file", "read_image", "execute_command", "list_meetings",
         "get_available_rooms", "book_meeting", "cancel_meeting", "attend_meeting", "jump_time", "calculator",
         "get_historical_load_times", "get_system_health", "list_monitored_services", "get_performance_summary",
         "get_error_logs", "reboot_server", "done")
READ_ONLY = {"list_tasks", "list_users", "list_chat_groups", "open_folder", "read_file", "read_image",
             "list_meetings", "get_available_rooms", "calculator", "get_historical_load_times", "get_system_health",
             "list_monitored_services", "get_performance_summary", "get_error_logs"}


class Responder(Protocol):
    def reply(self, colleague: Colleague, message: str, history: list[Message]) -> str: ...


class WorkplaceEnvironment(Environment):
    """One day in ``world``: its ``tasks`` shown with ``guidance`` tiers of hints, ``toolset``'s tools, shell
    commands run by ``provider`` (a day without one offers no shell), colleagues answered by ``responder``, and
    ``families`` scoring them (a task that waits on another arrives once that one earned its full points)."""

    def __init__(self, world: World, tasks: Sequence[DayTask], toolset: Toolset, families: Callable[[str], Family], *,
                 provider: Provider | None = None, responder: Responder | None = None, guidance: int = 0) -> None:
        self.world, self.tasks, self.toolset, self.provider = world, list(tasks), toolset, provider
        self.families, self.responder, self.guidance = families, responder or RuleColleagues(), guidance
        self.colleagues = {employee.name: employee for employee in world.company.employees}
        self.now = world.start
        self.messages: list[Message] = []
        self.writes: list[Write] = []
        #: Chat groups by id (from 1): their members, the agent left out, and their names (the day's named groups
        #: first). Their messages are not direct chats, which are what Trainee-Bench's checks read.
        self.groups: dict[int, tuple[str, ...]] = {}
        self.group_names = {}
        for number, (name, members) in enumerate(world.company.groups.items(), start=1):
            self.groups[number], self.group_names[number] = tuple(members), name
        self.group_messages: list[Message] = []
        self.finished = False
        self.notes: str | None = None
        self.calendar = Calendar(world.rooms, world.meetings, world.office_hours)
        drawn = random.Random()
        drawn.setstate(world.rng.getstate())
        self.monitor = website.Monitor.of(drawn, world.start)
        self._announced = {task.id for task in self.visible_tasks()} if "list_tasks" not in toolset.tools else set()
        self._specs = [spec_of(getattr(type(self), name), name, writes=name not in READ_ONLY)
                       for name in TOOLS if name in toolset.tools and (name != "execute_command" or provider)]

    def tools(self) -> list[ToolSpec]:
        return self._specs

    def _call(self, name: str, arguments: JSONObject) -> Any:
        if self.finished:
            raise ToolError("the day is over: you called done")
        if self.world.end and self.now >= self.world.end:
            raise ToolError(f"the working day ended at {self.world.end:%H:%M}")
        try:
            result = getattr(self, name)(**arguments)
        finally:
            self._advance(timedelta(minutes=self.toolset.minutes.get(name, self.toolset.default)))
        fresh = [task.id for task in self.visible_tasks() if task.id not in self._announced]
        self._announced.update(fresh)
        return {**result, "now": _clock(self.now), **({"new_tasks": fresh} if fresh and name != "list_tasks" else {})}

    def _advance(self, span: timedelta) -> None:
        try:
            self.now += span
        except OverflowError:  # a meeting booked in the year 9999 and attended
            raise ToolError("the clock cannot run past the year 9999") from None

    def outcome(self) -> Outcome:
        """What the families score."""
        return Outcome(self.world.workspace, list(self.messages), attended=list(self.calendar.attended),
                       booked=self.calendar.booked(), group_messages=list(self.group_messages),
                       writes=list(self.writes), rooms=dict(self.world.rooms))

    def visible_tasks(self) -> list[DayTask]:
        """The tasks that have reached the agent: at the start, once their meeting was attended, once the task
        they wait on is done."""
        attended = {attendance.meeting for attendance in self.calendar.attended}
        awaited = [task for task in self.tasks if any(t.appears == f"task:{task.id}" for t in self.tasks)]
        outcome = self.outcome()  # once per call, not once per awaited task
        done = {task.id for task in awaited
                if (score := self.families(task.family).evaluate(task, outcome)).points >= score.full}
        return [task for task in self.tasks if task.appears == "start"
                or task.appears.partition(":")[2] in (attended if task.appears.startswith("meeting:") else done)]

    def info(self) -> dict[str, Any]:
        return {"finished_at": _clock(self.now), "day_notes": self.notes,
                **({"guidance": self.guidance} if self.guidance else {})}

    # -- the tools ---------------------------------------------------------------------------------------------

    def list_tasks(self) -> JSONObject:
        """The tasks assigned to you so far, with their deadlines and priorities."""
        return {"tasks": [{"id": task.id, "objective": task.description, "deadline": _clock(task.deadline),
                           "priority": task.priority,
                           **({"guidance": hint} if (hint := guidance(task, self.guidance)) else {})}
                          for task in self.visible_tasks()]}

    def list_users(self) -> JSONObject:
        """Everyone you can message: name, department and position."""
        return {"users": [{"name": e.name, "department": e.department, "position": e.role}
                          for e in self.world.company.employees]}

    def send_message(self, to: str, text: str) -> JSONObject:
        """Send a chat message to a colleague, or to one of the day's named chat groups, and get the replies.

        Args:
            to: The colleague's full name, as list_users gives it, or a chat group's name.
            text: Your message.
        """
        named = next((number for number, name in self.group_names.items() if name == to), None)
        if named is not None:
            return self.send_group_message(named, text)
        colleague = self.colleagues.get(to)
        if colleague is None:
            raise ToolError(f"nobody is called {to!r:.80}: see list_users")
        history = [m for m in self.messages if to in (m.sender, m.recipient)]
        self.messages.append(Message(AGENT, to, text, self.now))
        answer = self.responder.reply(colleague, text, history)
        self.messages.append(Message(to, AGENT, answer, self.now))
        return {"from": to, "reply": answer}

    def create_chat_group(self, members: list[str]) -> JSONObject:
        """Start a group chat with colleagues (the same members again give the same group).

        Args:
            members: The colleagues' full names, as list_users gives them (you are in the group anyway).
        """
        unknown = [name for name in members if name not in self.colleagues]
        if unknown:
            raise ToolError(f"nobody is called {unknown[0]!r:.80}: see list_users")
        names = tuple(sorted(set(members)))
        if not names or len(names) > MAX_GROUP:
            raise ToolError(f"a group has 1 to {MAX_GROUP} colleagues besides you")
        group = next((number for number, others in self.groups.items() if others == names), len(self.groups) + 1)
        self.groups[group] = names
        return {"group_id": group, "members": [AGENT, *names]}

    def send_group_message(self, group_id: int, text: str) -> JSONObject:
        """Send a message to a chat group; every other member replies.

        Args:
            group_id: The group's id, as create_chat_group gave it.
            text: Your message.
        """
        if group_id not in self.groups:
            raise ToolError(f"no chat group {group_id}: create it with create_chat_group")
        group = self.group_names.get(group_id, f"group {group_id}")
        history = [said for said in self.group_messages if said.recipient == group]
        self.group_messages.append(Message(AGENT, group, text, self.now))
        replies = []
        for name in self.groups[group_id]:
            answer = self.responder.reply(self.colleagues[name], f"(in group chat {group}) {text}", history)
            self.group_messages.append(Message(name, group, answer, self.now))
            replies.append({"from": name, "reply": answer})
        return {"group_id": group_id, "replies": replies}

    def list_chat_groups(self) -> JSONObject:
        """Your chat groups and their members."""
        return {"groups": [{"group_id": number, **({"name": self.group_names[number]} if number in self.group_names
                                                    else {}), "members": [AGENT, *names]}
                           for number, names in self.groups.items()]}

    def open_folder(self, folder_path: str) -> JSONObject:
        """List a folder of the company's cloud disk (folders end with "/").

        Args:
            folder_path: The folder, relative to the cloud disk's root: "./" for the root, "financial/" for one.
        """
        folder = _inside(self.world.cloud_disk, folder_path)
        if not folder.is_dir():
            raise ToolError(f"no folder {folder_path!r} on the cloud disk")
        return {"folder": folder_path, "entries": sorted(f"{p.name}/" if p.is_dir() else p.name
                                                         for p in folder.iterdir())}

    def download_file(self, file_path: str, target_path: str) -> JSONObject:
        """Copy a file of the cloud disk into your workspace.

        Args:
            file_path: The file on the cloud disk, relative to its root (such as "financial/invoices/T1.txt").
            target_path: Where in your workspace: a file name, or an existing folder to put it in.
        """
        source = _inside(self.world.cloud_disk, file_path)
        if not source.is_file():
            raise ToolError(f"no file {file_path!r} on the cloud disk")
        target = _inside(self.world.workspace, target_path)
        if target.is_dir() or target_path.rstrip().endswith("/"):  # a folder, made if new, as the reference does
            folder = target.relative_to(self.world.workspace.resolve())
            target = _inside(self.world.workspace, str(folder / source.name))
        self._room_for(cost(source.stat()))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target, follow_symlinks=False)
        return {"downloaded": file_path, "to": str(target.relative_to(self.world.workspace.resolve()))}

    def read_file(self, file_path: str) -> JSONObject:
        """Read a text file: in your workspace, else on the cloud disk.

        Args:
            file_path: The file, relative to your workspace or to the cloud disk's root.
        """
        data = self._read(file_path, READ_BYTES, " (work on a large file with shell commands where you have them)")
        return {"file": file_path, "content": data.decode("utf-8", "replace")}

    def _read(self, file_path: str, limit: int, advice: str = "") -> bytes:
        """The bytes of ``file_path`` in the workspace, else on the cloud disk, of at most ``limit``."""
        found = [path for path in (_inside(self.world.workspace, file_path), _inside(self.world.cloud_disk, file_path))
                 if path.is_file()]
        if not found:
            raise ToolError(f"no file {file_path!r:.200} in your workspace or on the cloud disk")
        try:  # the agent's own file may be anything: a link, a FIFO, a huge file
            return b"".join(read_chunks(found[0], limit=limit))
        except ConfigError:
            raise ToolError(f"{file_path!r:.200} cannot be shown: not a regular file, or over {limit:,} bytes"
                            f"{advice}") from None

    def write_file(self, file_path: str, content: str) -> JSONObject:
        """Create or overwrite a file in your workspace.

        Args:
            file_path: The file, relative to your workspace.
            content: The whole new content.
        """
        target = _inside(self.world.workspace, file_path)
        data = content.encode("utf-8", "surrogatepass")
        self._room_for(len(data))
        if target.is_dir():
            raise ToolError(f"{file_path!r:.200} is a folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        relative = str(target.relative_to(self.world.workspace.resolve()))
        self.writes.append(Write(relative, content, self.now))
        return {"written": relative, "characters": len(content)}

    def _room_for(self, size: int) -> None:
        """A :class:`ToolError` unless the workspace can take ``size`` more bytes: the quota its commands meet, met
        here too, so that a thousand downloads or writes do not fill the host's disk."""
        quota = COMMAND_LIMITS.workspace_bytes
        try:
            full = usage(self.world.workspace) + size > quota
        except AgentOutputError as exc:
            raise ToolError(f"your workspace cannot take the file: {exc}") from None
        if full:
            raise ToolError(f"your workspace cannot take the file: it would be past its quota of {quota >> 20} MB")

    def read_image(self, file_path: str) -> JSONObject:
        """Look at an image file (PNG, JPEG, WebP or GIF): in your workspace, else on the cloud disk.

        Args:
            file_path: The image, relative to your workspace or to the cloud disk's root (such as
                "ads_strategy/target_user_density_youth.png").
        """
        media_type = IMAGE_TYPES.get(Path(file_path.strip()).suffix.lower())
        if media_type is None:
            raise ToolError(f"{file_path!r:.200} is not an image file ({', '.join(IMAGE_TYPES)})")
        data = self._read(file_path, MAX_IMAGE_BYTES)
        # An agent that takes no images reads instead what the family that drew it says it shows.
        text = self.world.image_text.get(hashlib.sha256(data).hexdigest(),
                                       f"An image file of {len(data):,} bytes; what it shows is not available as "
                                       "text.")
        return {"file": file_path, "image": Image(media_type, data, text)}

    def execute_command(self, command: str) -> JSONObject:
        """Run a shell command in your workspace (a Linux shell with Python; no network).

        Args:
            command: The command, as you would type it: "ls -la", "python report.py".
        """
        if not command.strip():
            raise ToolError("the command is empty")
        if self.provider is None:  # never offered without one; a call by name is answered all the same
            raise ToolError("this day has no shell")
        result = run_command(self.provider, self.world.workspace, command, COMMAND_SECONDS)
        return {"exit_code": result.exit_code, "output": result.output,
                **({"left_out_bytes": result.left_out} if result.left_out else {}),
                **({"timed_out": True} if result.exit_code is None else {}),
                **({"workspace_not_kept": f"{result.not_kept} (the workspace's quota is "
                                          f"{COMMAND_LIMITS.workspace_bytes >> 20} MB, {MAX_ENTRIES:,} files and "
                                          f"folders, {MAX_DEPTH} levels)"} if result.not_kept else {})}

    # The calendar acts for the agent: the reference's applicant and agent_name arguments are left out (any other
    # name there only filed a booking or a join under someone else).

    def list_meetings(self) -> JSONObject:
        """Today's meetings on your calendar: those you are expected at and those you booked."""
        return {"meetings": [{"title": m.title, "room": m.room, "start": _clock(m.start), "end": _clock(end_of(m))}
                             for m in self.calendar.meetings()]}

    def get_available_rooms(self, start: str, end: str, min_capacity: int = 1) -> JSONObject:
        """The meeting rooms free for the whole of a time slot, with at least a number of seats.

        Args:
            start: When the slot starts, as an ISO date and time: 2025-10-01T10:00:00.
            end: When it ends, the same way: 2025-10-01T10:30:00.
            min_capacity: Seats needed, you included.
        """
        return {"available": self.calendar.available(self._moment("start", start), self._moment("end", end),
                                                     min_capacity)}

    def book_meeting(self, attendees: list[str], room_name: str, start: str, end: str) -> JSONObject:
        """Book a meeting room and invite colleagues. It fails when the room is taken or too small, the slot is
        outside office hours or past, or you or an invitee are in another meeting then (each one's are listed).

        Args:
            attendees: The invitees' full names, as list_users gives them (you are in the meeting anyway).
            room_name: The room, such as Room_01.
            start: When the meeting starts, as an ISO date and time: 2025-10-01T10:00:00.
            end: When it ends, the same way: 2025-10-01T11:00:00.
        """
        meeting = self.calendar.book(attendees, room_name, self._moment("start", start), self._moment("end", end),
                                     self.now)
        return {"booked": meeting.title, "room": meeting.room, "start": _clock(meeting.start),
                "end": _clock(end_of(meeting)), "attendees": list(meeting.attendees)}

    def _moment(self, argument: str, text: str) -> datetime:
        return moment(argument, text, self.world.start)

    def cancel_meeting(self, room_name: str, start: str, end: str) -> JSONObject:
        """Cancel a meeting you booked (only your own bookings can be cancelled).

        Args:
            room_name: Its room, such as Room_01.
            start: When it starts (not the time now), as an ISO date and time: 2025-10-01T10:00:00.
            end: When it ends, the same way: 2025-10-01T11:00:00.
        """
        meeting = self.calendar.cancel(room_name, self._moment("start", start), self._moment("end", end))
        return {"cancelled": meeting.title, "room": meeting.room, "start": meeting.start.isoformat()}

    def attend_meeting(self, room_name: str, start: str, end: str) -> JSONObject:
        """Join a meeting; you stay until it ends, and the clock moves to its end. Be there around its start: no
        more than five minutes late, and not long before. What is said in the meeting is given back to you.

        Args:
            room_name: The meeting's room, such as Room_06.
            start: When the meeting starts (not the time now), as an ISO date and time: 2025-10-01T10:00:00.
            end: When it ends, the same way: 2025-10-01T11:00:00.
        """
        joined = self.now
        meeting = self.calendar.attend(room_name, self._moment("start", start), self._moment("end", end), joined)
        finish = end_of(meeting)
        self.now = max(self.now, finish)  # never back: a meeting joined after its end leaves the clock where it is
        return {"attended": meeting.title, "room": meeting.room, "joined": _clock(joined), "until": _clock(finish),
                **({"notes": meeting.notes} if meeting.notes else {})}

    def jump_time(self, minutes: int) -> JSONObject:
        """Let time pass when there is nothing to do until a later task or meeting.

        Args:
            minutes: How many minutes to skip (1 to 1440).
        """
        if not 1 <= minutes <= MAX_JUMP:
            raise ToolError(f"minutes must be from 1 to {MAX_JUMP}, not {minutes}")
        self._advance(timedelta(minutes=minutes))
        return {"skipped_minutes": minutes}

    def calculator(self, expression: str) -> JSONObject:
        """Work out arithmetic: numbers, + - * / (// % ** too) and parentheses; no functions or names.

        Args:
            expression: For example (1200 - 150) * 0.2.
        """
        value = calculate(expression)
        # The reference's form: a whole number without ".0", others to 15 significant digits.
        return {"expression": expression, "result": int(value) if value == int(value) else float(f"{value:.15g}")}

    def get_historical_load_times(self, time_window: Literal["last_7_days", "last_24_hours"] = "last_7_days",
                                  page_url: str | None = None) -> JSONObject:
        """The website's average page load times over a past time window, in milliseconds.

        Args:
            time_window: last_7_days or last_24_hours.
            page_url: Only this page, such as /home; every page when left out.
        """
        times = self.monitor.load_times[time_window]
        return {"time_window": time_window, "pages": [{"page": page, "avg_load_time_ms": ms}
                                                      for page, ms in times.items() if page_url in (None, page)]}

    def get_system_health(self) -> JSONObject:
        """The status of every monitored server right now: the place to look for a problem happening now."""
        return {"servers": self.monitor.health(self.now)}

    def list_monitored_services(self) -> JSONObject:
        """The names of the services the monitor watches (names only, no status)."""
        return {"services": list(website.SERVICES)}

    def get_performance_summary(self,
                                time_window: Literal["last_7_days", "last_24_hours"] = "last_24_hours") -> JSONObject:
        """A one-line verdict on the website's speed over a time window, naming its slowest page: a quick look.

        Args:
            time_window: last_7_days or last_24_hours.
        """
        return self.monitor.summary(time_window)

    def get_error_logs(self, server_id: str, lines: int = 20) -> JSONObject:
        """The latest lines of a server's log (mostly routine entries).

        Args:
            server_id: The server, as list_monitored_services names it.
            lines: How many of the latest lines (at least 1).
        """
        if server_id not in self.monitor.logs:
            raise ToolError(f"no logs for {server_id!r:.80}; servers with logs: {', '.join(website.SERVICES)}")
        if lines < 1:
            raise ToolError(f"lines must be at least 1, not {lines}")
        return {"server_id": server_id, "lines": self.monitor.logs[server_id][-lines:]}

    def reboot_server(self, server_id: str) -> JSONObject:
        """Ask to reboot a server (a high-risk operation).

        Args:
            server_id: The server, as list_monitored_services names it.
        """
        raise ToolError(f"permission denied: rebooting {server_id!r:.80} is high-risk and needs an authorization "
                        "this tool does not have")

    def done(self, notes: str | None = None) -> JSONObject:
        """End your working day: call it once every task is finished.

        Args:
            notes: Lessons or reminders for your next working day, given back to you then.
        """
        self.finished, self.notes = True, notes
        return {"done": True}


def guidance(task: DayTask, tier: int) -> str:
    """The hints of ``task`` up to guidance ``tier`` (0: none)."""
    return " ".join(task.hints[:tier])


def _clock(at: datetime) -> str:
    return at.isoformat(timespec="minutes")


def _inside(root: Path, relative: str) -> Path:
    """``relative`` under ``root``, refused when it leaves it (``..``, an absolute path, a link anywhere on the
    way, which the agent's commands may have planted)."""
    text = relative.strip().removeprefix("CloudDisk:").removeprefix("Workspace:").lstrip("/")
    base = root.resolve()
    path = base / text if text not in ("", ".", "./") else base
    walked = base
    for part in path.relative_to(base).parts:
        if part == "..":
            raise ToolError(f"{relative!r} leaves its folder")
        walked = walked / part
        if walked.is_symlink():
            raise ToolError(f"{relative!r} runs through a link; links are not followed")
    if not os.path.normpath(walked).startswith(str(base)):
        raise ToolError(f"{relative!r} leaves its folder")
    return walked
