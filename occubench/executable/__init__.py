"""Executable worlds: SQLite-backed environments whose tools are code and whose tasks are checked by code."""

from occubench.core.tools import ToolError, derive_schema
from occubench.executable.environment import ExecutableEnvironment, state_diff
from occubench.executable.registry import BUILTIN_SUITE, builtin_worlds, load_world
from occubench.executable.suite import ExecutableSuite
from occubench.executable.validate import validate
from occubench.executable.world import (
    Call,
    Check,
    ExecTask,
    Tool,
    World,
    found,
    mentions_number,
    next_id,
    one,
    only_changed,
    rows,
    scalar,
)

__all__ = ["BUILTIN_SUITE", "Call", "Check", "ExecTask", "ExecutableEnvironment", "ExecutableSuite", "Tool",
           "ToolError", "World", "builtin_worlds", "derive_schema", "found", "load_world", "mentions_number",
           "next_id", "one", "only_changed", "rows", "scalar", "state_diff", "validate"]
