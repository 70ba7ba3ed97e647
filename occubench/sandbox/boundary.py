"""What the harness accepts from a sandbox worker: every reply checked, as data, against what was asked.

A worker runs code we did not write, and once past the allow-list that code can make the worker answer anything.
So no reply is used as it comes: each goes through :class:`Boundary` (for a world folder's worker) or
:func:`probe_problem` (for synthesis's), which hold the one check of each kind of reply:

- its shape, from this module's JSON schemas: every field of its type, none missing, none more;
- names (of the world, its tools, tasks and tables) plain identifiers, ``[A-Za-z_][A-Za-z0-9_]*`` and at most 64
  characters: never a path, never markup;
- texts and lists capped, nesting at most :data:`~occubench.util.jsonsafe.MAX_DEPTH` deep (the protocol refuses
  NaN and Infinity);
- tool schemas JSON Schema the harness can check arguments against (:func:`~occubench.core.tools.schema_problem`);
- what was asked: the world a folder holds is named as the folder, tool names and task ids are distinct, a probe
  speaks only of the rows and tasks it was given.

A reply that fails is refused with an error naming the world folder and where in the reply the fault is (of the
reply's own text, at most a plain name or a clipped quote of a bad tool schema): a :class:`ConfigError` while
loading, a :class:`WorldError` during an episode.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError

from occubench.core.task import CATEGORY_ABBREVIATIONS
from occubench.core.tools import clip, schema_problem
from occubench.errors import ConfigError, WorldError
from occubench.util.jsonsafe import MAX_DEPTH

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
#: Characters of a short text (a scenario, a column, a check's name) and of a long one (a description, a message).
SHORT, LONG = 1_000, 100_000
#: The longest string anywhere in a reply (a row's value, an observation's): what a tool result is cut to, and more.
MAX_STRING = 2_000_000
MAX_TOOLS, MAX_TASKS, MAX_CALLS, MAX_TABLES, MAX_COLUMNS, MAX_ROWS = 256, 1_000, 1_000, 256, 1_000, 1_000_000
MAX_CHECKS, MAX_PROBLEMS = 1_000, 10_000


def _object(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "object", "required": list(required), "properties": {**required, **(optional or {})},
            "additionalProperties": False}


def _text(limit: int) -> dict[str, Any]:
    return {"type": "string", "maxLength": limit}


def _list(items: dict[str, Any], most: int) -> dict[str, Any]:
    return {"type": "array", "items": items, "maxItems": most}


def _map(values: dict[str, Any], most: int, keys: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "object", "propertyNames": keys or _NAME, "additionalProperties": values, "maxProperties": most}


_NAME = {"type": "string", "format": "name"}
_COUNT = {"type": "integer", "minimum": 0}
_SCALAR = {"type": ["string", "number", "boolean", "null"], "maxLength": MAX_STRING}
_ROW = _map(_SCALAR, MAX_COLUMNS, _text(SHORT))
_ROWS = _list(_ROW, MAX_ROWS)
_DIFF = _map(_object({"inserted": _ROWS, "deleted": _ROWS, "updated": _list(_object({
    "key": _list(_SCALAR, MAX_COLUMNS),
    "changes": _map({**_list(_SCALAR, 2), "minItems": 2}, MAX_COLUMNS, _text(SHORT))}), MAX_ROWS)}), MAX_TABLES)
_TOOL = _object({"name": _NAME, "description": _text(LONG), "parameters": {"type": "object"},
                 "writes": {"type": "boolean"}})
_CALLS = _list(_object({"tool": _NAME, "arguments": {"type": "object"}}), MAX_CALLS)
_PROBLEMS = _list(_text(LONG), MAX_PROBLEMS)
#: A database as data (:func:`occubench.core.state.snapshot`).
_STATE = _map(_object({"columns": _map({"type": ["string", "null"], "maxLength": SHORT}, MAX_COLUMNS, _text(SHORT)),
                       "key": _list(_text(SHORT), MAX_COLUMNS), "rows": _ROWS}), MAX_TABLES)

#: Each kind of reply, by the request it answers.
SCHEMAS: dict[str, dict[str, Any]] = {
    "load": _object({
        "name": _NAME, "scenario": _text(SHORT), "category": {"enum": list(CATEGORY_ABBREVIATIONS)},
        "domain": _text(SHORT), "description": _text(LONG), "main_tables": _list(_NAME, MAX_TABLES),
        "tools": _list(_TOOL, MAX_TOOLS),
        "tasks": _list(_object({
            "id": _NAME, "instruction": _text(LONG), "difficulty": {"type": "integer", "minimum": 1, "maximum": 100},
            "rubric": _text(LONG), "reference": _CALLS, "answer": _text(LONG), "wrong": _CALLS,
            "wrong_answer": _text(LONG)}), MAX_TASKS),
        "state": _STATE}),
    "open": _COUNT,
    "call": {"type": "object"},
    "verify": _object({"checks": _list(_object({"name": _text(SHORT), "passed": {"type": "boolean"},
                                                "message": _text(LONG)}), MAX_CHECKS), "diff": _DIFF}),
    "diff": _DIFF,
    "sizes": _map(_COUNT, MAX_TABLES),
    # an AWM scenario's worker (occubench.awm.service): its tools and the problems of its database's build; what a
    # task's verifier returned
    "awm_load": _object({"tools": _list(_TOOL, MAX_TOOLS), "problems": _PROBLEMS}),
    "awm_verify": {"type": "object"},
    "awm_state": _STATE,
    "awm_check": _list(_object({"mode": {"enum": ["pure", "code_augmented"]}, "task": _COUNT,
                                "problem": _text(SHORT)}), MAX_TASKS),
    # synthesis's probes (occubench.synth.executable.probe), by the kind of job
    "schema": _object({"problems": _PROBLEMS}),
    "seed": _object({"problems": _PROBLEMS, "failed": _list(_COUNT, MAX_ROWS)}),
    "tools": _object({"problems": _PROBLEMS}, {"specs": _list(_TOOL, MAX_TOOLS)}),
    "task": _object({"problems": _PROBLEMS}),
    "validate": _object({"world": _PROBLEMS, "tasks": _map(_PROBLEMS, MAX_TASKS)}),
}

_FORMATS = jsonschema.FormatChecker(formats=())
_FORMATS.checks("name")(lambda value: not isinstance(value, str) or NAME.fullmatch(value) is not None)
# JSON has one kind of number: 1.0 and True are no row count.
_TYPES = jsonschema.Draft7Validator.TYPE_CHECKER.redefine(
    "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool))
_Validator = jsonschema.validators.extend(jsonschema.Draft7Validator, type_checker=_TYPES)
_VALIDATORS = {kind: _Validator(schema, format_checker=_FORMATS) for kind, schema in SCHEMAS.items()}


def problem(kind: str, reply: object) -> str | None:
    """Why ``reply`` is not a reply of ``kind`` (a key of :data:`SCHEMAS`), or None: its shape, sizes, names and
    tool schemas. What was asked is for the caller to compare."""
    if (deep := _unbounded(reply, 1)) is not None:
        return deep
    error = next(iter(_VALIDATORS[kind].iter_errors(reply)), None)
    if error is not None:
        return f"{_where(error.absolute_path)}: {_reason(error)}"
    if kind == "load":
        assert isinstance(reply, dict)
        return _tools_problem(reply["tools"]) or _repeated("tasks", [task["id"] for task in reply["tasks"]])
    if kind == "tools":
        assert isinstance(reply, dict)
        return _tools_problem(reply.get("specs", []))
    if kind == "awm_load":
        assert isinstance(reply, dict)
        return _tools_problem(reply["tools"])
    return None


def _tools_problem(tools: list[dict[str, Any]]) -> str | None:
    for number, tool in enumerate(tools):
        if (bad := schema_problem(tool["parameters"])) is not None:
            return f"tools[{number}].parameters: {bad}"
    return _repeated("tools", [tool["name"] for tool in tools])


def _repeated(what: str, names: list[str]) -> str | None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return f"{what}: {name} is given twice"
        seen.add(name)
    return None


def _unbounded(value: object, depth: int) -> str | None:
    """Where ``value`` nests deeper than :data:`MAX_DEPTH` or holds a string longer than :data:`MAX_STRING`."""
    if isinstance(value, str):
        return None if len(value) <= MAX_STRING else f"a string of {len(value):,} characters"
    items: Iterable[object]
    if isinstance(value, dict):
        items = [*value.keys(), *value.values()]
    elif isinstance(value, list):
        items = value
    else:
        return None
    if depth > MAX_DEPTH:
        return f"nested deeper than {MAX_DEPTH} levels"
    return next((found for item in items if (found := _unbounded(item, depth + 1)) is not None), None)


def _where(path: Iterable[str | int]) -> str:
    # A key is shown only when it is a plain name: what else a reply holds is never printed.
    steps = "".join(f"[{step}]" if isinstance(step, int) else f".{step}" if NAME.fullmatch(step) else "[a key]"
                    for step in path)
    return steps.lstrip(".") or "the reply"


def _reason(error: ValidationError) -> str:
    value = error.validator_value
    reasons = {
        "type": f"not of type {value}",
        "format": "not a plain name (letters, digits and _, at most 64 characters, not starting with a digit)",
        "propertyNames": "a key that is not a plain name (letters, digits and _, at most 64 characters)",
        "maxLength": f"longer than {value:,} characters" if isinstance(value, int) else "",
        "maxItems": f"more than {value:,} items" if isinstance(value, int) else "",
        "maxProperties": f"more than {value:,} entries" if isinstance(value, int) else "",
        "minItems": f"fewer than {value} items",
        "minimum": f"less than {value}",
        "maximum": f"more than {value}",
        "enum": "not one of the allowed values",
        "required": error.message,  # names a field of the protocol
        "additionalProperties": "a field the protocol does not have",
    }
    return reasons.get(str(error.validator), f"fails {error.validator}")


def path_name(name: str) -> str:
    """``name`` as the harness names a file or folder after a world (a twin's config, a synthesized world's folder):
    only a plain name is one, never a path; anything else is a :class:`ConfigError`."""
    if NAME.fullmatch(name) is None:
        raise ConfigError(f"{clip(repr(name), 100)} is not a plain name (letters, digits and _, at most 64 "
                          "characters): the harness names no file after it")
    return name


class Boundary:
    """The checks of the replies of ``folder``'s workers (the folder named as the user names it)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def world(self, reply: object) -> dict[str, Any]:
        """The world's description (:func:`~occubench.executable.isolated.describe`): a :class:`ConfigError`
        unless well formed and named as its folder."""
        if (found := problem("load", reply)) is not None:
            raise ConfigError(f"{self.folder}: the worker's description of the world is refused: {found}")
        assert isinstance(reply, dict)
        if reply["name"] != self.folder.name:
            raise ConfigError(f"{self.folder}: the worker says the world is named {reply['name']}, not "
                              f"{self.folder.name} as its folder: they must match")
        return reply

    def reply(self, kind: str, reply: object, what: str) -> Any:
        """A reply of ``kind`` (``open``, ``call``, ``verify``, ``diff``, ``sizes``) to a request about ``what``
        during an episode; a :class:`WorldError` unless well formed."""
        if (found := problem(kind, reply)) is not None:
            raise WorldError(f"{self.folder.name}: {what}: the worker's reply is refused: {found}")
        return reply


def probe_problem(job: dict[str, Any], reply: object, asked: Iterable[str] = ()) -> str | None:
    """Why the reply of a synthesis probe to ``job`` is not one, or None: its shape, and that it names only the
    rows it was given (``seed``) or the tasks ``asked`` (``validate``)."""
    kind = str(job["kind"])
    if (found := problem(kind, reply)) is not None:
        return found
    assert isinstance(reply, dict)
    if kind == "seed" and any(index >= len(job["rows"]) for index in reply["failed"]):
        return "failed: a row that was not given"
    if kind == "validate" and not set(reply["tasks"]) <= set(asked):
        return "tasks: a task that was not asked about"
    return None
