"""The tool contract every world shares: how a tool is declared, how its arguments are checked, the one shape of a
failed call, and the time limit a call runs under.

A failed call is an ordinary observation, ``{"error": kind, "message": text}``, with one of five kinds:

- ``unknown_tool``: no tool has that name;
- ``invalid_arguments``: the arguments are not one JSON object matching the tool's parameters;
- ``tool_error``: the tool reported a domain failure (:class:`ToolError`: a record not found, a rule broken);
- ``tool_failed``: the tool's code raised something unexpected;
- ``timeout``: the call ran longer than its environment's time limit and was interrupted.

A tool that shows a picture returns an :class:`occubench.core.images.Image` (alone or inside its result): its bytes
and what it shows in words, which agents that take no images get instead.
"""

from __future__ import annotations

import ctypes
import functools
import heapq
import inspect
import itertools
import json
import math
import os
import re
import threading
import time
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, TypeVar

import jsonschema
import jsonschema.validators
import re2
from jsonschema.protocols import Validator
from referencing import Registry

from occubench.core.annotations import named_type
from occubench.llm.parsing import loads

JSONObject = dict[str, Any]
ErrorKind = Literal["unknown_tool", "invalid_arguments", "tool_error", "tool_failed", "timeout"]
T = TypeVar("T")

#: Default per-call time limit, in seconds, of worlds whose tools are code.
TOOL_TIME_LIMIT = 10.0
#: Messages longer than this are cut in the middle, so a megabyte argument echoed in an error does not flood the
#: agent's context while the end (what is wrong with it) stays.
_MESSAGE_LIMIT = 2000
#: The same for the description of one argument problem.
_PROBLEM_LIMIT = 300
#: At most this many argument problems are reported (and looked for) per call.
_MAX_PROBLEMS = 10


class ToolError(Exception):
    """Raised by a tool for a domain failure (record not found, rule broken); the agent sees its message."""


def tool_error(kind: ErrorKind, message: str) -> JSONObject:
    """The observation of a failed call."""
    return {"error": kind, "message": clip(message)}


def describe(exc: BaseException) -> str:
    """An exception's message, safely: formatting a hostile value (a huge int) can itself raise."""
    try:
        return str(exc)
    except Exception:  # noqa: BLE001 - the message is only informative
        return f"(a {type(exc).__name__} whose message cannot be shown)"


