"""Live hints: a person watching a run in ``occubench view`` sends the agent a hint of a chosen guidance tier, and it
reaches the agent with its next observation (``--live-hints``), as the Trainee-Bench paper's human guidance did.

The run folder is the only channel between the run and the viewer. A run with live hints keeps in ``RUN_DIR/live/``:

- ``token``: a random token (mode 0600) made when the run starts and kept when it resumes; the viewer accepts a
  hint only from a request that carries it (:func:`read_token`);
- ``steps/<episode>.jsonl``: each episode's tool calls as they happen, written by :class:`LiveHints`: a first line
  naming the episode (``episode``, ``task_id``, ``trial``, ``scenario``, ``started``), a line per call (``call``,
  ``at``, ``tool``, and excerpts of ``arguments`` and ``observation``, with the ``hints`` it delivered), and a last
  line (``end``) when the episode is over;
- ``hints/<episode>.jsonl``: the hints sent to the episode, one JSON object a line (``id``, ``at``, ``who``,
  ``tier``, ``text``; :func:`hint_record`), appended by the viewer and read by :class:`LiveHints`.

``<episode>`` is :func:`episode_key` of the task id and trial. The wrapper reads only what was appended since its
last look, a bounded amount at a time; a line that is not a valid hint (not JSON, too long, a field of the wrong
type, a tier outside 1–3) is skipped with a warning in the run's log, never raised, and a hint is delivered once.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import logging
import os
import re
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from occubench.core.environment import Environment, JSONObject, Wrapper
from occubench.core.results import LiveHint
from occubench.errors import ConfigError
from occubench.util.runfiles import open_file

if TYPE_CHECKING:
    from occubench.core.task import Task

log = logging.getLogger("occubench")

LIVE_DIR = "live"
TOKEN_FILE = "token"
STEPS_DIR = "steps"
HINTS_DIR = "hints"
#: The guidance tiers a hint may have (the workplace's --guidance tiers: 1 where to look, 2 also whom to ask and
#: what for, 3 the plan).
TIERS = (1, 2, 3)
#: Characters a hint's text and its sender's name may have.
MAX_TEXT = 4000
MAX_NAME = 100
#: Bytes of one line of a hints file (a hint of MAX_TEXT characters, each escaped, fits); a longer one is skipped.
MAX_LINE = 8 * MAX_TEXT + 1024
#: Bytes read from a hints file per tool call; the rest waits for the next call.
MAX_READ = 4 * MAX_LINE
#: Hints delivered in one episode; later ones are left unread (a flood would fill the agent's context).
MAX_HINTS = 100
#: Characters of a call's arguments and observation its line of the steps file keeps.
EXCERPT = 2000
#: What the observation carrying hints holds them under.
HINT_KEY = "hint"

_TOKEN = re.compile(r"[A-Za-z0-9_-]{32,128}")
_KEY = re.compile(r"[A-Za-z0-9_-]{1,100}")


def now() -> str:
    """The time, as hints and steps record it: ISO 8601 in UTC, to the second."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def episode_key(task_id: int | str, trial: int) -> str:
    """The name of an episode's files: letters, digits, ``-`` and ``_`` only (never a path, never hidden), unique
    per (task id, trial) even where two ids read alike once cleaned (a digest of the id ends it)."""
    text = str(task_id)
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", text)[:60].strip("_") or "task"
    digest = hashlib.sha256(f"{type(task_id).__name__}:{text}".encode()).hexdigest()[:8]
    return f"{slug}-{trial}-{digest}"


def is_episode_key(name: str) -> bool:
    return _KEY.fullmatch(name) is not None


