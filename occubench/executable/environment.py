"""An isolated instance of an executable world: its own database, tools that are code, a state diff."""

from __future__ import annotations

import sqlite3
from typing import Any

from occubench.environment import Environment, JSONObject
from occubench.executable.world import World
from occubench.tools import TOOL_TIME_LIMIT, ToolSpec


class ExecutableEnvironment(Environment):
    """One rollout's copy of ``world``, under the tool contract of :class:`Environment`: each call runs in a
    transaction, so one that fails or times out halfway changes nothing; ``time_limit`` seconds per call."""

    def __init__(self, world: World, *, time_limit: float | None = TOOL_TIME_LIMIT) -> None:
        self.world = world
        self.time_limit = time_limit
        self.db = world.instance()

    def tools(self) -> list[ToolSpec]:
        return [tool.spec for tool in self.world.tools.values()]

    def _call(self, name: str, arguments: JSONObject) -> Any:
        return self.world.tools[name].function(self.db, **arguments)

    def _transaction(self) -> sqlite3.Connection:
        return self.db  # commits when the call succeeds, rolls back when it raises

    def reset(self) -> None:
        self.db.close()
        self.db = self.world.instance()

    def close(self) -> None:
        self.db.close()

    def state_diff(self) -> dict[str, dict[str, list[Any]]]:
        """Rows inserted, deleted and updated per table since the instance was created."""
        return state_diff(self.world, self.world.instance(), self.db)


def _keyed(db: sqlite3.Connection, table: str, key: tuple[str, ...]) -> dict[tuple[Any, ...], dict[str, Any]]:
    columns = ", ".join(f'"{c}"' for c in key)
    return {tuple(row[:len(key)]): dict(row)
            for row in db.execute(f'SELECT {columns}, * FROM "{table}"')}  # names come from the schema, not input


def state_diff(world: World, before: sqlite3.Connection, after: sqlite3.Connection) -> dict[str, dict[str, list[Any]]]:
    diff: dict[str, dict[str, list[Any]]] = {}
    for table, key in world.tables().items():
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
