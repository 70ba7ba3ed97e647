"""What the live viewer (:mod:`occubench.report.live`) shows of a run with live hints (``--live-hints``), read from
its ``live/`` folder (:mod:`occubench.core.hints`): its episodes in progress, each with its latest calls and the
hints sent to it, and how a hint is added to an episode's hints file. Every file is opened without following a
link and read a bounded amount at a time; what is not JSON is left out."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

from occubench.core.hints import HINTS_DIR, LIVE_DIR, MAX_NAME, MAX_TEXT, STEPS_DIR, hint_record, is_episode_key
from occubench.errors import ConfigError
from occubench.util.lock import LOCK_FILE
from occubench.util.runfiles import open_file, read_file


def signature(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


#: Episodes in progress a run shows at most (the latest started), and the latest calls and hints of each.
LIVE_EPISODES = 100
LIVE_STEPS = 20
LIVE_SENT = 20
#: Bytes read from the end of an episode's steps or hints file (its first line is read apart).
_TAIL = 256 * 1024
#: Bytes of a hint request's body: a hint of MAX_TEXT characters and a name, each character escaped, fit.
MAX_BODY = 8 * (MAX_TEXT + MAX_NAME) + 1024


def live_files(live: Path) -> list[Path]:
    """The steps files of a live folder (the latest started first, at most LIVE_EPISODES), each followed by its
    hints file when there is one."""
    try:
        steps = [path for path in (live / STEPS_DIR).iterdir()
                 if path.suffix == ".jsonl" and is_episode_key(path.stem)]
    except OSError:
        return []
    steps = sorted(steps, key=lambda path: (signature(path) or (0, 0))[1], reverse=True)[:LIVE_EPISODES]
    hints = [live / HINTS_DIR / path.name for path in steps]
    return [file for pair in zip(steps, hints, strict=True) for file in pair if file.is_file() or file in steps]


def running(run_dir: Path) -> bool:
    """Whether a run holds the directory's lock now: its lock file names a process, and one by that number lives
    (when it is of this machine)."""
    try:
        holder = json.loads(read_file(run_dir / LOCK_FILE) or b"{}")
    except (ValueError, ConfigError):
        return False
    pid = holder.get("pid") if isinstance(holder, dict) else None
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    if holder.get("host") != socket.gethostname():
        return True  # another machine's: taken at its word
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def _lines(path: Path) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The first line of a JSON-lines file and the objects of its last _TAIL bytes (a line cut by the tail, or not
    JSON, left out)."""
    try:
        fd = open_file(path, os.O_RDONLY)
    except (FileNotFoundError, ConfigError):
        return None, []
    try:
        size = os.fstat(fd).st_size
        head = os.pread(fd, 64 * 1024, 0).partition(b"\n")[0]
        start = max(0, size - _TAIL)
        tail = os.pread(fd, _TAIL, start)
    except OSError:
        return None, []
    finally:
        os.close(fd)
    raw = tail.split(b"\n")
    if start:
        raw = raw[1:]  # cut by the tail
    records = []
    for line in raw:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            records.append(record)
    try:
        first = json.loads(head)
    except (ValueError, RecursionError):
        first = None
    return (first if isinstance(first, dict) else None), records


def _text(value: Any, limit: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text[:limit]


def episode(steps: Path, hints: Path) -> dict[str, Any] | None:
    """What the page shows of one episode in progress: its task, latest calls and the hints sent to it; None when
    it is over (or its file is not an episode's)."""
    header, records = _lines(steps)
    if header is None or header.get("episode") != steps.stem or any("end" in record for record in records):
        return None
    calls = [record for record in records if isinstance(record.get("call"), int)]
    _, sent = _lines(hints)
    return {
        "key": steps.stem, "task_id": _text(header.get("task_id"), 200), "trial": header.get("trial"),
        "scenario": _text(header.get("scenario", ""), 500), "started": _text(header.get("started", ""), 64),
        "calls": calls[-1]["call"] if calls else 0,
        "steps": [{"call": record["call"], "at": _text(record.get("at", ""), 64),
                   "tool": _text(record.get("tool", ""), 200), "arguments": _text(record.get("arguments", ""), 2000),
                   "observation": _text(record.get("observation", ""), 2000),
                   "hints": [{"who": _text(h.get("who"), MAX_NAME), "tier": h.get("tier"),
                              "text": _text(h.get("text"), MAX_TEXT)}
                             for h in record.get("hints") or [] if isinstance(h, dict)][:10]}
                  for record in calls[-LIVE_STEPS:]],
        "sent": [{"who": _text(h.get("who"), MAX_NAME), "tier": h.get("tier"), "at": _text(h.get("at", ""), 64),
                  "text": _text(h.get("text"), MAX_TEXT)} for h in sent[-LIVE_SENT:]],
    }


def episodes(run_dir: Path, files: list[Path]) -> list[dict[str, Any]]:
    """The episodes in progress among a live folder's ``files`` (:func:`live_files`): none unless the run is
    running (:func:`running`)."""
    if not running(run_dir):
        return []
    found = [episode(path, run_dir / LIVE_DIR / HINTS_DIR / path.name) for path in files
             if path.parent.name == STEPS_DIR]
    return [item for item in found if item is not None]


def append_hint(live: Path, key: str, who: str, tier: int, text: str) -> dict[str, Any]:
    """Append a hint (checked already by :func:`occubench.core.hints.hint_problem`) to episode ``key``'s hints file;
    the record written."""
    if not is_episode_key(key):
        raise ConfigError(f"not an episode: {key!r}")
    record = hint_record(who, tier, text)
    fd = open_file(live / HINTS_DIR / f"{key}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:  # one write of one line: the run never reads half a hint as a whole one
        os.write(fd, (json.dumps(record, ensure_ascii=False) + "\n").encode())
    finally:
        os.close(fd)
    return record
