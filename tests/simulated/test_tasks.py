from __future__ import annotations

import collections
from pathlib import Path

import pytest

from occubench.errors import ConfigError
from occubench.simulated import load_tasks


def test_real_data_joins_every_task_with_its_scenario(shared_data: Path) -> None:
    tasks = load_tasks(shared_data / "eval_benchmark_solvable.jsonl", shared_data / "task_scenario_all_pool.jsonl")
    assert len(tasks) == 382
    # The pool lists 100 scenarios; the 382 solvable tasks draw on 98 of them.
    assert len({t.scenario for t in tasks}) == 98
    assert len({t.category for t in tasks}) == 10
    assert len({t.domain for t in tasks}) == 65
    assert collections.Counter(t.difficulty for t in tasks) == {1: 108, 2: 129, 3: 145}


def test_small_data(small_data: Path) -> None:
    tasks = load_tasks(small_data / "eval_benchmark_solvable.jsonl", small_data / "task_scenario_all_pool.jsonl")
    assert [t.task_id for t in tasks] == [1, 2, 3]
    assert tasks[0].category == "Healthcare & Life Sciences" and tasks[0].domain == "Pharmacy"
    assert tasks[0].solution_plan and tasks[1].solution_plan is None


@pytest.mark.parametrize("line, message", [
    ("{not json", r"eval_benchmark_solvable\.jsonl:4: invalid JSON"),
    ('{"task_id": 9}', r"eval_benchmark_solvable\.jsonl:4: missing key\(s\) task_scenario_name"),
    ('{"task_id": 1, "task_scenario_name": "Prescription Refill Review", "agent_instruction": "x", '
     '"env_name": "e", "difficulty_level": 1}', r":4: task_id 1 repeats line 1"),
    ('{"task_id": 9, "task_scenario_name": "Nope", "agent_instruction": "x", "env_name": "e", '
     '"difficulty_level": 1}', r":4: scenario 'Nope' is not in"),
    ("[1, 2]", r":4: expected a JSON object"),
    *((f'{{"task_id": 9, "task_scenario_name": "Prescription Refill Review", "agent_instruction": "x", '
       f'"env_name": "{name}", "difficulty_level": 1}}', r":4: env_name must be a file name, not a path")
      for name in ("../../outside", "/etc/passwd", "..", "a\\\\b")),
])
def test_bad_task_lines_name_file_and_line(small_data: Path, line: str, message: str) -> None:
    eval_data = small_data / "eval_benchmark_solvable.jsonl"
    eval_data.write_text(eval_data.read_text() + line + "\n")
    with pytest.raises(ConfigError, match=message):
        load_tasks(eval_data, small_data / "task_scenario_all_pool.jsonl")


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found: .*pool.jsonl"):
        load_tasks(tmp_path / "tasks.jsonl", tmp_path / "pool.jsonl")
