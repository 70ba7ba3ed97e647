"""``python -m occubench.evaluate``: each command of the OccuBench README with its flags as printed, run as a user
runs it (a working folder holding ``data/``, a new process) against the mock server; the results folder as the README
documents it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from occubench.store import read_results
from occubench.testing import MockLLMServer
from tests.conftest import run_folder

#: The README's commands, flags and values as printed. Its endpoints (DashScope, a local vLLM) are the mock's here;
#: the commands without --base-url reach it through $OPENAI_BASE_URL, as they would reach OpenAI.
MOCK = "MOCK_BASE_URL"
COMMANDS = {
    "basic": ["--agent-model", "gpt-4o", "--world-model", "gpt-4o", "--api-key", "YOUR_API_KEY", "--env-mode", "E0",
              "--max-workers", "8"],
    "faults": ["--agent-model", "gpt-4o", "--world-model", "gpt-4o", "--api-key", "YOUR_API_KEY", "--env-mode", "E2",
               "--fault-count", "2", "--fault-duration", "2"],
    "single": ["--agent-model", "gpt-4o", "--world-model", "gpt-4o", "--api-key", "YOUR_API_KEY", "--task-ids", "11",
               "--max-workers", "1"],
    "dashscope": ["--agent-model", "qwen-plus", "--world-model", "qwen-plus", "--api-key", "YOUR_DASHSCOPE_KEY",
                  "--base-url", MOCK],
    "vllm": ["--agent-model", "meta-llama/Llama-3-70b", "--world-model", "meta-llama/Llama-3-70b", "--base-url", MOCK],
    "debug": ["--agent-model", "qwen3.5-plus", "--world-model", "qwen3.5-plus", "--api-key", "YOUR_API_KEY",
              "--base-url", MOCK, "--task-ids", "11", "--max-workers", "1", "--debug"],
}
#: The run folder each makes: results/{agent}__{world}__{mode}[__fc_fd], then the short hash of its settings.
FOLDERS = {"basic": "gpt-4o__gpt-4o__E0", "faults": "gpt-4o__gpt-4o__E2__fc2_fd2", "single": "gpt-4o__gpt-4o__E0",
           "dashscope": "qwen-plus__qwen-plus__E0", "vllm": "meta-llama_Llama-3-70b__meta-llama_Llama-3-70b__E0",
           "debug": "qwen3.5-plus__qwen3.5-plus__E0"}
#: A result line's fields, in the README's order.
FIELDS = ["task_id", "task_scenario_name", "category", "domain", "difficulty_level", "agent_model", "world_model",
          "env_mode", "fault_count", "fault_duration", "with_plan", "is_correct", "feedback", "step_count",
          "trajectory"]
#: What the README's debug output shows of each role.
DEBUG_TAGS = (r"\[AGENT\] Step 1, messages=\d+", r"\[AGENT\] finish_reason=\w+", r"\[AGENT\] Tool call: \w+\(",
              r"\[LWM\] Simulating: \w+, history_len=0", r"\[LWM\] Observation: \{",
              r"\[VERIFIER\] Votes: \d TRUE, \d FALSE", r"\[VERIFIER\] Vote 1: correct=(True|False), feedback=")
#: Task 11 (the README's debug task) and a few others of the real data: the commands run on every task of ./data.
TASKS = {"11", "323", "296", "310"}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.conftest import SHARED_DATA

    if not (SHARED_DATA / "eval_benchmark_solvable.jsonl").is_file():
        pytest.skip(f"needs the OccuBench data at {SHARED_DATA} (the repository's ../shared/occubench-data)")
    root = tmp_path_factory.mktemp("readme")
    data = root / "data"
    (data / "world_model_configs").mkdir(parents=True)
    lines = [line for line in (SHARED_DATA / "eval_benchmark_solvable.jsonl").read_text().splitlines()
             if str(json.loads(line)["task_id"]) in TASKS]
    (data / "eval_benchmark_solvable.jsonl").write_text("\n".join(lines) + "\n")
    shutil.copy(SHARED_DATA / "task_scenario_all_pool.jsonl", data)  # copies: a data folder may hold no link
    for line in lines:
        shutil.copy(SHARED_DATA / "world_model_configs" / f"{json.loads(line)['env_name']}.json",
                    data / "world_model_configs")
    return root


def evaluate(workdir: Path, server: MockLLMServer, args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OCCUBENCH_"))}
    env["OPENAI_BASE_URL"] = server.base_url
    return subprocess.run([sys.executable, "-m", "occubench.evaluate", *(server.base_url if a == MOCK else a
                                                                          for a in args)],
                          cwd=workdir, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_command_of_the_readme_runs_as_printed(workdir: Path, name: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "data").symlink_to(workdir / "data")
    with MockLLMServer() as server:
        done = evaluate(work, server, COMMANDS[name])
        assert done.returncode == 0, done.stderr[-3000:]
        assert server.requests, "the command reached no endpoint"
        assert {r["model"] for r in server.requests} == {COMMANDS[name][1]}  # agent and world model, as given
        folder = run_folder(work / "results", FOLDERS[name])
        records = read_results(folder / "results.jsonl")
        expected = {"11"} if "--task-ids" in COMMANDS[name] else TASKS
        assert {str(r["task_id"]) for r in records} == expected
        for record in records:
            assert list(record)[:len(FIELDS)] == FIELDS
            assert record["status"] == "ok" and isinstance(record["is_correct"], bool)
            assert record["trajectory"].startswith("[Agent Action]: Call tool `")
        mode = COMMANDS[name][COMMANDS[name].index("--env-mode") + 1] if "--env-mode" in COMMANDS[name] else "E0"
        assert {(r["env_mode"], r["fault_count"], r["fault_duration"]) for r in records} == (
            {("E2", 2, 2)} if mode == "E2" else {("E0", 0, 0)})
        files = {path.name for path in folder.iterdir()}
        assert {"args.json", "results.jsonl"} <= files and ("debug.log" in files) == ("--debug" in COMMANDS[name])
        args = json.loads((folder / "args.json").read_text())
        assert args["agent_model"] == COMMANDS[name][1]
        assert not any(key in text for key in ("YOUR_API_KEY", "YOUR_DASHSCOPE_KEY")
                       for text in (done.stdout, done.stderr, *(p.read_text() for p in folder.iterdir())))

        if "--debug" in COMMANDS[name]:
            log = (folder / "debug.log").read_text()
            for tag in DEBUG_TAGS:
                assert re.search(tag, log), tag
            assert "[AGENT] Step 1" in done.stderr  # printed to the terminal as well
        if name == "basic":  # the README: "if you re-run the same command, it will skip already-completed tasks"
            asked = len(server.requests)
            again = evaluate(work, server, COMMANDS[name])
            assert again.returncode == 0, again.stderr[-3000:]
            assert len(server.requests) == asked
            assert read_results(folder / "results.jsonl") == records
