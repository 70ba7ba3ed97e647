"""What an episode changed in a world's SQLite database: rows inserted, deleted and updated per table, by the
columns that identify them. Every world kind backed by SQLite (executable, AWM) reports its state diff this way,
and the viewer shows it."""

from __future__ import annotations

import sqlite3
from typing import Any

#: Per table: ``{"inserted": [row, ...], "deleted": [row, ...], "updated": [{"key": [...], "changes": {column:
#: [old, new]}}, ...]}``; tables without a change are left out.
StateDiff = dict[str, dict[str, list[Any]]]


def table_keys(db: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    """Each table of ``db`` and the columns that identify its rows (the primary key, else ``rowid``)."""
    names = [row[0] for row in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    # Names come from the database's own catalogue, quoted as identifiers.
    return {name: tuple(column[1] for column in sorted(db.execute(f'PRAGMA table_info("{_quoted(name)}")'),
                                                       key=lambda c: c[5]) if column[5]) or ("rowid",)
            for name in names}


def snapshot(db: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    """``db`` as data: each table's columns (name → declared type), the columns that identify its rows
    (:func:`table_keys`), and its rows in storage order (bytes as hex)."""
    state: dict[str, dict[str, Any]] = {}
    for table, key in table_keys(db).items():
        columns = {column[1]: column[2] for column in db.execute(f'PRAGMA table_info("{_quoted(table)}")')}
        rows = [{name: value.hex() if isinstance(value, bytes) else value for name, value in zip(columns, row)}
                for row in db.execute(f'SELECT * FROM "{_quoted(table)}" ORDER BY rowid')]
        state[table] = {"columns": columns, "key": list(key), "rows": rows}
    return state


def _quoted(name: str) -> str:
    return name.replace('"', '""')


def _keyed(db: sqlite3.Connection, table: str, key: tuple[str, ...]) -> dict[tuple[Any, ...], dict[str, Any]]:
    columns = ", ".join(f'"{_quoted(c)}"' for c in key)
    cursor = db.execute(f'SELECT {columns}, * FROM "{_quoted(table)}"')
    names = [description[0] for description in cursor.description][len(key):]
    rows = (tuple(row) for row in cursor)
    return {values[:len(key)]: dict(zip(names, values[len(key):], strict=True)) for values in rows}


def state_diff(tables: dict[str, tuple[str, ...]], before: sqlite3.Connection,
               after: sqlite3.Connection) -> StateDiff:
    """What changed from ``before`` to ``after`` in ``tables`` (as :func:`table_keys` gives them)."""
    diff: StateDiff = {}
    for table, key in tables.items():
        old, new = _keyed(before, table, key), _keyed(after, table, key)
        for row in (*old.values(), *new.values()):
            row.pop("rowid", None)
        changes = {
            "inserted": [new[k] for k in sorted(new.keys() - old.keys(), key=repr)],
            "deleted": [old[k] for k in sorted(old.keys() - new.keys(), key=repr)],
            "updated": [{"key": list(k), "changes": {c: [old[k][c], v] for c, v in new[k].items() if old[k][c] != v}}
                        for k in sorted(new.keys() & old.keys(), key=repr) if old[k] != new[k]],
        }
        if any(changes.values()):
            diff[table] = changes
    return diff
