"""Twins of AWM worlds: derived from the scenario's tools and seeded rows (as its worker lists and reads them), and
run with every call made on the real AWM instance too."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from occubench import load_results
from occubench.awm.app import statements
from occubench.awm.data import FILES, load_set
from occubench.awm.plugin import runnable_worlds
from occubench.cli import main
from occubench.sandbox import Provider
from occubench.simulated.config import WorldModelConfig
from occubench.testing import MockLLMServer
from occubench.twin.derive import CONFIG_DIR
from tests.awm.conftest import data, sample  # noqa: F401 - the AWM sample's fixtures, used by name
from tests.awm.test_service import PURE

#: A moment as SQLite writes it: rows seeded relative to the moment differ between the twin and the real instance.
_MOMENT = re.compile(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?$")


def _timeless(record: dict) -> dict:
    return {key: value for key, value in record.items() if not (isinstance(value, str) and _MOMENT.match(value))}


def _twin_run(folder: Path, out: Path, *args: str) -> int:
    with MockLLMServer() as server:
        return main(["run", "--suite", "twin", "--twin-of", "awm", "--data-dir", str(folder), "--agent-model", "agent",
                     "--world-model", "simulator", "--verifier-model", "judge", "--base-url", server.base_url,
                     "--output-dir", str(out), "--run-name", "r", *args])


def test_each_awm_task_runs_in_its_twin_with_every_call_shadowed(data: Path, tmp_path: Path,  # noqa: F811
                                                                 sandbox: Provider) -> None:
    record = {"scenario": "content_platform_1", "task_idx": 0, "verification": {"code": PURE}}
    (data / FILES["pure_verifier"]).write_text(json.dumps(record) + "\n")
    assert _twin_run(data, tmp_path / "out", "--task-ids", "content_platform_1/0", "code_hosting_2/3") == 0
    results = {r.task_id: r for r in load_results(tmp_path / "out" / "r" / "results.jsonl")}
    assert set(results) == {"content_platform_1/0", "code_hosting_2/3"} and all(r.ok for r in results.values())
    # The real verdict is the AWM world's own, decided as a plain AWM run decides it; the twin's is the rubric's.
    real = {task: r.verdict_details["executable"] for task, r in results.items()}
    assert real["content_platform_1/0"]["verification_mode"] == "pure_code"
    assert real["code_hosting_2/3"]["verification_mode"] == "judge"
    assert all(r.verdict_details["flipped"] == (r.is_correct != real[task]["is_correct"])
               for task, r in results.items())
    # Every call was answered by the simulator (what the agent saw) and made on the real instance. The mock's world
    # model knows nothing of AWM worlds: it names a record the real world does not hold, found without a judge.
    calls = [call for r in results.values() for call in r.env_info["twin_calls"]]
    assert len(calls) == 4 and all("error" not in call["real"] for call in calls)
    assert all(call["agree"] is False and call["kind"] == "invented_records" for call in calls)
    assert all(call.observation == twin["simulated"] for r in results.values()
               for call, twin in zip(r.tool_calls, r.env_info["twin_calls"], strict=True))

    scenario = load_set(data).scenarios["content_platform_1"]
    [config_file] = (tmp_path / "cache" / "twins").glob(f"*/{CONFIG_DIR}/content_platform_1.json")
    config = WorldModelConfig.from_dict(json.loads(config_file.read_text()), str(config_file))
    # Its tools are the ones the scenario's worker lists, schemas and all.
    [world] = [w for w in runnable_worlds(load_set(data), sandbox, Console(quiet=True)) if w.name == scenario.name]
    environment = world.environment()
    try:
        assert [(s.name, s.description, s.parameters) for s in config.specs] == \
            [(s.name, s.description, s.parameters) for s in environment.tools()]
    finally:
        environment.close()
    # Its initial state holds a row per seed statement, in the schema's tables, as the real instance holds them.
    inserts = [row for table in scenario.seed["tables"] for row in statements(table["insert_statements"])]
    assert sum(map(len, config.initial_state.values())) == len(inserts) > 100
    assert set(config.initial_state) >= {table["name"] for table in scenario.schema["tables"]}
    [shown] = [call["real"]["channel"] for call in calls if call["tool"] == "get_channel_by_id"]
    [seeded] = [row for row in config.initial_state["channels"] if row["id"] == shown["id"]]
    assert _timeless(seeded) == _timeless(shown) and len(_timeless(shown)) >= 4


def test_the_twin_of_awm_needs_the_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--suite", "twin", "--twin-of", "awm", "--agent-model", "a", "--world-model", "w",
                 "--output-dir", str(tmp_path)]) == 2
    assert "occubench data download awm" in " ".join(capsys.readouterr().err.split())
    with pytest.raises(SystemExit) as exited:
        main(["run", "--suite", "twin", "--twin-of", "simulated", "--world-model", "w"])
    assert exited.value.code == 2
