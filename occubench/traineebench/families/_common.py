"""What several families share: their config arguments checked, the reference's own files read, what the agent left
in its workspace read as the untrusted data it is, and the reference's weighted checkpoint score."""

from __future__ import annotations

import codecs
import csv
import hashlib
import json
import math
import random
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from occubench.errors import AgentOutputError, ConfigError
from occubench.sandbox.workspace import walk
from occubench.traineebench.family import Company, Day
from occubench.util.untrusted import read_chunks, read_file

#: The largest workspace file a check reads; a larger one counts as unreadable (an agent may write anything).
MAX_OUTPUT_BYTES = 16 << 20
#: The most values a check parses of an answer file, counted before parsing by what separates them (JSON's ``[``,
#: ``{`` and ``,``; a list's line breaks): parsed, 16 MB of `{},` were 440 MB of dictionaries, and an answer holds a
#: few dozen values.
MAX_VALUES = 100_000
JSON_SEPARATORS, LINE_SEPARATORS = b"[{,", b"\n\r"
#: The longest line and the most cells of a row a check reads of a CSV file (a data file's rows have a dozen).
MAX_LINE, MAX_CELLS = 1 << 16, 1_000
#: Marks an argument without a default.
REQUIRED = object()


def brief(value: object, limit: int = 80) -> str:
    """``value`` as a note or a message shows it: an agent's answer can be megabytes long."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}…"


def known_arguments(family: str, arguments: Mapping[str, Any], known: Collection[str]) -> None:
    """A :class:`ConfigError` naming the first argument the family does not take."""
    for name in arguments:
        if name not in known:
            raise ConfigError(f"{family}: unknown argument {name!r} (it takes {', '.join(sorted(known)) or 'none'})")


def bad_argument(family: str, name: str, expected: str, value: object) -> ConfigError:
    return ConfigError(f"{family}: argument {name!r} must be {expected}, not {brief(value)}")


def arguments(family: str, given: Any, spec: Mapping[str, tuple[type | tuple[type, ...], Any]],
              prefix: str = "") -> dict[str, Any]:
    """``given`` (a config's arguments, or a nested object of them named by ``prefix``) checked against ``spec``
    (name → its type and its default, or :data:`REQUIRED`), the defaults filled in; an unknown, missing or
    wrong-typed argument is a :class:`ConfigError` naming it. A bool is never taken for a number."""
    if not isinstance(given, Mapping):
        raise ConfigError(f"{family}: {prefix.rstrip('.') or 'arguments'} must be an object, not {brief(given)}")
    for name in given:
        if name not in spec:
            raise ConfigError(f"{family}: unknown argument {prefix}{name} (it takes {', '.join(spec) or 'none'})")
    checked = {}
    for name, (kind, default) in spec.items():
        if name not in given:
            if default is REQUIRED:
                raise ConfigError(f"{family}: argument {prefix}{name} is missing")
            checked[name] = default
            continue
        value = given[name]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            wanted = " or ".join(k.__name__ for k in kinds)
            raise ConfigError(f"{family}: argument {prefix}{name} must be {wanted}, not {brief(value)}")
        checked[name] = value
    return checked


def one_of(family: str, name: str, value: Any, choices: Any) -> None:
    """A :class:`ConfigError` naming the argument unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ConfigError(f"{family}: argument {name} must be one of {', '.join(map(str, choices))}, "
                          f"not {brief(value)}")


def drawn(rng: random.Random, candidates: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
    """One of each argument's candidate values, drawn by ``rng`` (as the reference's samplers draw flat arguments)."""
    return {name: rng.choice(values) for name, values in candidates.items()}


def at_least(family: str, name: str, value: int, least: int) -> None:
    if value < least:
        raise ConfigError(f"{family}: argument {name} must be at least {least}, not {value}")


def reference_bytes(day: Day, path: str) -> bytes:
    """A file of the reference's (``path`` inside its environments/traineebench/), read as :func:`read_file` reads."""
    return read_file(day.reference / path)


def reference_text(day: Day, path: str) -> str:
    try:
        return reference_bytes(day, path).decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{day.reference / path}: not UTF-8 text") from None


def place(target: Path, content: str | bytes) -> None:
    """Write ``content`` to ``target`` on the workspace or the cloud disk, its folders made."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        target.write_text(content, encoding="utf-8")
    else:
        target.write_bytes(content)


def place_image(day: Day, target: Path, png: bytes, text: str) -> None:
    """Write the image ``png`` to ``target``, with ``text`` (what it shows) for agents that take no images."""
    place(target, png)
    day.image_text[hashlib.sha256(png).hexdigest()] = text


def fill(template: str, values: Mapping[str, object]) -> str:
    """``template`` with each ``{name}`` of ``values`` replaced; any other brace is left as it is (a template is
    data, not a format string that could fail)."""
    return re.sub(r"\{(\w+)\}", lambda m: str(values[m[1]]) if m[1] in values else m[0], template)


def departments(company: Company) -> list[str]:
    """The company's departments in roster order, its executives left out (the reference never draws them)."""
    return [d for d in dict.fromkeys(e.department for e in company.employees) if d != "Executive"]


def deadline(day: Day) -> datetime:
    """The reference's deadline for every task: 20:00 on the day."""
    return day.start.replace(hour=20, minute=0, second=0, microsecond=0)


def find(workspace: Path, name: str) -> Path | None:
    """The first file named ``name`` in the workspace, top folder first, then depth first in name order (the
    reference finds an agent's output wherever it was saved), links to folders not followed. None when there is
    none, or when the walk meets folders past its limits first (:func:`walk`): the agent's failure, 0 for the check."""
    try:
        for folder, entries in walk(workspace):
            if any(entry.name == name and not entry.is_dir(follow_symlinks=False) for entry in entries):
                return folder / name
    except AgentOutputError:
        return None
    return None


def read(path: Path | None) -> bytes | None:
    """The bytes of the workspace file ``path``; None if absent, a link, not a regular file or over the size limit."""
    if path is None:
        return None
    try:
        return b"".join(read_chunks(path, MAX_OUTPUT_BYTES))
    except (ConfigError, OSError):
        return None


def read_answer(path: Path | None, separators: bytes) -> bytes | None:
    """The bytes of the answer file ``path`` (as :func:`read`); None also when more than :data:`MAX_VALUES` of
    ``separators`` are in it (a file of the agent's that would take the harness hundreds of megabytes parsed)."""
    data = read(path)
    return None if data is None or sum(data.count(mark) for mark in separators) > MAX_VALUES else data


def read_rows(path: Path, most: int) -> list[list[str]] | None:
    """The CSV rows of the workspace file ``path``, read as a stream; None when it cannot be read (as :func:`read`)
    or is not UTF-8 CSV. An :class:`AgentOutputError` as soon as it holds more than ``most`` rows, a line past
    :data:`MAX_LINE` or a row past :data:`MAX_CELLS`: 16 MB of newlines are a few rows read, not 16 million lists."""
    rows: list[list[str]] = []
    try:
        for row in csv.reader(_lines(path)):
            rows.append(row)
            if len(rows) > most or len(row) > MAX_CELLS:
                raise AgentOutputError(f"{path.name}: more than {most:,} rows or {MAX_CELLS:,} cells in a row")
    except (ConfigError, OSError, UnicodeDecodeError, csv.Error):  # a NUL byte, a field past the csv module's limit
        return None
    return rows


def _lines(path: Path) -> Iterator[str]:
    """The lines of a UTF-8 workspace file, each with its newline, as :class:`io.StringIO` splits them."""
    decoder, pending = codecs.getincrementaldecoder("utf-8")(), ""
    for chunk in read_chunks(path, MAX_OUTPUT_BYTES):
        *lines, pending = (pending + decoder.decode(chunk)).split("\n")
        for line in [*lines, pending]:
            if len(line) > MAX_LINE:
                raise AgentOutputError(f"{path.name}: a line longer than {MAX_LINE:,} characters")
        yield from (line + "\n" for line in lines)
    if pending := pending + decoder.decode(b"", final=True):
        yield pending


def read_text(path: Path | None) -> str | None:
    """The text of the workspace file ``path`` (as :func:`read`); None also when it is not UTF-8."""
    data = read(path)
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def read_json(path: Path | None) -> Any:
    """The JSON value of the workspace file ``path``; None when it cannot be read or parsed (the reference's
    evaluators treat such a file as one that says nothing; NaN and Infinity parse, as in Python)."""
    return parse_json(path)[1]


def parse_json(path: Path | None) -> tuple[bool, Any]:
    """(whether the workspace file ``path`` is JSON, its value): a literal null is JSON too. Not JSON when it
    cannot be read (:func:`read_answer`: more than :data:`MAX_VALUES` values too), decoded or parsed."""
    data = read_answer(path, JSON_SEPARATORS)
    try:
        return (False, None) if data is None else (True, json.loads(data.decode("utf-8")))
    except (ValueError, RecursionError):  # not UTF-8, not JSON, an integer too long to read, nesting too deep
        return False, None


def number(value: Any) -> float | None:
    """``value`` as a finite number, reading a numeric string as the reference's float() does; None for anything
    else, NaN and infinities included (in the reference's comparisons NaN passes every tolerance)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        result = float(value)
    except (ValueError, OverflowError):
        return None
    return result if math.isfinite(result) else None


def noted(passed: bool, note: str, notes: list[str]) -> bool:
    """``passed``, with ``note`` (what to do instead) added to ``notes`` when it is false."""
    if not passed:
        notes.append(note)
    return passed


def weighted_score(passed: int, total: int, basics: bool) -> float:
    """The reference's points for ``passed`` of ``total`` checkpoints: the first (``basics``: the manual downloaded
    and the output written) weighs 30% of the ``total`` full points, the others share the rest evenly."""
    points = 0.3 * total * basics + 0.7 * total / (total - 1) * (passed - basics)
    return round(points, 6)  # every checkpoint met is exactly the full points, not 4.000000000000001
