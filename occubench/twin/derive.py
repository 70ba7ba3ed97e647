"""The twin of an executable world: the LLM-simulated world config a user would have written for it.

Derived from what the world is — its name and description, its tools, its seeded database — with no model, so the
same world always gives the same config, in the published format
(:class:`~occubench.simulated.config.WorldModelConfig`): the tools' schemas as the actions, a system prompt
describing the system and its state, each table's columns as the state description, the seeded rows as the initial
state. Each kind of executable world fills a :class:`WorldFacts` (a world folder's, from what its sandbox worker
reports: :func:`facts_of`; an AWM scenario's: :mod:`occubench.twin.awm`) and one recipe (:func:`twin_config`) makes
the config. :func:`write_dataset` writes the twins of a set of worlds as an OccuBench data folder, which ``occubench
run --suite occubench --data-dir`` runs as any simulated world.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from occubench.core.task import Task
from occubench.core.tools import ToolSpec
from occubench.executable.isolated import IsolatedWorld
from occubench.executable.world import ExecTask
from occubench.sandbox.boundary import path_name
from occubench.util.jsonl import dumps_line, write_atomic

#: The config's task file, scenario pool and config folder names, as the published data has them.
TASKS_FILE, SCENARIOS_FILE, CONFIG_DIR = "eval_benchmark_solvable.jsonl", "task_scenario_all_pool.jsonl", \
    "world_model_configs"


@dataclass(frozen=True)
class TableFacts:
    """One table of a seeded database."""

    #: Column name → declared type ("" or None when undeclared), in the table's order.
    columns: Mapping[str, str | None]
    #: The columns that identify a row.
    key: Sequence[str]
    rows: Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class WorldFacts:
    """What a twin is derived from, whatever the kind of world."""

    name: str
    scenario: str
    description: str
    tools: Sequence[ToolSpec]
    #: The seeded database, by table.
    tables: Mapping[str, TableFacts]


def facts_of(described: Mapping[str, Any]) -> WorldFacts:
    """The facts of a world folder's world, from its description (:func:`~occubench.executable.isolated.describe`,
    as a sandbox worker reports it)."""
    return WorldFacts(
        described["name"], described["scenario"], described["description"],
        [ToolSpec(t["name"], t["description"], t["parameters"], t["writes"]) for t in described["tools"]],
        {name: TableFacts(table["columns"], table["key"], table["rows"])
         for name, table in described["state"].items()})


def twin_config(world: WorldFacts) -> dict[str, Any]:
    """The twin of ``world`` as a world-model config: a JSON object of the published format."""
    writes = [tool.name for tool in world.tools if tool.writes]
    reads = [tool.name for tool in world.tools if not tool.writes]
    initial = {name: list(table.rows) for name, table in world.tables.items()}
    prompt = "\n".join([
        f'You simulate {world.scenario}: the system behind the executable world "{world.name}". '
        f'{world.description}'.rstrip(),
        "",
        "Its state is a database. The initial state below holds every table's rows at the start of the episode; the "
        "state description gives each table's columns, those that identify a row first.",
        "Each tool reads or changes that state as its description says. A tool that writes changes only the rows "
        "it concerns, and every later call sees the change. Answer each call as the real system would: one JSON "
        "object with the records and fields the state holds, never a record or a value it does not hold. A call the "
        'system refuses (an unknown id, a rule of the system broken) is answered {"error": "tool_error", '
        '"message": "<why>"}.',
        f"Tools that change the state: {', '.join(writes) or 'none'}. Tools that only read it: "
        f"{', '.join(reads) or 'none'}.",
        "",
        "Initial state:",
        json.dumps(initial, ensure_ascii=False, sort_keys=True),
    ])
    return {
        "environment_name": world.name,
        "world_model_system_prompt": prompt,
        "action_set_definitions": [{"name": tool.name, "description": tool.description,
                                    "parameters": tool.parameters} for tool in world.tools],
        "state_description": {name: _columns(table) for name, table in world.tables.items()},
        "task_initial_state": initial,
    }


def _columns(table: TableFacts) -> str:
    columns = sorted(table.columns.items(), key=lambda column: column[0] not in table.key)  # the key first
    return "columns: " + ", ".join(f"{name} {kind or 'ANY'}" + (" (identifies the row)" if name in table.key else "")
                                   for name, kind in columns)


def twin_rubric(world: IsolatedWorld, task: ExecTask) -> str:
    """The twin task's verification plan, from the executable task's reference solution and answer: the changes
    its solution makes (the calls of tools that write) and what its answer says."""
    lines = [f"The agent must call `{call.tool}` with {json.dumps(call.arguments, ensure_ascii=False)}."
             for call in task.reference if call.tool in world.tools and world.tools[call.tool].writes]
    if task.rubric:
        lines.append(task.rubric)
    lines.append(f"A correct final answer says what this one says: {task.answer}")
    return "\n".join(lines)


def task_line(task: Task) -> dict[str, Any]:
    """``task`` (with its twin's verification plan) in the published task format, its instruction unchanged."""
    return {"task_id": task.task_id, "task_scenario_name": task.scenario, "agent_instruction": task.instruction,
            "env_name": task.env_name, "difficulty_level": task.difficulty,
            "verification_plan": task.verification_plan}


def write_dataset(worlds: Sequence[WorldFacts], tasks: Sequence[Task], out: Path) -> int:
    """The twins of ``worlds`` and their ``tasks`` as an OccuBench data folder in ``out`` (configs, tasks,
    scenarios); how many tasks. Each config's file is named after its world, whose name must be a plain one (the
    boundary accepted no other)."""
    (out / CONFIG_DIR).mkdir(parents=True, exist_ok=True)
    for world in worlds:
        write_atomic(out / CONFIG_DIR / f"{path_name(world.name)}.json",
                     json.dumps(twin_config(world), ensure_ascii=False, indent=1).encode())
    write_atomic(out / TASKS_FILE, b"".join(dumps_line(task_line(task)) for task in tasks))
    scenarios = {task.scenario: {"task_scenario_name": task.scenario, "category": task.category,
                                 "domain": task.domain} for task in tasks}
    write_atomic(out / SCENARIOS_FILE, b"".join(dumps_line(scenario) for scenario in scenarios.values()))
    return len(tasks)
