"""An isolated instance of an executable world: its own database, tools that are code, a state diff, and the
task's checks run on it. :class:`WorldEnvironment` is what the suite needs of an instance wherever it runs: here in
the process (:class:`ExecutableEnvironment`) or in a sandbox worker (:mod:`occubench.executable.isolated`)."""

from __future__ import annotations

import sqlite3
from abc import abstractmethod
from typing import Any, NamedTuple

from occubench.core.environment import Environment, JSONObject
from occubench.core.state import StateDiff, state_diff
from occubench.core.tools import TOOL_TIME_LIMIT, ToolSpec, call_with_time_limit
from occubench.executable.world import Check, World


class Verification(NamedTuple):
    """A task's checks on an instance's final database, and what the agent changed in it."""

    checks: list[Check]
    diff: StateDiff


class WorldEnvironment(Environment):
    """An instance of an executable world, with what its suite and validation read of it."""

    @abstractmethod
    def verify(self, task_id: str, answer: str) -> Verification:
        """Task ``task_id``'s checks on this instance and ``answer``, and the state diff."""

    @abstractmethod
    def state_diff(self) -> StateDiff:
        """Rows inserted, deleted and updated per table since the instance was created."""

    @abstractmethod
    def table_sizes(self) -> dict[str, int]:
        """The number of rows of each table."""


class ExecutableEnvironment(WorldEnvironment):
    """One rollout's copy of ``world``, in this process, under the tool contract of :class:`Environment`: each call
    runs in a transaction, so one that fails or times out halfway changes nothing; ``time_limit`` seconds per call."""

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

    def state_diff(self) -> StateDiff:
        initial = self.world.instance()
        try:
            return state_diff(self.world.tables(), initial, self.db)
        finally:
            initial.close()

    def verify(self, task_id: str, answer: str) -> Verification:
        spec = next((task for task in self.world.tasks if task.id == task_id), None)
        if spec is None:
            raise KeyError(f"world {self.world.name} has no task {task_id!r}")
        initial = self.world.instance()
        try:
            checks = call_with_time_limit(lambda: spec.verify(initial, self.db, answer), self.time_limit)
            if not isinstance(checks, list) or not all(isinstance(check, Check) for check in checks):
                raise TypeError(f"task {task_id}: verify returned {type(checks).__name__}, not a list of Check")
            return Verification(checks, state_diff(self.world.tables(), initial, self.db))
        finally:
            initial.close()

    def table_sizes(self) -> dict[str, int]:
        # Table names come from the schema, never from input.
        return {table: self.db.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]
                for table in self.world.tables()}
