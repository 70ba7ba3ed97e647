"""The definition contract of an executable world: one folder per environment.

A folder holds ``schema.sql`` (the tables), ``seed.sql`` (their rows) and an ``__init__.py`` that creates a
:class:`World` with its metadata, registers tools (plain typed functions whose first parameter is the instance's
database connection) with ``@world.tool``, and tasks with ``world.task(ExecTask(...))``. A tool's JSON schema is
derived from its signature and docstring unless declared. Tools reach data only through the connection they are
given, with parameterised SQL.

Every database a world gets (the template its SQL files build, each instance, synthesis's scratch databases) comes
from :func:`new_database`: in memory, with ``trusted_schema`` off, SQLite's defensive mode where Python exposes it
(3.12 on), and an authorizer that refuses ATTACH and DETACH, VACUUM (authorized as an ATTACH, so ``VACUUM INTO``
writes no file), every PRAGMA but two that only report, virtual tables, and any SQL function outside
:data:`SQL_FUNCTIONS`; a DEFAULT clause, which the authorizer never sees, may call only functions SQLite marks
innocuous. So neither a tool with a bug nor a world folder's SQL reaches a file, or raw memory (``fts3_tokenizer``
hands out and takes in C function pointers), through SQL. What a tool's Python does is for the allow-list
(:mod:`occubench.sandbox.allowlist`) and the operating system's sandbox to stop, not for the database.
"""

from __future__ import annotations

import re
import sqlite3
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from occubench.core.state import snapshot, table_keys
from occubench.core.task import CATEGORY_ABBREVIATIONS
from occubench.core.tools import JSONObject, ToolError, ToolSpec, schema_problem, spec_of, time_is_up
from occubench.errors import ConfigError

ToolFunction = Callable[..., Any]
#: SQLite virtual-machine instructions between two checks of the running call's time limit.
_PROGRESS_STEPS = 1000
#: The SQL functions a world's SQL may call: SQLite's own functions on values (text, numbers, dates, JSON),
#: aggregates and window functions, none of which reaches a file, the engine or memory (the built-in worlds use
#: coalesce, count, like, max, replace, round, substr and sum). Left out: ``fts3_tokenizer`` (reads and sets a C
#: function pointer: a pointer leak, then a jump anywhere), ``load_extension``, ``fts5`` and the full-text and
#: R*Tree helpers (their virtual tables are refused anyway), ``sqlite_*`` (the engine's build and log: no world needs
#: them), and whatever SQLite adds later. Names of newer SQLite than some Pythons ship are in (``concat``, ``unhex``).
SQL_FUNCTIONS = frozenset({
    # text
    "char", "concat", "concat_ws", "format", "glob", "hex", "instr", "length", "like", "lower", "ltrim",
    "octet_length", "printf", "quote", "replace", "rtrim", "soundex", "substr", "substring", "trim", "unhex",
    "unicode", "upper",
    # values, numbers, randomness
    "abs", "changes", "coalesce", "ifnull", "iif", "last_insert_rowid", "likelihood", "likely", "max", "min",
    "nullif", "random", "randomblob", "round", "sign", "total_changes", "typeof", "unlikely", "zeroblob",
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "ceiling", "cos", "cosh", "degrees", "exp",
    "floor", "ln", "log", "log10", "log2", "mod", "pi", "pow", "power", "radians", "sin", "sinh", "sqrt", "tan",
    "tanh", "trunc",
    # dates and times
    "current_date", "current_time", "current_timestamp", "date", "datetime", "julianday", "strftime", "time",
    "timediff", "unixepoch",
    # aggregates and window functions
    "avg", "count", "group_concat", "string_agg", "sum", "total", "cume_dist", "dense_rank", "first_value", "lag",
    "last_value", "lead", "nth_value", "ntile", "percent_rank", "rank", "row_number",
    # JSON (json_each and json_tree are table-valued: the authorizer sees them as reads)
    "->", "->>", "json", "json_array", "json_array_length", "json_error_position", "json_extract",
    "json_group_array", "json_group_object", "json_insert", "json_object", "json_patch", "json_quote", "json_remove",
    "json_replace", "json_set", "json_type", "json_valid",
})
#: PRAGMAs that only report, which the harness reads after the authorizer is on (a world's tables and columns,
#: the seed's broken foreign keys); every other PRAGMA could change the engine's settings.
_REPORTS = frozenset({"table_info", "foreign_key_check"})
#: ATTACH and DETACH reach files (VACUUM, with or without INTO a file, is authorized as an ATTACH); virtual tables
#: run C code of their own (an fts3 table calls its tokenizer's function pointer).
_DENIED_ACTIONS = frozenset({sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH, sqlite3.SQLITE_CREATE_VTABLE,
                             sqlite3.SQLITE_DROP_VTABLE})


