"""An AWM-format set read as data: its JSON Lines files, each line keyed by scenario, gathered per scenario.

The published files do not always line up (a scenario with an application but no verifier, seed rows but no
application; a third party's cut of them lines up worse), and a line may be unreadable. Nothing of that raises: a
missing part is a defect of the scenario (:meth:`Scenario.defects`), an unreadable line a problem of the set
naming its file and line (:attr:`AwmSet.problems`). Code is kept as text: it is never compiled or run here. What
is read is hashed as it is read (:attr:`AwmSet.digest`): a run's identity holds the content it ran.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from occubench.errors import ConfigError
from occubench.util.jsonl import loads_line
from occubench.util.untrusted import read_chunks

#: The set's files, by the part they hold.
FILES = {
    "scenario": "gen_scenario.jsonl", "tasks": "gen_tasks.jsonl", "schema": "gen_db.jsonl",
    "seed": "gen_sample.jsonl", "spec": "gen_spec.jsonl", "app": "gen_envs.jsonl",
    "verifier": "gen_verifier.jsonl", "pure_verifier": "gen_verifier.pure_code.jsonl",
}
#: The largest file of a set: the published application file of 1,000 worlds is a few hundred MB.
MAX_SET_FILE_BYTES = 4 << 30
#: The longest scenario name taken (names become folder and tool-prefix names).
MAX_NAME = 128


@dataclass
class Scenario:
    """What a set holds of one scenario; None (or empty) where a part is missing."""

    name: str
    description: str | None = None
    tasks: list[str] = field(default_factory=list)
    schema: dict[str, Any] | None = None
    seed: dict[str, Any] | None = None
    spec: dict[str, Any] | None = None
    app: str | None = None
    #: Verification code by task index: the code-augmented one (``verify_task``) and the pure-code one.
    verifiers: dict[int, str] = field(default_factory=dict)
    pure_verifiers: dict[int, str] = field(default_factory=dict)

    @property
    def runnable(self) -> bool:
        """Whether it can be a world: an application, a schema to build its database from, and tasks."""
        return bool(self.app and self.schema and self.tasks)

    def defects(self) -> list[str]:
        """What is missing, in words a report shows: parts of the world, and tasks without a verifier."""
        missing = [what for what, present in (("application", self.app), ("schema", self.schema),
                                              ("seed rows", self.seed), ("tasks", self.tasks),
                                              ("API spec", self.spec)) if not present]
        found = [f"no {what}" for what in missing]
        unverified = [index for index in range(len(self.tasks))
                      if index not in self.verifiers and index not in self.pure_verifiers]
        if unverified and self.tasks:
            found.append("no verifier for task" + ("s " if len(unverified) > 1 else " ")
                         + ", ".join(map(str, unverified)))
        return found


@dataclass
class AwmSet:
    root: Path
    scenarios: dict[str, Scenario]
    #: Lines that could not be read or did not hold what their file holds, as "file:line: why".
    problems: list[str]
    #: The content digest of the files read (:func:`set_digest`).
    digest: str


def load_set(root: Path) -> AwmSet:
    """The set in the folder ``root``; a :class:`ConfigError` naming it when it holds none of the files."""
    if not root.is_dir():
        raise ConfigError(f"--data-dir: {root} is not a folder")
    present = {part: root / name for part, name in FILES.items() if (root / name).exists()}
    if not present:
        raise ConfigError(f"--data-dir: {root} holds no AWM-format file ({', '.join(FILES.values())})")
    scenarios: dict[str, Scenario] = {}
    problems: list[str] = []
    hashes: dict[str, str] = {}
    for part, path in present.items():
        hashed = hashlib.sha256()
        for number, record in _records(path, problems, hashed.update):
            where = f"{path.name}:{number}"
            name = record.get("name" if part == "scenario" else "scenario")
            if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME:
                problems.append(f"{where}: no scenario name (or one over {MAX_NAME} characters)")
                continue
            scenario = scenarios.setdefault(name, Scenario(name))
            if (problem := _take(scenario, part, record)) is not None:
                problems.append(f"{where}: {problem}")
        hashes[path.name] = hashed.hexdigest()
    return AwmSet(root, dict(sorted(scenarios.items())), problems, set_digest(hashes))


def set_digest(hashes: Mapping[str, str]) -> str:
    """A set's content digest from its files' sha256s by name: the sha256 of the listing ``sha256sum`` prints of
    them in name order, so that ``sha256sum gen_*.jsonl | sha256sum`` in the folder (C locale) gives it too."""
    listing = "".join(f"{hashes[name]}  {name}\n" for name in sorted(hashes))
    return hashlib.sha256(listing.encode()).hexdigest()


def _records(path: Path, problems: list[str], seen: Callable[[bytes], object]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each line of ``path`` that is a JSON object, with its number; the others are problems. Every byte read is
    given to ``seen`` (a hash's update)."""
    for number, line in enumerate(_lines(path, seen), start=1):
        if not line.strip():
            continue
        try:
            value = loads_line(line)
        except ValueError as exc:  # not JSON, not UTF-8, too long or too deep
            problems.append(f"{path.name}:{number}: unreadable ({str(exc)[:200]})")
            continue
        if isinstance(value, dict):
            yield number, value
        else:
            problems.append(f"{path.name}:{number}: a JSON {type(value).__name__}, not an object")


def _lines(path: Path, seen: Callable[[bytes], object]) -> Iterator[bytes]:
    """The lines of a file read under the untrusted-folder rules, in chunks: a line is held whole, a file never."""
    pending = b""
    for chunk in read_chunks(path, MAX_SET_FILE_BYTES):
        seen(chunk)
        *lines, pending = (pending + chunk).split(b"\n")
        yield from lines
    if pending:
        yield pending


def _take(scenario: Scenario, part: str, record: dict[str, Any]) -> str | None:
    """Put ``record``'s part into ``scenario``; what is wrong with it, if anything."""
    if part in ("verifier", "pure_verifier"):
        index, verification = record.get("task_idx"), record.get("verification")
        code = verification.get("code") if isinstance(verification, dict) else None
        if not isinstance(index, int) or isinstance(index, bool) or index < 0 or not isinstance(code, str):
            return "a verifier needs a task_idx (a whole number) and verification.code (text)"
        (scenario.verifiers if part == "verifier" else scenario.pure_verifiers)[index] = code
        return None
    key, kind, attribute = _FIELDS[part]
    value = record.get(key)
    texts = isinstance(value, list) and all(isinstance(item, str) for item in value)
    if not isinstance(value, kind) or (kind is list and not texts):
        return f"{key} is not {_KIND_WORDS[kind]}"
    setattr(scenario, attribute, value)
    return None


#: Where each part is in its file's record, what it must be, and the Scenario attribute it fills.
_FIELDS: dict[str, tuple[str, type, str]] = {
    "scenario": ("description", str, "description"), "tasks": ("tasks", list, "tasks"),
    "schema": ("db_schema", dict, "schema"), "seed": ("sample_data", dict, "seed"),
    "spec": ("api_spec", dict, "spec"), "app": ("full_code", str, "app"),
}
_KIND_WORDS: dict[type, str] = {str: "text", list: "a list of texts", dict: "an object"}
