"""Twins of AWM worlds (``--suite twin --twin-of awm --data-dir DIR``): what a twin is derived from, read of an AWM
scenario.

- Its tools are the ones its sandbox worker lists from the application (:meth:`AwmEnvironment.tools`), as the agent
  of a plain AWM run sees them.
- Its seeded database is built here from the schema and seed rows, which are data: the statements the worker runs
  (:func:`occubench.awm.app.build_database`), in the same order, on a locked-down in-memory database
  (:func:`~occubench.executable.world.new_database`: no file, no extension, only SQLite's value functions), bounded
  in size and in steps so that a seed that loops or grows without end is cut short, never this process.

Seed rows written relative to the moment (``datetime('now', '-90 days')``, a ``CURRENT_TIMESTAMP`` default) hold
the moment the twin was derived; the real instance's, the moment its worker built the database: such values differ
between the two, as they do between two runs of the same world.
"""

from __future__ import annotations

import itertools
import sqlite3
import sys
from dataclasses import replace
from typing import Any

from occubench.awm.app import statements
from occubench.awm.data import Scenario
from occubench.awm.suite import AwmSuite
from occubench.awm.world import AwmWorld
from occubench.core.task import Task
from occubench.core.tools import clip
from occubench.executable.world import new_database, snapshot
from occubench.twin.derive import TableFacts, WorldFacts

#: The largest seeded database read, in pages of 4 KiB (16 MiB; its rows go into the world model's prompt).
MAX_PAGES = 4096
#: SQLite virtual-machine steps all of a scenario's statements may take, in units of :data:`_STEPS`.
MAX_STEPS = 100_000
_STEPS = 1000
#: The longest text or blob a statement may make (Python 3.11 on; 3.10 cannot set it).
MAX_VALUE = 1 << 20
#: An AWM task has no reference solution: its twin's judge is told to hold the agent to the task's own words.
RUBRIC = ("The task is done when the agent's calls made the changes the task asks for, on the records it names, and "
          "its final answer reports what the task asks to find; changes the task does not ask for, or an answer the "
          "calls' results do not support, fail it.")


def seeded_tables(scenario: Scenario) -> tuple[dict[str, TableFacts], list[str]]:
    """``scenario``'s seeded database (see the module docstring), and the statements that failed, with SQLite's
    reason."""
    schema, seed = scenario.schema or {}, scenario.seed or {}
    tables = [table for table in _list(schema.get("tables")) if isinstance(table, dict)]
    script = [table.get("ddl") for table in tables]
    script += [index for table in tables for index in statements(table.get("indexes"))]
    script += [row for table in _list(seed.get("tables")) if isinstance(table, dict)
               for row in statements(table.get("insert_statements"))]
    db = new_database(max_pages=MAX_PAGES)
    db.isolation_level = None  # each statement its own transaction: one cut short takes back only itself
    try:
        if sys.version_info >= (3, 11):
            db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE)
        steps = itertools.count()
        # Counted over all statements: once spent, any statement that runs long is cut short.
        db.set_progress_handler(lambda: next(steps) >= MAX_STEPS, _STEPS)
        problems = []
        for statement in script:
            if not isinstance(statement, str):
                continue
            try:
                db.execute(statement)
            except (sqlite3.Error, sqlite3.Warning) as exc:  # Python 3.10 warns of two statements in one
                problems.append(f"{clip(statement, 120)}: {exc}")
        db.set_progress_handler(None, 0)  # reading the bounded result back is never cut short
        state = snapshot(db)
    finally:
        db.close()
    return {name: TableFacts(table["columns"], table["key"], table["rows"]) for name, table in state.items()}, problems


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def awm_facts(world: AwmWorld) -> tuple[WorldFacts, list[str]]:
    """What ``world``'s twin is derived from: its tools, listed by one of its workers (started, or leased, here),
    and its seeded database; with the seed statements that failed."""
    environment = world.environment()
    try:
        tools = environment.tools()
    finally:
        environment.close()
    tables, problems = seeded_tables(world.scenario)
    return WorldFacts(world.name, world.name, world.scenario.description or "", tools, tables), problems


def awm_twin_tasks(worlds: list[AwmWorld]) -> list[Task]:
    """The AWM tasks, each with its twin's verification plan."""
    return [replace(task, verification_plan=RUBRIC) for task in AwmSuite(worlds).tasks()]