@dataclass(frozen=True)
class Check:
    """One verification check: its name, whether it passed, and why."""

    name: str
    passed: bool
    message: str = ""


@dataclass(frozen=True)
class Call:
    """A tool call in a reference (or deliberately wrong) solution."""

    tool: str
    arguments: JSONObject = field(default_factory=dict)


#: verify(initial database, final database, the agent's final answer) -> checks; all must pass.
Verifier = Callable[[sqlite3.Connection, sqlite3.Connection, str], list[Check]]


@dataclass(frozen=True)
class ExecTask:
    id: str
    instruction: str
    difficulty: int
    verify: Verifier
    #: The reference solution: these calls, then this final answer, must pass ``verify``.
    reference: Sequence[Call]
    answer: str
    #: A plausible but wrong solution that ``verify`` must reject (validation runs it).
    wrong: Sequence[Call]
    wrong_answer: str
    #: Optional rubric for an LLM judge.
    rubric: str = ""


@dataclass(frozen=True)
class Tool:
    function: ToolFunction
    spec: ToolSpec

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def writes(self) -> bool:
        return bool(self.spec.writes)


class World:
    """An executable environment's definition; :meth:`instance` gives each rollout its own database."""

    def __init__(self, name: str, *, scenario: str, category: str, domain: str, description: str,
                 directory: str | Path, main_tables: Sequence[str]) -> None:
        if category not in CATEGORY_ABBREVIATIONS:
            raise ValueError(f"world {name}: category {category!r} is not one of OccuBench's ten")
        self.name, self.scenario, self.category, self.domain = name, scenario, category, domain
        self.description = description
        self.directory = Path(directory)
        self.main_tables = tuple(main_tables)
        self.tools: dict[str, Tool] = {}
        self.tasks: list[ExecTask] = []
        self._template: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def tool(self, function: ToolFunction | None = None, *, writes: bool = False,
             schema: JSONObject | None = None) -> Any:
        """Register a tool: ``@world.tool`` for a read tool, ``@world.tool(writes=True)`` for one that changes
        state; ``schema`` declares the parameters' JSON schema instead of deriving it, which must be one the
        harness checks arguments against (:func:`~occubench.core.tools.schema_problem`)."""
        def register(fn: ToolFunction) -> ToolFunction:
            if schema is not None and (problem := schema_problem(schema)) is not None:
                raise ConfigError(f"world {self.name}, tool {fn.__name__}: the declared schema is refused: {problem}")
            spec = spec_of(fn, fn.__name__, writes=writes)
            self.tools[fn.__name__] = Tool(fn, spec if schema is None else replace(spec, parameters=schema))
            return fn
        return register(function) if function is not None else register

    def task(self, task: ExecTask) -> None:
        self.tasks.append(task)

    def _built(self) -> sqlite3.Connection:
        if self._template is None:
            # A world folder from --worlds-dir is not ours: its SQL is held to the same authorizer as a tool's.
            template = new_database()
            for name in ("schema.sql", "seed.sql"):
                try:
                    template.executescript((self.directory / name).read_text(encoding="utf-8"))
                except (OSError, UnicodeDecodeError, sqlite3.Error) as exc:
                    raise ConfigError(f"{self.directory / name}: {exc}") from None
            template.commit()
            self._template = template
        return self._template

    def tables(self) -> dict[str, tuple[str, ...]]:
        """Each table and the columns that identify its rows (the primary key, else ``rowid``)."""
        with self._lock:
            return table_keys(self._built())

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """The seeded database as data (:func:`snapshot`)."""
        with self._lock:
            return snapshot(self._built())

    def instance(self) -> sqlite3.Connection:
        """A private in-memory copy of the seeded database, from :func:`new_database`, whose queries stop when the
        tool call running them is out of time."""
        connection = new_database(foreign_keys=True)
        with self._lock:  # one template connection serves every thread
            self._built().backup(connection)
        connection.row_factory = sqlite3.Row
        # A query runs in C, where the time limit's interrupt cannot reach it: SQLite asks instead.
        connection.set_progress_handler(time_is_up, _PROGRESS_STEPS)
        return connection


