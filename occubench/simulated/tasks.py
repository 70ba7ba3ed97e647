"""Loading the OccuBench tasks and joining them with their scenario's category and domain."""

from __future__ import annotations

import json
from pathlib import Path

from occubench.core.task import Task
from occubench.errors import ConfigError
from occubench.util.jsonl import iter_jsonl

_TASK_KEYS = ("task_id", "task_scenario_name", "agent_instruction", "env_name", "difficulty_level")


def _check_texts(row: dict, where: str) -> None:
    for key in ("agent_instruction", "env_name", "task_scenario_name"):
        if not isinstance(row[key], str):
            raise ConfigError(f"{where}: {key} must be a string, got {type(row[key]).__name__}")
    name = row["env_name"]  # it names the world's config file: never a path out of the data folder
    if name in ("", ".", "..") or any(c in name for c in "/\\\0"):
        raise ConfigError(f"{where}: env_name must be a file name, not a path: {json.dumps(name)[:80]}")
    for key in ("verification_plan", "solution_plan", "plan"):
        if not isinstance(row.get(key), (str, type(None))):
            raise ConfigError(f"{where}: {key} must be a string, got {type(row[key]).__name__}")


def load_scenarios(pool_path: Path) -> dict[str, tuple[str, str]]:
    """Scenario name → (category, domain)."""
    scenarios: dict[str, tuple[str, str]] = {}
    for number, row in iter_jsonl(pool_path):
        try:
            scenarios[str(row["task_scenario_name"])] = (str(row["category"]), str(row["domain"]))
        except KeyError as exc:
            raise ConfigError(f"{pool_path}:{number}: missing key {exc.args[0]!r}") from None
    return scenarios


def load_tasks(eval_data: Path, scenario_pool: Path) -> list[Task]:
    """The tasks of ``eval_data`` in file order; every scenario must be in ``scenario_pool``."""
    scenarios = load_scenarios(scenario_pool)
    tasks: list[Task] = []
    seen: dict[int | str, int] = {}
    for number, row in iter_jsonl(eval_data):
        where = f"{eval_data}:{number}"
        missing = [key for key in _TASK_KEYS if key not in row]
        if missing:
            raise ConfigError(f"{where}: missing key(s) {', '.join(missing)}")
        task_id = row["task_id"]
        if not isinstance(task_id, (int, str)) or isinstance(task_id, bool):
            raise ConfigError(f"{where}: task_id must be an integer or a string")
        if task_id in seen:
            raise ConfigError(f"{where}: task_id {task_id} repeats line {seen[task_id]}")
        seen[task_id] = number
        scenario = str(row["task_scenario_name"])
        if scenario not in scenarios:
            raise ConfigError(f"{where}: scenario {scenario!r} is not in {scenario_pool}")
        difficulty = row["difficulty_level"]
        if isinstance(difficulty, str) and difficulty.strip().isdigit():
            difficulty = int(difficulty)
        if not isinstance(difficulty, int) or isinstance(difficulty, bool):
            raise ConfigError(f"{where}: difficulty_level must be an integer, got {json.dumps(difficulty)[:40]}")
        _check_texts(row, where)
        category, domain = scenarios[scenario]
        tasks.append(Task(
            task_id=task_id, instruction=str(row["agent_instruction"]), scenario=scenario, category=category,
            domain=domain, difficulty=difficulty, env_name=str(row["env_name"]),
            verification_plan=str(row.get("verification_plan") or ""),
            solution_plan=row.get("solution_plan") or row.get("plan") or None,
        ))
    return tasks