def create_token(live: Path) -> str:
    """The run's token in ``live/token``, made (mode 0600) when there is none; ``live`` and its folders are made
    too (mode 0700). A resumed run keeps its token, so the viewer's URL stays good."""
    for folder in (live, live / STEPS_DIR, live / HINTS_DIR):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if (token := read_token(live)) is not None:
        return token
    token = secrets.token_urlsafe(32)
    path = live / TOKEN_FILE
    try:
        path.unlink()  # an empty or garbled token file: a new one
    except FileNotFoundError:
        pass
    fd = open_file(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        os.write(fd, token.encode() + b"\n")
    finally:
        os.close(fd)
    return token


def read_token(live: Path) -> str | None:
    """The run's token, or None when ``live`` has no readable, well-formed one."""
    try:
        fd = open_file(live / TOKEN_FILE, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError, ConfigError):
        return None
    try:
        text = os.read(fd, 256).decode("ascii", "replace").strip()
    except OSError:
        return None
    finally:
        os.close(fd)
    return text if _TOKEN.fullmatch(text) else None


def hint_problem(who: Any, tier: Any, text: Any) -> str | None:
    """What is wrong with a hint's sender, tier and text (the viewer answers it with 400); None when nothing."""
    if not isinstance(tier, int) or isinstance(tier, bool) or tier not in TIERS:
        return f"tier: one of {', '.join(map(str, TIERS))}"
    if not isinstance(text, str) or not text.strip():
        return "text: the hint's text is required"
    if len(text) > MAX_TEXT:
        return f"text: at most {MAX_TEXT:,} characters"
    if not isinstance(who, str) or not who.strip():
        return "name: your name is required"
    if len(who) > MAX_NAME or any(not c.isprintable() for c in who):
        return f"name: at most {MAX_NAME} printable characters"
    return None


def hint_record(who: str, tier: int, text: str) -> dict[str, Any]:
    """A hint's line in a hints file; ``who``, ``tier`` and ``text`` checked by :func:`hint_problem` first."""
    return {"id": secrets.token_hex(8), "at": now(), "who": who.strip(), "tier": tier, "text": text.strip()}


def _excerpt(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= EXCERPT else text[:EXCERPT] + "…"


def _with_hints(observation: JSONObject, hints: list[LiveHint]) -> JSONObject:
    """The observation the agent receives: its own, with the hints under ``hint``. A world's own ``hint`` key is
    kept: the observation then goes under ``result``."""
    sent = [{"tier": h.tier, "text": h.text} for h in hints]
    if HINT_KEY in observation:
        return {"result": observation, HINT_KEY: sent}
    return {**observation, HINT_KEY: sent}


class LiveHints(Wrapper):
    """Shows an episode's calls to the viewer as they happen and hands the agent the hints a person sends it: each
    observation carries, under ``hint``, the hints appended to the episode's hints file since the call before (see
    the module docstring). The hints delivered are kept in :attr:`delivered`, for the episode's result.

    The steps file is started anew with the episode (a retried episode's earlier attempt is replaced), and reading
    starts at the hints file's end: hints sent to an earlier attempt are not for this one. Trouble with either file
    (a full disk, a link planted there) is logged and never stops the episode."""

    def __init__(self, env: Environment, live: Path, task: Task, trial: int) -> None:
        super().__init__(env)
        self.key = episode_key(task.task_id, trial)
        self.steps_path = live / STEPS_DIR / f"{self.key}.jsonl"
        self.hints_path = live / HINTS_DIR / f"{self.key}.jsonl"
        #: The hints delivered, in order.
        self.delivered: list[LiveHint] = []
        self.calls = 0
        self._seen: set[str] = set()
        self._skipping = False  # inside a line too long to read, until its end
        self._warned: set[str] = set()
        stat = self._stat()
        self._inode: int | None = stat.st_ino if stat else None
        self._offset = stat.st_size if stat else 0
        self._steps: int | None = None
        try:
            self._steps = open_file(self.steps_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        except (OSError, ConfigError) as exc:
            self._warn("steps", f"live hints: cannot write {self.steps_path}: {exc}")
        self._write({"episode": self.key, "task_id": task.task_id, "trial": trial, "scenario": task.scenario,
                     "started": now()})

    async def acall(self, name: str, arguments: JSONObject) -> JSONObject:
        observation = await self.env.acall(name, arguments)
        self.calls += 1
        hints = self._pending()
        self._write({"call": self.calls, "at": now(), "tool": name, "arguments": _excerpt(arguments),
                     "observation": _excerpt(observation),
                     **({"hints": [{"who": h.who, "tier": h.tier, "text": h.text} for h in hints]} if hints else {})})
        return _with_hints(observation, hints) if hints else observation

    def close(self) -> None:
        try:
            self._write({"end": now(), "calls": self.calls, "hints": len(self.delivered)})
            if self._steps is not None:
                os.close(self._steps)
                self._steps = None
        finally:
            self.env.close()

    # -- the files ---------------------------------------------------------------------------------------------

    def _warn(self, kind: str, message: str) -> None:
        """``message`` in the run's log, once per kind of trouble and episode."""
        if kind not in self._warned:
            self._warned.add(kind)
            log.warning("%s", message)

    def _write(self, record: dict[str, Any]) -> None:
        if self._steps is None:
            return
        try:
            os.write(self._steps, (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode())
        except OSError as exc:
            self._warn("steps", f"live hints: cannot write {self.steps_path}: {exc}")

    def _stat(self) -> os.stat_result | None:
        try:
            return os.stat(self.hints_path, follow_symlinks=False)
        except OSError:
            return None

    def _pending(self) -> list[LiveHint]:
        """The valid hints appended since the last look, at most what :data:`MAX_HINTS` leaves."""
        if len(self.delivered) >= MAX_HINTS:
            return []
        try:
            fd = open_file(self.hints_path, os.O_RDONLY)
        except FileNotFoundError:
            return []
        except (OSError, ConfigError) as exc:
            self._warn("read", f"live hints: cannot read {self.hints_path}: {exc}")
            return []
        try:
            stat = os.fstat(fd)
            if stat.st_ino != self._inode or stat.st_size < self._offset:  # replaced or cut: read it anew
                self._inode, self._offset, self._skipping = stat.st_ino, 0, False
            data = os.pread(fd, MAX_READ, self._offset)
        except OSError as exc:
            self._warn("read", f"live hints: cannot read {self.hints_path}: {exc}")
            return []
        finally:
            os.close(fd)
        hints: list[LiveHint] = []
        consumed, full = 0, False
        while (end := data.find(b"\n", consumed)) >= 0:
            line, start, consumed = data[consumed:end], consumed, end + 1
            if self._skipping:  # the end of a line too long to read
                self._skipping = False
                continue
            if len(self.delivered) + len(hints) >= MAX_HINTS:
                consumed, full = start, True  # left unread: the episode has had its share
                self._warn("many", f"live hints: {self.key} got {MAX_HINTS} hints; later ones are not delivered")
                break
            if (hint := self._hint(line)) is not None:
                hints.append(hint)
        # A line too long to be a hint: skipped to its end.
        if not full and (self._skipping or len(data) - consumed > MAX_LINE):
            if not self._skipping:
                self._warn("line", f"live hints: a line of {self.hints_path} is over {MAX_LINE:,} bytes: skipped")
            self._skipping, consumed = True, len(data)
        self._offset += consumed
        self.delivered += hints
        return hints

    def _hint(self, line: bytes) -> LiveHint | None:
        """The hint on one line, or None (warned) when it is not a valid one or was delivered already."""
        if len(line) > MAX_LINE:
            self._warn("line", f"live hints: a line of {self.hints_path} is over {MAX_LINE:,} bytes: skipped")
            return None
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            self._warn("json", f"live hints: a line of {self.hints_path} is not JSON: skipped")
            return None
        if not isinstance(record, dict):
            self._warn("json", f"live hints: a line of {self.hints_path} is not a JSON object: skipped")
            return None
        who, tier, text, at, hint_id = (record.get(k) for k in ("who", "tier", "text", "at", "id"))
        problem = hint_problem(who, tier, text)
        if problem is None and not isinstance(at, str):
            problem = "at: the time it was sent is required"
        if problem is not None or not isinstance(who, str) or not isinstance(text, str) or not isinstance(at, str) \
                or not isinstance(tier, int):
            self._warn("hint", f"live hints: a hint in {self.hints_path} was skipped ({problem})")
            return None
        if isinstance(hint_id, str):
            if hint_id in self._seen:
                return None
            self._seen.add(hint_id)
        return LiveHint(who=who.strip(), at=at[:64], tier=tier, text=text.strip(), step=self.calls)