def new_database(*, foreign_keys: bool = False) -> sqlite3.Connection:
    """An empty in-memory database, locked down before any SQL of a world runs on it (see the module's docstring)."""
    connection = sqlite3.connect(":memory:", check_same_thread=False)
    # Functions and virtual tables not marked innocuous may not run from the schema (a DEFAULT clause, which the
    # authorizer never sees; a view; a trigger).
    connection.execute("PRAGMA trusted_schema = OFF")
    if sys.version_info >= (3, 12):  # no writing to the schema table or to a virtual table's shadow tables
        connection.setconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE, True)
    if foreign_keys:
        connection.execute("PRAGMA foreign_keys = ON")
    connection.set_authorizer(_authorize)  # last: it refuses the PRAGMAs above
    return connection


def _authorize(action: int, detail: str | None, name: str | None, *_: object) -> int:
    # For a function, SQLite gives its name in the second detail; for a PRAGMA, the pragma's name in the first.
    if action == sqlite3.SQLITE_FUNCTION:
        allowed = name in SQL_FUNCTIONS
    elif action == sqlite3.SQLITE_PRAGMA:
        allowed = detail in _REPORTS
    else:
        allowed = action not in _DENIED_ACTIONS
    return sqlite3.SQLITE_OK if allowed else sqlite3.SQLITE_DENY


def rows(db: sqlite3.Connection, sql: str, *params: Any) -> list[JSONObject]:
    """Every row of a parameterised query, as plain dicts."""
    return [dict(row) for row in db.execute(sql, params)]


def one(db: sqlite3.Connection, sql: str, *params: Any) -> JSONObject | None:
    """The first row of a parameterised query, or None."""
    row = db.execute(sql, params).fetchone()
    return dict(row) if row is not None else None


def scalar(db: sqlite3.Connection, sql: str, *params: Any) -> Any:
    """The single value of an aggregate query (COUNT, SUM, MAX...), which always yields one row; NULL → None."""
    return db.execute(sql, params).fetchone()[0]


def next_id(db: sqlite3.Connection, table: str, column: str, prefix: str, start: int) -> str:
    """The id after the highest ``prefix``-numbered one in ``table.column``; ``prefix{start + 1}`` when empty.

    ``table`` and ``column`` come from the world's own code, never from a tool argument.
    """
    last = scalar(db, f"SELECT MAX(CAST(SUBSTR({column}, ?) AS INTEGER)) FROM {table}", len(prefix) + 1)
    return f"{prefix}{(last or start) + 1}"


def found(db: sqlite3.Connection, sql: str, *params: Any, missing: str) -> JSONObject:
    """The first row of a parameterised query; a tool error saying ``missing`` when there is none."""
    row = one(db, sql, *params)
    if row is None:
        raise ToolError(missing)
    return row


def mentions_number(answer: str, value: float, tolerance: float = 0.01) -> bool:
    """Whether ``answer`` states ``value`` (ignoring currency signs and thousands separators)."""
    text = re.sub(r"(?<=\d),(?=\d{3})", "", answer)
    numbers = []
    for match in re.finditer(r"(-?)(\d+(?:\.\d+)?)", text):
        before = text[match.start() - 1] if match.start() else " "
        if match.group(1) and before.isalnum():  # APP-3006 is an id, not minus 3006
            numbers.append(float(match.group(2)))
        elif not before.isalpha() and before != ".":  # SEV1 holds no number
            numbers.append(float(match.group(0)))
    return any(abs(number - value) <= tolerance for number in numbers)


def only_changed(initial: sqlite3.Connection, final: sqlite3.Connection, table: str, key: str,
                 allowed: set[Any]) -> Check:
    """A check that no row of ``table`` other than those keyed in ``allowed`` was inserted, deleted or changed."""
    query = f'SELECT * FROM "{table}" ORDER BY "{key}"'  # names come from the verifier, never from the agent
    before = {row[key]: tuple(row.values()) for row in rows(initial, query)}
    after = {row[key]: tuple(row.values()) for row in rows(final, query)}
    touched = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)} - allowed
    return Check(f"no other {table} changed", not touched,
                 f"also changed: {', '.join(map(str, sorted(touched, key=str)))}" if touched else "")

