"""A twin's config is derived from the world folder alone, the same every time, and runs as any simulated world."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from occubench.cli import main
from occubench.executable.plugin import listed_worlds
from occubench.executable.registry import _WORLDS, load_world
from occubench.simulated.config import WorldModelConfig
from occubench.testing import MockLLMServer
from occubench.twin.derive import CONFIG_DIR, TASKS_FILE, facts_of, twin_config
from tests.conftest import BUILTIN_TASKS, BUILTIN_WORLDS


def test_derive_writes_the_same_published_format_files_every_time(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["twin", "derive", "--out", str(tmp_path / "a")]) == 0
    assert f"{len(BUILTIN_WORLDS)} twin world(s), {BUILTIN_TASKS} task(s)" in capsys.readouterr().out
    assert main(["twin", "derive", "--out", str(tmp_path / "b")]) == 0
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert len(files) == len(BUILTIN_WORLDS) + 2  # a config per world, the tasks and the scenarios
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)
    for path in (tmp_path / "a" / CONFIG_DIR).iterdir():
        config = WorldModelConfig.from_dict(json.loads(path.read_text()), str(path))
        world = load_world(config.name)
        # The tools are the world's, with their schemas; the initial state is its seeded database.
        assert [spec.name for spec in config.specs] == list(world.tools)
        assert [spec.parameters for spec in config.specs] == [tool.spec.parameters for tool in world.tools.values()]
        assert config.initial_state == {table: content["rows"] for table, content in world.snapshot().items()}
        assert f'the executable world "{world.name}"' in config.system_prompt
    tasks = [json.loads(line) for line in (tmp_path / "a" / TASKS_FILE).read_text().splitlines()]
    instructions = {f"{w.name}/{t.id}": t.instruction for w in listed_worlds(None, False) for t in w.tasks}
    assert {task["task_id"]: task["agent_instruction"] for task in tasks} == instructions  # unchanged


def test_the_twins_run_as_an_occubench_data_folder(tmp_path: Path) -> None:
    assert main(["twin", "derive", "--out", str(tmp_path / "twins")]) == 0
    with MockLLMServer() as server:
        code = main(["run", "--suite", "occubench", "--data-dir", str(tmp_path / "twins"), "--world-model", "w",
                     "--agent-model", "a", "--base-url", server.base_url, "--limit", "3", "--output-dir",
                     str(tmp_path / "runs"), "--run-name", "r"])
    records = [json.loads(line) for line in (tmp_path / "runs" / "r" / "results.jsonl").read_text().splitlines()]
    assert code == 0 and len(records) == 3 and all(r["status"] == "ok" for r in records)


def test_a_world_from_outside_is_derived_from_what_its_sandbox_worker_reports(tmp_path: Path) -> None:
    shutil.copytree(_WORLDS / "insurance_claims", tmp_path / "worlds" / "insurance_claims",
                    ignore=shutil.ignore_patterns("__pycache__"))
    [outside] = listed_worlds(str(tmp_path / "worlds"), False)
    [builtin] = [w for w in listed_worlds(None, False) if w.name == "insurance_claims"]
    assert twin_config(facts_of(outside.described)) == twin_config(facts_of(builtin.described))
