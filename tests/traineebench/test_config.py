"""Trainee-Bench's configs load as published, and a malformed one is a clear error naming the file and the place."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from occubench.errors import ConfigError
from occubench.traineebench.config import FAMILY_NAMES, DayEntry, ScenarioEntry, TaskEntry, load_config, paper_days

TASK = {"name": "Transaction Data Review", "arguments": {"num_normal_transactions": 4, "num_abnormal_transactions": 2},
        "deadline": "2025-10-01T20:00:00"}


def _config(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "traineebench_config.json"
    path.write_text(json.dumps(document))
    return path


def test_a_config_in_the_published_shape_loads(tmp_path: Path) -> None:
    days = [{"name": f"day_{d}", "tasks": [TASK, {**TASK, "name": "KB Link Fix",
                                                  "arguments": {"task_params": {"difficulty": "easy"}}}]}
            for d in (1, 2)]
    config = load_config(_config(tmp_path, {"scenarios": [{"name": "scenario_x", "days": days}], "version": "Ver.1",
                                            "datetime": "2026-01-13T17:15:02"}))
    [scenario] = config.scenarios
    assert (scenario.name, [day.name for day in scenario.days], config.version) == ("scenario_x",
                                                                                     ["day_1", "day_2"], "Ver.1")
    first = scenario.days[0].tasks[0]
    assert (first.family, dict(first.arguments), first.deadline) == (
        "Transaction Data Review", TASK["arguments"], datetime(2025, 10, 1, 20))
    assert len(FAMILY_NAMES) == 11


@pytest.mark.parametrize(("change", "says"), [
    (lambda d: d["scenarios"][0]["days"][0]["tasks"][1].update(name="Coffee Run"),
     "scenarios[0].days[0].tasks[1].name: unknown task family 'Coffee Run'"),
    (lambda d: d["scenarios"][0]["days"][0]["tasks"][0].update(deadline="tomorrow"),
     "scenarios[0].days[0].tasks[0].deadline: not an ISO date"),
    (lambda d: d["scenarios"][0]["days"][0]["tasks"][0].update(arguments=[1, 2]),
     "scenarios[0].days[0].tasks[0].arguments: expected an object, found list"),
    (lambda d: d["scenarios"][0]["days"][0].pop("tasks"), "scenarios[0].days[0].tasks: missing"),
    (lambda d: d["scenarios"][0].update(name=5), "scenarios[0].name: expected str, found int"),
    (lambda d: d.update(scenarios=[]), "scenarios: no scenario"),
])
def test_a_malformed_config_names_its_file_and_place(tmp_path: Path, change: Callable[[dict], object],
                                                     says: str) -> None:
    document = {"scenarios": [{"name": "s", "days": [{"name": "day_1", "tasks": [TASK, dict(TASK)]}]}]}
    change(document)
    path = _config(tmp_path, document)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert str(path) in str(raised.value) and says in str(raised.value)


def test_a_file_that_is_not_json_is_an_error_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(b"\xff\xfe{" + b"[" * 100_000)
    with pytest.raises(ConfigError, match="not JSON"):
        load_config(path)


def test_every_family_the_configs_name_is_implemented_under_that_name() -> None:
    from occubench.traineebench.families import family

    assert {name: family(name).name for name in FAMILY_NAMES} == {name: name for name in FAMILY_NAMES}


def test_the_paper_s_day_two_draws_new_arguments_for_the_same_tasks_from_the_seed() -> None:
    first = DayEntry("day_1", (TaskEntry("Transaction Data Review", {"num_normal_transactions": 3,
                                                                      "num_abnormal_transactions": 2},
                                         datetime(2025, 10, 1, 20)),
                               TaskEntry("Website Monitor", {}, datetime(2025, 10, 1, 20))))
    scenario = ScenarioEntry("s", (first, DayEntry("day_2", ())))
    drawn = paper_days(scenario, 3)
    assert drawn.days[0] == first and [d.name for d in drawn.days] == ["day_1", "day_2"]
    assert [(t.family, t.deadline) for t in drawn.days[1].tasks] == [(t.family, t.deadline) for t in first.tasks]
    assert drawn == paper_days(scenario, 3)
    assert len({json.dumps(paper_days(scenario, seed).days[1].tasks[0].arguments, sort_keys=True)
                for seed in range(20)}) > 1  # drawn anew, not copied
