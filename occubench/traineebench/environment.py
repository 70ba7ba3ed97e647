"""A Trainee-Bench day as an environment: the reference's tools over the day's folders — the company's cloud disk
(listed, downloaded from), the agent's workspace (worked on with shell commands, run only in the sandbox), its
colleagues (messaged; each answers from the reply rules the day's tasks gave them), the meeting-room calendar, a
calculator and the website monitor — and the record of what the agent did, which the families score
(:class:`~occubench.traineebench.family.Outcome`). Every day offers every tool, as the reference's generated days do.

Each call moves the day's clock on by its action's minutes once it has run (a failed call too; a call the tool
contract rejects never runs), as the reference's clock does; every answer gives the time then as ``now``.

Paths the agent gives are its own text: a cloud-disk path or a workspace target that leaves its folder, or runs
through a link the agent's commands planted, is refused, never followed.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
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
from occubench.traineebench import website
from occubench.traineebench.calendar import Calendar, end_of, moment
from occubench.traineebench.company import AGENT
from occubench.traineebench.families.meeting_book import ROOMS
from occubench.traineebench.family import Day, Employee, Message, Outcome
from occubench.util.untrusted import read_chunks

#: Seconds a shell command may run.
COMMAND_SECONDS = 60.0
#: Minutes of the day's clock the actions the reference prices take; every other action takes one, as there.
MINUTES = {"send_message": 5, "send_group_message": 10, "create_chat_group": 1, "list_users": 1,
           "download_file": 10, "open_folder": 1, "book_meeting": 5, "cancel_meeting": 1, "get_available_rooms": 1}
#: Image files read_image shows, by suffix (the reference's are PNG, JPEG and WebP).
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp",
               ".gif": "image/gif"}
#: The most members a chat group may have: the whole company.
MAX_GROUP = 60
#: The most minutes one jump_time may skip: a day.
MAX_JUMP = 24 * 60
#: The tools, in the order the agent is shown them, and those that only read.
TOOLS = ("list_users", "send_message", "create_chat_group", "send_group_message", "list_chat_groups", "open_folder",
         "download_file", "read_image", "execute_command", "get_available_rooms", "book_meeting", "cancel_meeting",
         "attend_meeting", "jump_time", "calculator", "get_historical_load_times", "get_system_health",
         "list_monitored_services", "get_performance_summary", "get_error_logs", "reboot_server", "done")
READ_ONLY = {"list_users", "list_chat_groups", "open_folder", "read_image", "get_available_rooms", "calculator",
             "get_historical_load_times", "get_system_health", "list_monitored_services", "get_performance_summary",
             "get_error_logs"}


class Responder(Protocol):
    def reply(self, colleague: Employee, rules: list[str], message: str, history: list[Message]) -> str: ...


class RuleResponder:
    """Offline colleagues: each answers with the reply rules the day gave them (the manual to read, the folder to
    open, the code to relay), or says it cannot help."""

    def reply(self, colleague: Employee, rules: list[str], message: str, history: list[Message]) -> str:
        if rules:
            return " ".join(rules)
        return (f"Hi, I'm {colleague.name}, {colleague.position} in {colleague.department}. I don't think I can help "
                "with that; for general questions see CloudDisk:manuals_for_intern.md.")


class TraineeDay(Environment):
    """One day of Trainee-Bench: ``day`` generated, its shell commands run by ``provider``."""

    def __init__(self, day: Day, provider: Provider, responder: Responder | None = None) -> None:
        self.day, self.provider = day, provider
        self.responder = responder or RuleResponder()
        self.colleagues = {employee.name: employee for employee in day.company.employees}
        self.now = day.start
        self.messages: list[Message] = []
        #: Chat groups by id (from 1): their members, the agent first. Their messages are not direct chats, which
        #: are what the reference's checks read.
        self.groups: dict[int, tuple[str, ...]] = {}
        self.group_messages: list[tuple[int, Message]] = []
        self.finished = False
        # The reference's ten rooms are there even on a day whose tasks book none.
        self.calendar = Calendar(day.rooms or dict.fromkeys(ROOMS, len(day.company.employees) + 1), day.meetings)
        drawn = random.Random()
        drawn.setstate(day.rng.getstate())
        self.monitor = website.Monitor.of(drawn, day.start)
        self._specs = [spec_of(getattr(type(self), name), name, writes=name not in READ_ONLY) for name in TOOLS]

    def tools(self) -> list[ToolSpec]:
        return self._specs

    def _call(self, name: str, arguments: JSONObject) -> Any:
        if self.finished:
            raise ToolError("the day is over: you called done")
        try:
            result = getattr(self, name)(**arguments)
        finally:
            self._advance(timedelta(minutes=MINUTES.get(name, 1)))
        return {**result, "now": _clock(self.now)}

    def _advance(self, span: timedelta) -> None:
        try:
            self.now += span
        except OverflowError:  # a meeting booked in the year 9999 and attended
            raise ToolError("the clock cannot run past the year 9999") from None

    def outcome(self) -> Outcome:
        """What the families score."""
        return Outcome(self.day.workspace, list(self.messages), attended=list(self.calendar.attended),
                       booked=self.calendar.booked())

    # -- the tools ---------------------------------------------------------------------------------------------

    def list_users(self) -> JSONObject:
        """Everyone you can message: name, department and position."""
        return {"users": [{"name": e.name, "department": e.department, "position": e.position}
                          for e in self.day.company.employees]}

    def send_message(self, to: str, text: str) -> JSONObject:
        """Send a chat message to a colleague and get their reply.

        Args:
            to: The colleague's full name, as list_users gives it.
            text: Your message.
        """
        colleague = self.colleagues.get(to)
        if colleague is None:
            raise ToolError(f"nobody is called {to!r}: see list_users")
        history = [m for m in self.messages if to in (m.sender, m.recipient)]
        self.messages.append(Message(AGENT, to, text, self.now))
        answer = self.responder.reply(colleague, self.day.company.rules.get(to, []), text, history)
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
        self.group_messages.append((group_id, Message(AGENT, f"group {group_id}", text, self.now)))
        replies = []
        for name in self.groups[group_id]:
            history = [said for number, said in self.group_messages if number == group_id][:-1]
            answer = self.responder.reply(self.colleagues[name], self.day.company.rules.get(name, []),
                                          f"(in group chat {group_id}) {text}", history)
            self.group_messages.append((group_id, Message(name, f"group {group_id}", answer, self.now)))
            replies.append({"from": name, "reply": answer})
        return {"group_id": group_id, "replies": replies}

    def list_chat_groups(self) -> JSONObject:
        """Your chat groups and their members."""
        return {"groups": [{"group_id": number, "members": [AGENT, *names]} for number, names in self.groups.items()]}

    def open_folder(self, folder_path: str) -> JSONObject:
        """List a folder of the company's cloud disk (folders end with "/").

        Args:
            folder_path: The folder, relative to the cloud disk's root: "./" for the root, "financial/" for one.
        """
        folder = _inside(self.day.cloud_disk, folder_path)
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
        source = _inside(self.day.cloud_disk, file_path)
        if not source.is_file():
            raise ToolError(f"no file {file_path!r} on the cloud disk")
        target = _inside(self.day.workspace, target_path)
        if target.is_dir() or target_path.rstrip().endswith("/"):  # a folder, made if new, as the reference does
            target = _inside(self.day.workspace, str(target.relative_to(self.day.workspace.resolve()) / source.name))
        # The quota its commands meet, met here too: a thousand downloads must not fill the host's disk.
        quota = COMMAND_LIMITS.workspace_bytes
        try:
            full = usage(self.day.workspace) + cost(source.stat()) > quota
        except AgentOutputError as exc:
            raise ToolError(f"your workspace cannot take the file: {exc}") from None
        if full:
            raise ToolError(f"your workspace cannot take the file: it would be past its quota of {quota >> 20} MB")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target, follow_symlinks=False)
        return {"downloaded": file_path, "to": str(target.relative_to(self.day.workspace.resolve()))}

    def read_image(self, file_path: str) -> JSONObject:
        """Look at an image file (PNG, JPEG, WebP or GIF): in your workspace, else on the cloud disk.

        Args:
            file_path: The image, relative to your workspace or to the cloud disk's root (such as
                "ads_strategy/target_user_density_youth.png").
        """
        found = [path for path in (_inside(self.day.workspace, file_path), _inside(self.day.cloud_disk, file_path))
                 if path.is_file()]
        if not found:
            raise ToolError(f"no file {file_path!r:.200} in your workspace or on the cloud disk")
        media_type = IMAGE_TYPES.get(found[0].suffix.lower())
        if media_type is None:
            raise ToolError(f"{file_path!r:.200} is not an image file ({', '.join(IMAGE_TYPES)})")
        try:  # the agent's own file may be anything: a link, a FIFO, a huge file
            data = b"".join(read_chunks(found[0], limit=MAX_IMAGE_BYTES))
        except ConfigError:
            raise ToolError(f"{file_path!r:.200} cannot be shown: not a regular file, or over {MAX_IMAGE_BYTES:,} "
                            "bytes") from None
        # An agent that takes no images reads instead what the family that drew it says it shows.
        text = self.day.image_text.get(hashlib.sha256(data).hexdigest(),
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
        result = run_command(self.provider, self.day.workspace, command, COMMAND_SECONDS)
        return {"exit_code": result.exit_code, "output": result.output,
                **({"left_out_bytes": result.left_out} if result.left_out else {}),
                **({"timed_out": True} if result.exit_code is None else {}),
                **({"workspace_not_kept": f"{result.not_kept} (the workspace's quota is "
                                          f"{COMMAND_LIMITS.workspace_bytes >> 20} MB, {MAX_ENTRIES:,} files and "
                                          f"folders, {MAX_DEPTH} levels)"} if result.not_kept else {})}

    # The calendar acts for the agent: the reference's applicant and agent_name arguments are left out, since the
    # agent is always the intern, and any other name there only filed its booking or its join under someone else.

    def get_available_rooms(self, start: str, end: str) -> JSONObject:
        """The meeting rooms free for the whole of a time slot (rooms are booked between 9:00 and 17:00).

        Args:
            start: When the slot starts, as an ISO date and time: 2025-10-01T10:00:00.
            end: When it ends, the same way: 2025-10-01T10:30:00.
        """
        return {"available": self.calendar.available(moment("start", start), moment("end", end))}

    def book_meeting(self, attendees: list[str], room_name: str, start: str, end: str) -> JSONObject:
        """Book a meeting room and invite colleagues. It fails when the room is taken, the slot is outside 9:00 to
        17:00, or you or an invitee are in another meeting then (each one's meetings are listed).

        Args:
            attendees: The invitees' full names, as list_users gives them (you are in the meeting anyway).
            room_name: The room, such as Room_01.
            start: When the meeting starts, as an ISO date and time: 2025-10-01T10:00:00.
            end: When it ends, the same way: 2025-10-01T11:00:00.
        """
        meeting = self.calendar.book(attendees, room_name, moment("start", start), moment("end", end))
        return {"booked": meeting.title, "room": meeting.room, "start": meeting.start.isoformat(),
                "end": end_of(meeting).isoformat(), "attendees": list(meeting.attendees)}

    def cancel_meeting(self, room_name: str, start: str, end: str) -> JSONObject:
        """Cancel a meeting you booked (only your own bookings can be cancelled).

        Args:
            room_name: Its room, such as Room_01.
            start: When it starts (not the time now), as an ISO date and time: 2025-10-01T10:00:00.
            end: When it ends, the same way: 2025-10-01T11:00:00.
        """
        meeting = self.calendar.cancel(room_name, moment("start", start), moment("end", end))
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
        meeting = self.calendar.attend(room_name, moment("start", start), moment("end", end), joined)
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

    def done(self) -> JSONObject:
        """End your working day: call it once every task is finished."""
        self.finished = True
        return {"done": True}


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
