"""Composite days from a seed: tasks of distinct families on one timeline, deadlines set from a simulated
reference schedule (binding, yet met by the reference), one follow-up task gated on another, written to disk
byte for byte the same for the same seed."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

from occubench.errors import ConfigError
from occubench.util.jsonl import read_json
from occubench.util.untrusted import folder_files
from occubench.workplace.model import Day, Meeting, clock, minutes
from occubench.workplace.schedule import reference_schedule
from occubench.workplace.templates import FAMILIES
from occubench.workplace.templates.base import ROOMS, Names
from occubench.workplace.validate import validate_day

START, END = "09:00", "18:00"
#: Draws of a day before giving up: tasks that book rooms at fixed times on one calendar can clash.
ATTEMPTS = 200


def day_id(seed: int, index: int, phase: int = 1) -> str:
    return f"s{seed}-d{index:03d}" + (f"-day{phase}" if phase > 1 else "")


def generate_day(seed: int, index: int, phase: int = 1) -> Day:
    """Day ``index`` of the seed. Phase 2 keeps phase 1's families and their order, with new parameters.

    A draw whose reference schedule would not meet every checkpoint (a fixed-time booking that the queue reaches
    too late, say) is drawn again, deterministically, so every generated day is solvable.
    """
    plan = random.Random(f"workplace:{seed}:{index}:plan")
    families = plan.sample(sorted(FAMILIES), plan.randint(2, min(6, len(FAMILIES))))
    if "meeting_followup" in families and len(families) == 6:  # its follow-up task would make a seventh task
        families.remove(next(f for f in reversed(families) if f != "meeting_followup"))
    for attempt in range(ATTEMPTS):
        day = _draw(seed, index, phase, families, attempt)
        if validate_day(day).ok:
            return day
    raise RuntimeError(f"no solvable draw for day {index} of seed {seed}: families {families}")


def _draw(seed: int, index: int, phase: int, families: list[str], attempt: int) -> Day:
    rng = random.Random(f"workplace:{seed}:{index}:phase{phase}" + (f":{attempt}" if attempt else ""))
    names = Names(rng)
    pieces = [FAMILIES[name].build(rng, names, f"t{number}") for number, name in enumerate(families, start=1)]
    tasks = [task for piece in pieces for task in piece.tasks]
    starters = [task for task in tasks if task.appears == "start"]
    # A dependency: the last starter waits until the first one's work is delivered; the first that attends no
    # meeting, whose work is delivered when its reference steps are done, as the schedule has it.
    gate = next((t for t in starters if all(s["tool"] != "attend_meeting" for s in t.reference)), None)
    if len(starters) >= 3 and gate is not None and gate is not starters[-1]:
        starters[-1].appears = f"task:{gate.id}"
    day = Day(day_id(seed, index, phase), seed, START, END, tasks,
              colleagues=[c for piece in pieces for c in piece.colleagues],
              groups={k: v for piece in pieces for k, v in piece.groups.items()},
              drive={k: v for piece in pieces for k, v in piece.drive.items()}, rooms=dict(ROOMS),
              meetings=[m for piece in pieces for m in piece.meetings],
              busy=[b for piece in pieces for b in piece.busy],
              images={k: v for piece in pieces for k, v in piece.images.items()})
    _set_deadlines(day, rng)
    return day


def _set_deadlines(day: Day, rng: random.Random) -> None:
    _, done = reference_schedule(day)
    for task in day.tasks:
        attends = [s["arguments"]["end"] for s in task.reference if s["tool"] == "attend_meeting"]
        if task.deadline:  # its family's own
            deadline = minutes(task.deadline)
        elif attends:
            deadline = minutes(attends[0])
        else:  # some slack, rounded up to a quarter hour: binding for an agent that dawdles, met by the reference
            deadline = min(minutes(day.end), 15 * math.ceil((done[task.id] + rng.choice((20, 30, 45))) / 15))
        task.deadline = clock(deadline)
        task.objective = task.objective.replace("{deadline}", task.deadline)
    for rank, task in enumerate(sorted(day.tasks, key=lambda t: minutes(t.deadline))):
        task.priority = "high" if rank < len(day.tasks) / 3 else "normal" if rank < 2 * len(day.tasks) / 3 else "low"


def generate_days(seed: int, count: int, phase: int = 1) -> list[Day]:
    return [generate_day(seed, index, phase) for index in range(1, count + 1)]


def write_days(days: list[Day], out: Path) -> list[Path]:
    """One JSON file per day; the bytes depend only on the days."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for day in days:
        path = out / f"{day.id}.json"
        path.write_text(json.dumps(day.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def read_days(folder: Path) -> list[Day]:
    """The days in ``folder``'s JSON files, by file name. A file that is not a day raises :class:`ConfigError`
    naming it and what is wrong: where the JSON breaks, or which key is missing or wrongly typed."""
    if not folder.is_dir():
        raise ConfigError(f"{folder}: {'not a directory' if folder.exists() else 'no such directory'}")
    days: list[Day] = []
    files: dict[str, Path] = {}
    for name, path in folder_files(folder).items():  # no links, regular files within limits: any folder's rules
        if "/" in name or not name.endswith(".json"):
            continue
        day = _read_day(path)
        if day.id in files:  # results are stored by day id: two days under one id would be one
            raise ConfigError(f"{path}: day id {day.id!r} is taken by {files[day.id]}")
        files[day.id] = path
        days.append(day)
    return days


def _read_day(path: Path) -> Day:
    data = read_json(path, "day file")
    try:
        day = Day.from_json(data)
    except ValueError as exc:  # not the shape of a day
        raise ConfigError(f"{path}: {exc}") from None
    if not any("category" in task for task in data["tasks"]):
        # Written before tasks had categories, and before triggers matched whole words, when "cost cent" asked
        # for cost centres: give each task its family's category, and let each trigger match the start of a word.
        for task in (task for task in day.tasks if task.family in FAMILIES):
            task.category = FAMILIES[task.family].category
        for clue in (clue for colleague in day.colleagues for clue in colleague.clues):
            clue.trigger = [[word + "*" for word in group] for group in clue.trigger]
    meetings = {m.id: m for m in day.meetings}
    for task in day.tasks:  # reference calls written before the day engine, in its tools' names
        task.reference = [_renamed(step["tool"], step["arguments"], meetings) for step in task.reference]
    return day


#: The tools of our days before the day engine → the engine's, and how each argument is renamed.
_RENAMED = {"drive_read": ("read_file", {"path": "file_path"}), "workspace_read": ("read_file", {"path": "file_path"}),
            "drive_list": ("open_folder", {"folder": "folder_path"}), "list_colleagues": ("list_users", {}),
            "workspace_write": ("write_file", {"path": "file_path"}), "calendar_list": ("list_meetings", {}),
            "calendar_free_rooms": ("get_available_rooms", {}), "finish_day": ("done", {}),
            "calendar_book": ("book_meeting", {"room": "room_name"})}


def _renamed(tool: str, arguments: dict[str, Any], meetings: dict[str, Meeting]) -> dict[str, Any]:
    if tool == "calendar_attend" and arguments.get("meeting_id") in meetings:
        meeting = meetings[arguments["meeting_id"]]
        return {"tool": "attend_meeting", "arguments": {"room_name": meeting.room, "start": meeting.start,
                                                        "end": meeting.end}}
    if tool == "drive_copy":
        return {"tool": "download_file", "arguments": {"file_path": arguments.get("path"),
                                                       "target_path": arguments.get("path")}}
    name, names = _RENAMED.get(tool, (tool, {}))
    return {"tool": name, "arguments": {names.get(key, key): value for key, value in arguments.items()
                                        if not (tool == "calendar_book" and key == "title")}}
