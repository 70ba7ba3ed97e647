"""Twins of AWM worlds (``--suite twin --twin-of awm --data-dir DIR``): what a twin is derived from, read of an AWM
scenario by its sandbox worker: its tools (:meth:`AwmEnvironment.tools`), as the agent of a plain AWM run sees
them, and its seeded database as an instance starts from it (the worker's ``state``), checked at the boundary.

Seed rows written relative to the moment (``datetime('now', '-90 days')``, a ``CURRENT_TIMESTAMP`` default) hold
the moment the worker built the database; another worker's instance holds its own: such values differ between the
twin and the real instance, as they do between two runs of the same world.
"""

from __future__ import annotations

from dataclasses import replace

from occubench.awm.suite import AwmSuite
from occubench.awm.world import LOAD_SECONDS, AwmWorld
from occubench.core.task import Task
from occubench.twin.derive import TableFacts, WorldFacts

#: An AWM task has no reference solution: its twin's judge is told to hold the agent to the task's own words.
RUBRIC = ("The task is done when the agent's calls made the changes the task asks for, on the records it names, and "
          "its final answer reports what the task asks to find; changes the task does not ask for, or an answer the "
          "calls' results do not support, fail it.")


def awm_facts(world: AwmWorld) -> WorldFacts:
    """What ``world``'s twin is derived from, asked of one of its workers (started, or leased, here)."""
    environment = world.environment()
    try:
        tools = environment.tools()
        state = environment.request("state", {}, LOAD_SECONDS, "reading its seeded database")
    finally:
        environment.close()
    tables = {name: TableFacts(table["columns"], table["key"], table["rows"]) for name, table in state.items()}
    return WorldFacts(world.name, world.name, world.scenario.description or "", tools, tables)


def awm_twin_tasks(worlds: list[AwmWorld]) -> list[Task]:
    """The AWM tasks, each with its twin's verification plan."""
    return [replace(task, verification_plan=RUBRIC) for task in AwmSuite(worlds).tasks()]
