"""The twin of an executable world: the LLM-simulated world config a user would have written for it.

Derived from the world folder alone — its tools, its description, its seeded database — with no model, so the same
folder always gives the same config, in the published format (:class:`~occubench.simulated.config.WorldModelConfig`):
the tools' schemas as the actions, a system prompt describing the system and its state, each table's columns as the
state description, the seeded rows as the initial state. :func:`write_dataset` writes the twins of a set of worlds
as an OccuBench data folder, which ``occubench run --suite occubench --data-dir`` runs as any simulated world.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from occubench.executable.isolated import IsolatedWorld
from occubench.executable.world import ExecTask
from occubench.sandbox.boundary import path_name
from occubench.util.jsonl import dumps_line, write_atomic

#: The config's task file, scenario pool and config folder names, as the published data has them.
TASKS_FILE, SCENARIOS_FILE, CONFIG_DIR = "eval_benchmark_solvable.jsonl", "task_scenario_all_pool.jsonl", \
    "world_model_configs"


def twin_config(world: Mapping[str, Any]) -> dict[str, Any]:
    """The twin of the world ``world`` describes (:func:`~occubench.executable.isolated.describe`, as a sandbox
    worker reports it) as a world-model config: a JSON object of the published format."""
    tools = world["tools"]
    writes = [tool["name"] for tool in tools if tool["writes"]]
    reads = [tool["name"] for tool in tools if not tool["writes"]]
    initial = {table: content["rows"] for table, content in world["state"].items()}
    prompt = "\n".join([
        f'You simulate {world["scenario"]}: the system behind the executable world "{world["name"]}". '
        f'{world["description"]}',
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
        "environment_name": world["name"],
        "world_model_system_prompt": prompt,
        "action_set_definitions": [{key: tool[key] for key in ("name", "description", "parameters")}
                                   for tool in tools],
        "state_description": {table: _columns(content) for table, content in world["state"].items()},
        "task_initial_state": initial,
    }


def _columns(table: dict[str, Any]) -> str:
    key = table["key"]
    columns = sorted(table["columns"].items(), key=lambda column: column[0] not in key)  # the key first
    return "columns: " + ", ".join(f"{name} {kind or 'ANY'}" + (" (identifies the row)" if name in key else "")
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


def task_lines(world: IsolatedWorld) -> list[dict[str, Any]]:
    """The world's tasks in the published task format, instructions unchanged."""
    return [{"task_id": f"{world.name}/{task.id}", "task_scenario_name": world.scenario,
             "agent_instruction": task.instruction, "env_name": world.name, "difficulty_level": task.difficulty,
             "verification_plan": twin_rubric(world, task)} for task in world.tasks]


def write_dataset(worlds: Sequence[IsolatedWorld], out: Path) -> int:
    """The twins of ``worlds`` as an OccuBench data folder in ``out`` (configs, tasks, scenarios); how many tasks.
    Each config's file is named after its world, whose name must be a plain one (the boundary accepted no other)."""
    (out / CONFIG_DIR).mkdir(parents=True, exist_ok=True)
    for world in worlds:
        write_atomic(out / CONFIG_DIR / f"{path_name(world.name)}.json",
                     json.dumps(twin_config(world.described), ensure_ascii=False, indent=1).encode())
    tasks = [task for world in worlds for task in task_lines(world)]
    write_atomic(out / TASKS_FILE, b"".join(dumps_line(task) for task in tasks))
    scenarios = {world.scenario: {"task_scenario_name": world.scenario, "category": world.category,
                                  "domain": world.domain} for world in worlds}
    write_atomic(out / SCENARIOS_FILE, b"".join(dumps_line(scenario) for scenario in scenarios.values()))
    return len(tasks)
