"""An isolated instance of an executable world: its own database, tools that are code, a state diff."""

from __future__ import annotations

import sqlite3
from typing import Any

from occubench.environment import Environment, JSONObject
from occubench.executable.world import ToolError, World


class ExecutableEnvironment(Environment):
    """One rollout's copy of ``world``. Arguments are checked against each tool's schema before the tool runs; a
    tool runs in a transaction, so one that fails halfway changes nothing; every failure is an observation."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.db = world.instance()

    def tools(self) -> list[JSONObject]:
        return [tool.schema for tool in self.world.tools.values()]

    def call(self, name: str, arguments: JSONObject) -> JSONObject:
        tool = self.world.tools.get(name)
        if tool is None:
            return {"error": "unknown_tool", "message": f"there is no tool named {name!r}"}
        problems = sorted(self.world.validator(name).iter_errors(arguments), key=lambda e: list(e.path))
        if problems:
            return {"error": "invalid_arguments",
                    "message": "; ".join(f"{'.'.join(map(str, p.path)) or 'arguments'}: {p.message}"
                                         for p in problems)}
        try:
            with self.db:  # commit on success, roll back if the tool raises
                result = tool.function(self.db, **arguments)
        except ToolError as exc:
            return {"error": str(exc)}
        except Exception as exc:  # noqa: BLE001 - a broken tool is reported to the agent; the episode goes on
            return {"error": f"{type(exc).__name__}: {exc}"}
        return result if isinstance(result, dict) else {"result": result}

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