def clip(text: str, limit: int = _MESSAGE_LIMIT) -> str:
    """``text``, or its start and end with the length of the middle cut out when longer than ``limit``."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}...[{len(text) - 2 * half:,} characters cut]...{text[-half:]}"


# -- declaring tools ---------------------------------------------------------------------------------------------

def _is_integer(checker: object, instance: object) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(checker: object, instance: object) -> bool:
    # JSON has no NaN or Infinity, and a boolean is not a number.
    return _is_integer(checker, instance) or isinstance(instance, float) and math.isfinite(instance)


# A schema's regular expressions are outside data, run by RE2 in time linear in the text: Python's re can take hours
# on one (``^(a+)+$`` against 34 a's and a "!") while holding the GIL, which would stall every episode. Each compiled
# expression's memory is capped, and so is the number kept.
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a pattern RE2 refuses is reported by schema_problem, not written to stderr
_RE2_OPTIONS.max_mem = 2 << 20


@functools.lru_cache(maxsize=64)
def _regex(pattern: str) -> Any:
    return re2.compile(pattern, _RE2_OPTIONS)


_BASE = jsonschema.Draft202012Validator


# jsonschema calls a keyword with the validator (``descend`` is not in its protocol), the keyword's value, the
# instance and the schema holding the keyword.
def _pattern(validator: Any, pattern: str, instance: Any, schema: JSONObject) -> Iterator[Exception]:
    if validator.is_type(instance, "string") and not _regex(pattern).search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: JSONObject, instance: Any,
                        schema: JSONObject) -> Iterator[Exception]:
    if validator.is_type(instance, "object"):
        for pattern, subschema in patterns.items():
            for key, value in instance.items():
                if _regex(pattern).search(key):
                    yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, additional: object, instance: Any,
                           schema: JSONObject) -> Iterator[Exception]:
    # jsonschema's own keyword, told which keys patternProperties covers (found with RE2) instead of searching itself.
    if validator.is_type(instance, "object") and "patternProperties" in schema:
        known, patterns = schema.get("properties", {}), schema["patternProperties"]
        schema = {"properties": {key: True for key in instance
                                 if key in known or any(_regex(pattern).search(key) for pattern in patterns)}}
    yield from _BASE.VALIDATORS["additionalProperties"](validator, additional, instance, schema)


# Draft 2020-12 counts 1.0 as an integer and Python counts True as one; a tool declared ``int`` gets neither.
_StrictValidator = jsonschema.validators.extend(
    _BASE, validators={"pattern": _pattern, "patternProperties": _pattern_properties,
                       "additionalProperties": _additional_properties},
    type_checker=_BASE.TYPE_CHECKER.redefine_many({"integer": _is_integer, "number": _is_number}))
#: References resolve inside the schema (and to the meta-schemas) only: jsonschema would otherwise fetch any other
#: URL, file:// included, from the harness.
_LOCAL_ONLY: Registry[Any] = Registry()

_META = jsonschema.Draft7Validator(jsonschema.Draft7Validator.META_SCHEMA)


def schema_problem(parameters: object) -> str | None:
    """Why ``parameters`` is not a schema the harness checks arguments against, or None: it must be Draft 7 JSON
    Schema, its regular expressions ones RE2 runs (no backreference or lookaround), and it may not have
    ``unevaluatedProperties`` beside ``patternProperties`` (jsonschema would search those with Python's re)."""
    try:
        _META.validate(parameters)
        entries = list(_entries(parameters))
    except jsonschema.ValidationError as exc:
        return f"not valid JSON Schema: {clip(exc.message, _PROBLEM_LIMIT)}"
    except (RecursionError, TypeError):
        return "not a JSON schema that can be checked (nested too deeply, or not JSON)"
    keys = {key for key, _ in entries}
    if {"patternProperties", "unevaluatedProperties"} <= keys:
        return "unevaluatedProperties beside patternProperties is not supported"
    patterns = [value for key, value in entries if key == "pattern" and isinstance(value, str)]
    patterns += [name for key, value in entries if key == "patternProperties" and isinstance(value, dict)
                 for name in value]
    for pattern in patterns:
        try:
            _regex(pattern)
        except re2.error as exc:
            reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else ""
            return (f"the pattern {clip(repr(pattern), _PROBLEM_LIMIT)} is not one RE2 runs ({reason}): patterns are "
                    "matched in linear time, without backreferences or lookaround")
    return None


def _entries(value: object) -> Iterator[tuple[str, object]]:
    """Every key of every object in a JSON document, with its value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, item
            yield from _entries(item)
    elif isinstance(value, list):
        for item in value:
            yield from _entries(item)


def _without_dialects(value: object) -> object:
    """``value`` with no ``$schema`` key: a subschema naming its dialect would be checked by jsonschema's own
    validator for it, with Python's re and the loose types, instead of this module's."""
    if isinstance(value, dict):
        return {key: _without_dialects(item) for key, item in value.items() if key != "$schema"}
    if isinstance(value, list):
        return [_without_dialects(item) for item in value]
    return value


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, what it does, the JSON schema of its arguments (an object), and whether it changes the
    world's state (None when unknown, as for a simulated world's tools)."""

    name: str
    description: str
    parameters: JSONObject
    writes: bool | None = None

    def schema(self) -> JSONObject:
        """The tool in OpenAI function-calling format."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}

    def check(self, arguments: object) -> str | None:
        """Why ``arguments`` do not fit the parameters, naming each argument at fault; None when they fit."""
        if not isinstance(arguments, dict):
            return f"the arguments must be a JSON object, not {_json_name(arguments)}"
        problem = _not_json(arguments)
        if problem is not None or self._validator is None:
            return problem
        try:
            problems = sorted(itertools.islice(self._validator.iter_errors(arguments), _MAX_PROBLEMS),
                              key=lambda problem: problem.json_path)
        except RecursionError:  # the validator walks nested data and schemas in Python frames, JSON in C
            return "the arguments are nested too deeply to check"
        except Exception:  # noqa: BLE001 - an unresolvable reference, a keyword of the wrong form: the schema is at
            return None    # fault, not the call
        return "; ".join(f"{'.'.join(map(str, p.path)) or 'arguments'}: {clip(p.message, _PROBLEM_LIMIT)}"
                         for p in problems) or None

    @cached_property
    def _validator(self) -> Validator | None:
        # Built on first use and kept with the spec; a declared schema the harness cannot check (simulated worlds
        # come with LLM-written ones) is not enforced rather than failing every call: see schema_problem. Checked
        # against Draft 7's meta-schema, in which tool schemas are written (a quarter of 2020-12's cost, paid once
        # per tool); what only 2020-12 refuses fails in check(), which then does not enforce it either.
        if schema_problem(self.parameters) is not None:
            return None
        return _StrictValidator(_without_dialects(self.parameters), registry=_LOCAL_ONLY)


def _not_json(value: object) -> str | None:
    """Why ``value`` is not strict JSON that encodes as UTF-8 (what every world and model request needs), or None."""
    try:
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        return "the arguments hold a lone surrogate (\\ud800-\\udfff), which is not Unicode text"
    except ValueError:
        return "the arguments hold NaN, Infinity or an integer too long to write, which JSON cannot carry"
    except RecursionError:
        return "the arguments are nested too deeply"
    except TypeError as exc:
        return f"the arguments hold a value that is not JSON ({describe(exc)})"
    return None


def _json_name(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def unknown_tool(name: str, specs: Iterable[ToolSpec]) -> JSONObject:
    """The observation of a call to a tool that does not exist."""
    available = ", ".join(sorted(spec.name for spec in specs))
    shown = clip(repr(name), _PROBLEM_LIMIT)
    return tool_error("unknown_tool", f"there is no tool named {shown}; available: {available}")


def json_arguments(text: str) -> JSONObject:
    """Tool-call arguments a model wrote as JSON text (empty text means none).

    Raises ValueError, with a message that tells the model what to fix, unless the text is one JSON object.
    """
    try:
        arguments = loads(text or "{}", parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the arguments are not valid JSON ({exc}); send one JSON object matching the tool's "
                         "parameters") from None
    except ValueError:  # NaN, a number with thousands of digits, nesting beyond MAX_DEPTH
        raise ValueError("the arguments hold a value JSON cannot carry (NaN, Infinity, a number too large, or "
                         "nesting too deep); send one JSON object matching the tool's parameters") from None
    if not isinstance(arguments, dict):
        raise ValueError(f"the arguments are not a JSON object but {_json_name(arguments)}; send one JSON object "
                         "matching the tool's parameters")
    return arguments


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_type(annotation: Any, namespace: Mapping[str, Any]) -> tuple[JSONObject, bool]:
    """JSON schema for a type hint (text is read by :func:`named_type` in ``namespace``), and whether it admits
    None."""
    annotation = named_type(annotation, namespace)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        schema, _ = _json_type(inner[0], namespace) if len(inner) == 1 else ({}, False)
        return schema, type(None) in args
    if origin is typing.Literal:
        return {"type": _JSON_TYPES[type(args[0])], "enum": list(args)}, False
    if origin in (list, Sequence):
        return {"type": "array", "items": _json_type(args[0], namespace)[0] if args else {}}, False
    if origin is dict:
        return {"type": "object"}, False
    if annotation in _JSON_TYPES:
        return {"type": _JSON_TYPES[annotation]}, False
    raise TypeError(f"no JSON schema for the type {annotation!r}")


_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object",
                               list: "array"}


def _docstring(function: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """The summary and the ``Args:`` descriptions of a Google-style docstring."""
    text = inspect.getdoc(function) or ""
    summary, _, rest = text.partition("\n\n")
    params: dict[str, str] = {}
    section = re.search(r"^Args:\n((?:[ \t]+.*\n?)+)", rest, re.MULTILINE)
    current = None
    for line in (section.group(1).splitlines() if section else []):
        match = re.match(r"\s+(\w+)(?:\s*\([^)]*\))?:\s*(.*)", line)
        if match and (current is None or not line.startswith(" " * 8)):
            current = match.group(1)
            params[current] = match.group(2).strip()
        elif current:
            params[current] += " " + line.strip()
    return " ".join(summary.split()), params


def spec_of(function: Callable[..., Any], name: str, *, writes: bool | None = None) -> ToolSpec:
    """The tool ``function`` makes, its parameters from the signature's type hints and the docstring's ``Args:``.

    The first parameter is skipped: it is what the world passes itself (a database connection, ``self``). Its
    annotation, the return's, and any other are never read; the parameters' are resolved in the function's module
    without being evaluated (see :func:`~occubench.core.annotations.named_type`).
    """
    namespace = getattr(inspect.unwrap(function), "__globals__", {})
    summary, described = _docstring(function)
    properties: JSONObject = {}
    required: list[str] = []
    for parameter in list(inspect.signature(function).parameters.values())[1:]:
        if parameter.annotation is inspect.Parameter.empty:
            raise TypeError(f"{name}: the parameter {parameter.name} has no type annotation")
        schema, optional = _json_type(parameter.annotation, namespace)
        if parameter.name in described:
            schema["description"] = described[parameter.name]
        properties[parameter.name] = schema
        if parameter.default is inspect.Parameter.empty and not optional:
            required.append(parameter.name)
    return ToolSpec(name, summary, {"type": "object", "properties": properties, "required": required,
                                    "additionalProperties": False}, writes)


def derive_schema(function: Callable[..., Any], name: str) -> JSONObject:
    """The OpenAI tool schema of ``function``, skipping its first parameter (see :func:`spec_of`)."""
    return spec_of(function, name).schema()


# -- the time limit ----------------------------------------------------------------------------------------------

class TimeLimitExceeded(Exception):
    """A call ran past its time limit and was interrupted."""


class _Interrupt(BaseException):
    # Raised inside the running call; a BaseException, so a tool's ``except Exception`` cannot swallow it.
    pass


_set_async_exc = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi))


class _Limit:
    """One running call's limit. ``fired`` and ``done`` change only under the watchdog's lock, so exactly one of
    "the watchdog interrupts" and "the call finishes" happens first."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.thread = threading.get_ident()
        self.fired = self.done = False


class _Watchdog:
    """One daemon thread that interrupts every call whose time is up (a timer thread per call would cost more
    than most calls)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wakeup = threading.Condition(self._lock)
        self._queue: list[tuple[float, int, _Limit]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._wake_at = math.inf  # when the thread next looks at the queue

    def arm(self, limit: _Limit) -> None:
        with self._lock:
            heapq.heappush(self._queue, (limit.deadline, next(self._order), limit))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="occubench-tool-watchdog", daemon=True)
                self._thread.start()
            elif limit.deadline < self._wake_at:
                # Only then: waking the thread for every call would cost more than the call (with one limit for
                # all calls, this is about once per limit's length).
                self._wakeup.notify()

    def disarm(self, limit: _Limit) -> None:
        with self._lock:
            limit.done = True
            while self._queue and self._queue[0][2].done:
                heapq.heappop(self._queue)
        if limit.fired:
            # The interrupt may still be pending (the call ended before it was delivered): cancel it, so it never
            # lands in whatever this thread runs next.
            _set_async_exc(limit.thread, ctypes.py_object())

    def _run(self) -> None:
        with self._lock:
            while True:
                now = time.monotonic()
                while self._queue and (self._queue[0][2].done or self._queue[0][0] <= now):
                    _, _, limit = heapq.heappop(self._queue)
                    if not limit.done:
                        limit.fired = True
                        _set_async_exc(limit.thread, _Interrupt)
                self._wake_at = self._queue[0][0] if self._queue else math.inf
                self._wakeup.wait(self._wake_at - now if self._queue else None)


_watchdog = _Watchdog()
_local = threading.local()


def _after_fork() -> None:
    # A forked child has no watchdog thread, and the lock may have been held by a thread that did not survive.
    global _watchdog
    _watchdog = _Watchdog()


if hasattr(os, "register_at_fork"):  # POSIX only; elsewhere processes are spawned, not forked
    os.register_at_fork(after_in_child=_after_fork)


def call_with_time_limit(function: Callable[[], T], seconds: float | None) -> T:
    """``function()``, interrupted when it runs longer than ``seconds`` (None: no limit).

    Python code is interrupted by an exception raised in its thread; C code (a SQLite query) receives it only when
    it returns, so long-running C code should poll :func:`time_is_up`. A call that returns is never interrupted
    afterwards; a call that raises after its time was up raises :class:`TimeLimitExceeded`, whatever it raised.
    A call made inside a time-limited call runs under the outer limit.
    """
    if seconds is None or getattr(_local, "limit", None) is not None:
        return function()
    limit = _Limit(seconds)
    try:
        try:
            _local.limit = limit
            _watchdog.arm(limit)
            return function()
        finally:
            # The interrupt can land anywhere up to disarm(), even in it: the nested finally still runs.
            try:
                _watchdog.disarm(limit)
            finally:
                _local.limit = None
    except (Exception, _Interrupt):
        if limit.fired:
            raise TimeLimitExceeded(f"the call did not finish within {seconds:g} s") from None
        raise


def time_is_up() -> bool:
    """Whether the time-limited call running on this thread is past its limit: a progress handler for C code
    that an exception cannot interrupt (``sqlite3.Connection.set_progress_handler``)."""
    limit = getattr(_local, "limit", None)
    return limit is not None and limit.fired
