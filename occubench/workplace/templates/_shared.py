"""Shapes that several templates repeat: the reference's tool calls, the usual kinds of checkpoint, a room to book
while the smallest that fits is taken, and the text of the files they put on the drive."""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from occubench.workplace.model import Checkpoint, clock, minutes
from occubench.workplace.templates.base import ROOMS, call, checkpoint


def read_file(path: str) -> dict[str, Any]:
    return call("read_file", file_path=path)


def write_file(path: str, content: str) -> dict[str, Any]:
    return call("write_file", file_path=path, content=content)


def send_message(to: str, text: str) -> dict[str, Any]:
    return call("send_message", to=to, text=text)


def book(room: str, start: str, end: str, seats: int, attendees: list[str]) -> list[dict[str, Any]]:
    """The reference's booking: look up the rooms free with enough seats, book one of them."""
    return [call("get_available_rooms", start=start, end=end, min_capacity=seats),
            call("book_meeting", room_name=room, start=start, end=end, attendees=attendees)]


def later(time: str, span: int) -> str:
    """The clock time ``span`` minutes after ``time``."""
    return clock(minutes(time) + span)


def fitting_rooms(seats: int) -> list[str]:
    """The rooms with at least ``seats`` seats, smallest first."""
    return [room for _, room in sorted((capacity, room) for room, capacity in ROOMS.items() if capacity >= seats)]


def free_room(seats: int, start: str, end: str, rng: random.Random | None = None) -> tuple[str, list[dict[str, str]]]:
    """A room for ``seats`` free from ``start`` to ``end``, and the bookings that keep the smallest room that fits
    busy then, so booking takes a look at the free rooms; with ``rng``, each room between the two but the largest
    is busy too, at a chance of 0.4."""
    fitting = fitting_rooms(seats)
    taken = [fitting[0], *(r for r in fitting[1:-1] if rng is not None and rng.random() < 0.4)]
    room = next(r for r in fitting if r not in taken)
    return room, [{"room": r, "start": start, "end": end} for r in taken]


def lines(rows: Iterable[object]) -> str:
    """A text of one line per row."""
    return "".join(f"{row}\n" for row in rows)


def csv(header: str, rows: Iterable[Iterable[object]]) -> str:
    """A CSV file's text: the header, then each row's values joined by commas (none of ours needs quoting)."""
    return lines([header, *(",".join(map(str, row)) for row in rows)])


def in_file(name: str, weight: int, feedback: str, path: str, values: list[str],
            absent: list[str] | None = None) -> Checkpoint:
    """Met when the agent's last write of ``path`` holds every value and none of ``absent``."""
    check: dict[str, Any] = {"kind": "file", "path": path, "values": values}
    if absent is not None:
        check["absent"] = absent
    return Checkpoint(name, weight, feedback, check)


def not_in_file(name: str, weight: int, feedback: str, path: str, absent: list[str]) -> Checkpoint:
    """Met when the agent's last write of ``path`` holds none of ``absent``: nothing listed wrongly."""
    return in_file(name, weight, feedback, path, [], absent)


def told(name: str, weight: int, feedback: str, to: str, values: list[str]) -> Checkpoint:
    """Met when a message of the agent's to ``to`` (a person or a group) holds every value."""
    return checkpoint(name, weight, feedback, kind="message", to=to, values=values)


def booked(name: str, weight: int, feedback: str, start: str, end: str, attendees: list[str],
           seats: int) -> Checkpoint:
    """Met when the agent booked a room with ``seats`` seats from ``start`` to ``end``, inviting ``attendees``."""
    return checkpoint(name, weight, feedback, kind="booking", start=start, end=end, attendees=attendees,
                      min_capacity=seats)
