"""``occubench synth simulated`` end to end against the loopback server scripted to play every synthesis role: a data
folder that ``occubench run`` takes unchanged, a malformed stage answer asked again, a task unsolvable until one
repair, a trivial task dropped, and a synthesis stopped by a failing endpoint resumed without repeating a request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from occubench import RunConfig, run
from occubench.cli import main
from occubench.errors import ConfigError
from occubench.synth.simulated.config import SimulatedSynthConfig
from occubench.synth.simulated.pipeline import synthesize
from occubench.testing import MockLLMServer
from occubench.testing.server import make_scripted_responder

# The published data's keys and value types (checked against the real data below when it is present).
TASK_TYPES = {"task_id": int, "difficulty_level": int, "task_scenario_name": str, "agent_instruction": str,
              "env_name": str, "verification_plan": str}
POOL_TYPES = {"category": str, "domain": str, "task_scenario_name": str}
CONFIG_TYPES = {"environment_name": str, "world_model_system_prompt": str, "action_set_definitions": list,
                "state_description": dict, "task_initial_state": dict}

SCRIPT = {"trivial": [2], "unsolvable": [3], "malformed": ["environment"]}
QUIET = Console(quiet=True)


def settings(server: MockLLMServer, out: Path, **extra: Any) -> SimulatedSynthConfig:
    return SimulatedSynthConfig.create({
        "scenario": "Pharmacy discharge reconciliation", "category": "Healthcare", "out": str(out),
        "synth_model": "synth-m", "agent_model": ["agent-m"], "world_model": "world-m", "base_url": server.base_url,
        "api_key": "k", "tasks_per_scenario": 3, "runs": 2, "date": "2026-11-23", **extra})


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def types_of(row: dict[str, Any]) -> dict[str, type]:
    return {key: type(value) for key, value in row.items()}


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("synth") / "out"
    with MockLLMServer(make_scripted_responder(synth=SCRIPT)) as server:
        report = synthesize(settings(server, out), console=QUIET)
        requests = list(server.requests)
    return out, report, requests


def test_the_output_is_a_data_folder_in_the_published_layout_that_run_takes(synthesized: Any, tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture) -> None:
    out, report, _ = synthesized
    tasks = lines(out / "eval_benchmark_solvable.jsonl")
    assert [task["task_id"] for task in tasks] == [1, 2] and report.kept == 2
    assert all(types_of(task) == TASK_TYPES and list(task) == list(TASK_TYPES) for task in tasks)
    assert [types_of(line) for line in lines(out / "task_scenario_all_pool.jsonl")] == [POOL_TYPES]
    configs = sorted((out / "world_model_configs").glob("env_*.json"))
    assert {path.stem for path in configs} == {task["env_name"] for task in tasks}
    for path in configs:
        config = json.loads(path.read_text(encoding="utf-8"))
        assert types_of(config) == CONFIG_TYPES and config["environment_name"] == path.stem
        assert set(config["state_description"]) == set(config["task_initial_state"])
    assert main(["data", "verify", "--dir", str(out)]) == 0
    assert "its own data_manifest.json" in capsys.readouterr().out

    with MockLLMServer() as server:
        summary = run(RunConfig.create({"data_dir": str(out), "agent_model": "a", "world_model": "w",
                                        "base_url": server.base_url, "api_key": "k", "output_dir": str(tmp_path)}),
                      console=QUIET)
    assert summary.evaluated == 2 and summary.errors == 0


def test_a_malformed_stage_answer_is_asked_again_with_its_problem(synthesized: Any) -> None:
    _, report, requests = synthesized
    environment = report.stages["environment"]
    assert (environment["asked"], environment["first_try"], environment["reasked"]) == (3, 0, 3)
    reasks = [r for r in requests if r["messages"][0]["content"].startswith("Stage: environment")
              and len(r["messages"]) == 4]
    assert len(reasks) == 3 and all("has no <output> tag" in r["messages"][-1]["content"] for r in reasks)
    assert report.stages["task"]["first_try"] == 3


def test_a_task_unsolvable_with_its_plan_is_repaired_once_then_kept(synthesized: Any) -> None:
    _, report, _ = synthesized
    task = next(t for t in report.tasks if t["candidate"] == 3)
    assert task["status"] == "kept" and task["task_id"] == 2
    assert [r["diagnosis"] for r in task["repairs"]] == ["plan_wrong"]
    first, second = task["rounds"]
    assert first["with_plan"]["agent-m"] == {"passed": 0, "evaluated": 2, "errors": 0}
    assert second["with_plan"]["agent-m"] == {"passed": 2, "evaluated": 2, "errors": 0}
    assert task["difficulty"] == 3  # never passed without the plan


def test_a_trivial_task_is_dropped_with_its_reason(synthesized: Any) -> None:
    out, report, _ = synthesized
    task = next(t for t in report.tasks if t["candidate"] == 2)
    assert task["status"] == "trivial" and "passed 100% of runs without the plan" in task["reason"]
    assert task["without_plan"] == {"agent-m": 1.0} and not task["repairs"]
    assert "Case 2" not in (out / "eval_benchmark_solvable.jsonl").read_text(encoding="utf-8")
    saved = json.loads((out / "synthesis" / "report.json").read_text(encoding="utf-8"))
    assert saved["counts"] == {"kept": 2, "trivial": 1, "unsolvable": 0, "invalid": 0, "unfaithful": 0,
                               "incomplete": 0}
    assert saved["tokens_per_kept_task"] == saved["tokens"] / 2 > 0


def test_an_unrepairable_task_is_dropped_after_its_repair_rounds(tmp_path: Path) -> None:
    with MockLLMServer(make_scripted_responder(synth={"unrepairable": [1]})) as server:
        report = synthesize(settings(server, tmp_path / "out", tasks_per_scenario=1, repair_rounds=1), console=QUIET)
    (task,) = report.tasks
    assert task["status"] == "unsolvable" and task["reason"].endswith("after 1 repair(s)")
    assert report.kept == 0 and lines(tmp_path / "out" / "eval_benchmark_solvable.jsonl") == []


def test_a_synthesis_stopped_by_a_failing_endpoint_resumes_without_repeating_a_request(tmp_path: Path) -> None:
    out = tmp_path / "out"
    # First the agent's model is missing (404) on its endpoint: every calibration episode ends in an error, which
    # is recorded as such, not as a failed task.
    with MockLLMServer(make_scripted_responder(synth=SCRIPT), models=["synth-m", "world-m"]) as server:
        first = synthesize(settings(server, out, skip_preflight=True), console=QUIET)
        answered = {json.dumps(r, sort_keys=True) for r in server.requests if r["model"] != "agent-m"}  # not 404
    assert first.kept == 0 and {t["status"] for t in first.tasks} == {"incomplete"}
    assert "run the same command again" in first.tasks[0]["reason"]
    with MockLLMServer(make_scripted_responder(synth=SCRIPT)) as server:
        second = synthesize(settings(server, out, skip_preflight=True), console=QUIET)
        again = [r for r in server.requests if json.dumps(r, sort_keys=True) in answered]
        stage_requests = [r for r in server.requests if r["messages"][0]["content"].startswith("Stage: ")
                          and not r["messages"][0]["content"].startswith("Stage: repair")]
    assert again == [] and stage_requests == []
    assert second.kept == 2 and all(s["asked"] == 0 for name, s in second.stages.items() if name != "repair")


def test_the_command_prints_the_report_and_bad_settings_exit_2(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture) -> None:
    with MockLLMServer(make_scripted_responder(synth={"trivial": [1]})) as server:
        common = ["synth", "simulated", "--out", str(tmp_path / "out"), "--synth-model", "s", "--agent-model", "a",
                  "--world-model", "w", "--base-url", server.base_url, "--api-key", "sk-secret-123"]
        assert main([*common, "--scenario", "KYC review", "--category", "Finance", "--tasks-per-scenario", "2",
                     "--runs", "1"]) == 0
        printed = capsys.readouterr()
        assert "#1 trivial: the weakest agent (a)" in printed.out and "1 task(s) written" in printed.out
        assert main([*common, "--scenario", "KYC review"]) == 2
        assert "--category is required" in capsys.readouterr().err
        assert main([*common, "--scenario", "x", "--category", "y", "--tasks-per-scenario", "17"]) == 2
        assert "--tasks-per-scenario" in capsys.readouterr().err
    on_disk = "".join(p.read_text(encoding="utf-8", errors="replace") for p in (tmp_path / "out").rglob("*")
                      if p.is_file())
    assert "sk-secret-123" not in on_disk


def test_scenarios_come_from_a_file_or_are_generated_without_duplicates(tmp_path: Path) -> None:
    pool = tmp_path / "pool.jsonl"
    pool.write_text('{"category": "Finance", "domain": "Banking", "task_scenario_name": "KYC Review"}\n'
                    '{"category": "Finance", "domain": "Banking", "task_scenario_name": "kyc  review"}\n',
                    encoding="utf-8")
    with MockLLMServer(make_scripted_responder()) as server:
        from_file = synthesize(SimulatedSynthConfig.create({**settings(server, tmp_path / "a").model_dump(),
                                                      "scenario": None, "scenarios_file": str(pool),
                                                      "tasks_per_scenario": 1}), console=QUIET)
        made = synthesize(SimulatedSynthConfig.create({**settings(server, tmp_path / "b").model_dump(),
                                                 "scenario": None, "generate_scenarios": 2,
                                                 "tasks_per_scenario": 1}), console=QUIET)
        pool.write_text('{"category": "Finance", "task_scenario_name": "KYC Review"}\n', encoding="utf-8")
        with pytest.raises(ConfigError, match=r"pool.jsonl:1: expected task_scenario_name, category and domain"):
            synthesize(SimulatedSynthConfig.create({**settings(server, tmp_path / "c").model_dump(), "scenario": None,
                                              "scenarios_file": str(pool)}), console=QUIET)
    assert [t["scenario"] for t in from_file.tasks] == ["KYC Review"]
    assert [t["scenario"] for t in made.tasks] == ["Healthcare Workflow 1", "Healthcare Workflow 2"]


def test_the_published_data_has_the_keys_and_types_the_output_copies(shared_data: Path) -> None:
    assert {tuple(types_of(t).items()) for t in lines(shared_data / "eval_benchmark_solvable.jsonl")} == \
        {tuple(TASK_TYPES.items())}
    assert {tuple(types_of(p).items()) for p in lines(shared_data / "task_scenario_all_pool.jsonl")} == \
        {tuple(POOL_TYPES.items())}
    for path in sorted((shared_data / "world_model_configs").glob("*.json"))[:50]:
        assert types_of(json.loads(path.read_text(encoding="utf-8"))) == CONFIG_TYPES


def test_every_calibration_agent_runs_each_task_and_the_last_is_the_weakest(tmp_path: Path) -> None:
    with MockLLMServer(make_scripted_responder(synth={"trivial": [1]})) as server:
        report = synthesize(settings(server, tmp_path / "out", tasks_per_scenario=2, runs=1,
                                     agent_model=["strong-m", "weak-m"]), console=QUIET)
        first_stage = next(i for i, r in enumerate(server.requests) if r["messages"][0]["content"].startswith("Stage"))
        probed = {r["model"] for r in server.requests[:first_stage]}
    trivial, kept = report.tasks
    assert set(kept["with_plan"]) == set(kept["without_plan"]) == {"strong-m", "weak-m"}
    assert trivial["status"] == "trivial" and "the weakest agent (weak-m)" in trivial["reason"]
    assert {"strong-m", "weak-m"} <= probed  # both checked before anything is paid for
