"""The evaluation CLI end to end, against loopback servers through the real openai SDK."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from occubench.cli import main as cli_main
from occubench.cli import run as evaluate
from occubench.core.results import RESULT_FIELDS
from occubench.store import read_results
from occubench.testing import MockLLMServer, make_scripted_responder, scripted_responder
from tests.conftest import agent_requests, run_folder, write_small_data

README_FIELDS = ["task_id", "task_scenario_name", "category", "domain", "difficulty_level", "agent_model",
                 "world_model", "env_mode", "fault_count", "fault_duration", "with_plan", "is_correct", "feedback",
                 "step_count", "trajectory"]


def run_cli(*args: str) -> int:
    return evaluate.main(list(args))


def base_args(server: MockLLMServer, data: Path, out: Path, *extra: str) -> list[str]:
    return ["--agent-model", "agent-m", "--world-model", "world-m", "--base-url", server.base_url,
            "--api-key", "sk-test-key-0001", "--data-dir", str(data), "--output-dir", str(out), *extra]


def results(out: Path, run_name: str = "agent-m__world-m__E0") -> list[dict]:
    """The results of the run named ``run_name`` (``--run-name``) or by default ``run_name`` and a hash."""
    named = out / run_name
    return read_results((named if named.is_dir() else run_folder(out, run_name)) / "results.jsonl")


def test_run_writes_the_results_format(small_data: Path, server: MockLLMServer, tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert run_cli(*base_args(server, small_data, out)) == 0
    records = results(out)
    assert sorted(r["task_id"] for r in records) == [1, 2, 3]
    for record in records:
        assert list(record)[:len(RESULT_FIELDS)] == list(RESULT_FIELDS)
        assert list(record)[:len(README_FIELDS)] == README_FIELDS
        assert record["status"] == "ok" and record["error"] is None
        assert (record["agent_model"], record["world_model"], record["env_mode"]) == ("agent-m", "world-m", "E0")
        assert (record["fault_count"], record["fault_duration"], record["with_plan"]) == (0, 0, False)
        assert isinstance(record["is_correct"], bool) and len(record["votes"]) == 3
        assert record["step_count"] == 3 and record["trajectory"].startswith("[Agent Action]: Call tool `")
        assert set(record["usage"]) == {"agent", "world", "verifier"}
        assert record["usage"]["verifier"]["calls"] == 1 and record["usage"]["world"]["calls"] == 2  # votes via n
    task1 = next(r for r in records if r["task_id"] == 1)
    assert (task1["category"], task1["domain"], task1["difficulty_level"]) == ("Healthcare & Life Sciences",
                                                                             "Pharmacy", 1)
    args = json.loads((run_folder(out, "agent-m__world-m__E0") / "args.json").read_text())
    assert args["api_key"] == "<redacted>" and args["agent_model"] == "agent-m"
    assert args["date"] and args["data_paths"]["config_dir"].endswith("world_model_configs")


def test_no_secret_reaches_disk_even_when_the_server_echoes_it(small_data: Path, tmp_path: Path) -> None:
    secret = "sk-live-DO-NOT-LEAK-4242"
    out = tmp_path / "results"
    with MockLLMServer(api_key="the-right-key") as server:  # its 401 message repeats the key it was sent
        code = run_cli(*base_args(server, small_data, out, "--api-key", secret, "--skip-preflight", "--debug",
                                  "--retry-budget", "1"))
    assert code == 1
    records = results(out)
    assert {r["status"] for r in records} == {"error"}
    assert all(r["error"]["kind"] == "request_rejected" and "<redacted>" in r["error"]["message"] for r in records)
    written = list(run_folder(out, "agent-m__world-m__E0").iterdir())
    assert {p.name for p in written} == {"args.json", "results.jsonl", "context.jsonl", "debug.log", "run.lock"}
    for path in written:
        assert secret not in path.read_text(), path


def test_resume_skips_finished_tasks_and_keeps_the_date(small_data: Path, server: MockLLMServer,
                                                        tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert run_cli(*base_args(server, small_data, out, "--task-ids", "1", "--date", "2026-03-01")) == 0
    sent = server.stats.requests
    assert run_cli(*base_args(server, small_data, out, "--task-ids", "1")) == 0
    assert server.stats.requests == sent  # nothing left to do: no preflight, no task
    assert run_cli(*base_args(server, small_data, out)) == 0
    assert sorted(r["task_id"] for r in results(out)) == [1, 2, 3]
    agent_prompts = {r["messages"][0]["content"] for r in agent_requests(server)}
    assert all("2026-03-01" in prompt for prompt in agent_prompts)


def test_interrupted_run_resumes_with_every_task_exactly_once(small_data: Path, server: MockLLMServer,
                                                              tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert run_cli(*base_args(server, small_data, out, "--task-ids", "2")) == 0
    path = run_folder(out, "agent-m__world-m__E0") / "results.jsonl"
    finished = path.read_text()
    path.write_text(finished + '{"task_id": 3, "task_scenario_name": "Inv')  # killed mid-write
    assert run_cli(*base_args(server, small_data, out)) == 0
    records = results(out)
    assert sorted(r["task_id"] for r in records) == [1, 2, 3]
    assert path.read_text().startswith(finished)


def test_infrastructure_errors_are_recorded_then_retried(small_data: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    with MockLLMServer(error_rate=1.0) as down:
        assert run_cli(*base_args(down, small_data, out, "--skip-preflight", "--retry-budget", "0.3")) == 1
    records = results(out)
    assert {(r["status"], r["error"]["kind"], r["is_correct"]) for r in records} == {("error", "infrastructure", None)}
    output = capsys.readouterr()
    assert "3 task(s) not scored, infrastructure error (1, 2, 3)" in output.out
    with MockLLMServer() as healthy:
        assert run_cli(*base_args(healthy, small_data, out)) == 0
    records = results(out)
    assert sorted(r["task_id"] for r in records) == [1, 2, 3]
    assert {r["status"] for r in records} == {"ok"}


def test_preflight_stops_bad_keys_models_and_endpoints(small_data: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    with MockLLMServer(api_key="right", models=["agent-m", "world-m"]) as server:
        assert run_cli(*base_args(server, small_data, out, "--api-key", "wrong")) == 2
        assert "preflight failed: the agent (agent-m at " in capsys.readouterr().err
        assert run_cli(*base_args(server, small_data, out, "--api-key", "right", "--verifier-model", "judge-x")) == 2
        error = capsys.readouterr().err
        assert "preflight failed: the verifier (judge-x at " in error and "check --verifier-model" in error
        # The roles' probes go out together: 401 to each of the four at once (the agent's tool probe among them);
        # then the agent (and its tool probe), world, verifier (404) once each
        assert server.stats.requests == 8
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    assert run_cli("--agent-model", "a", "--world-model", "w", "--base-url", closed, "--data-dir", str(small_data),
                   "--output-dir", str(out), "--retry-budget", "1") == 2
    assert "preflight failed: cannot connect to the agent" in capsys.readouterr().err
    assert not list(out.glob("a__w__E0*/results.jsonl"))


def test_per_role_endpoints_and_keys(small_data: Path, tmp_path: Path) -> None:
    with MockLLMServer(api_key="agent-key") as agent_side, MockLLMServer(api_key="shared-key") as world_side:
        code = run_cli("--agent-model", "a", "--world-model", "w", "--data-dir", str(small_data),
                       "--output-dir", str(tmp_path), "--base-url", world_side.base_url, "--api-key", "shared-key",
                       "--agent-base-url", agent_side.base_url, "--agent-api-key", "agent-key", "--task-ids", "3")
    assert code == 0
    assert agent_side.requests and all(r["model"] == "a" for r in agent_side.requests)
    assert {r["model"] for r in world_side.requests} == {"w"}  # the verifier defaults to the world model


def test_environment_variables_supply_the_endpoint(small_data: Path, server: MockLLMServer, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OCCUBENCH_DATA", str(small_data))
    assert run_cli("--agent-model", "a", "--world-model", "w", "--output-dir", str(tmp_path), "--task-ids", "1") == 0
    assert len(results(tmp_path, "a__w__E0")) == 1


def test_selection_warnings_and_bad_input(small_data: Path, server: MockLLMServer, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    assert run_cli(*base_args(server, small_data, out, "--task-ids", "3,99", "77")) == 0
    assert "no task with id 99, 77" in capsys.readouterr().err
    assert [r["task_id"] for r in results(out)] == [3]

    assert run_cli(*base_args(server, small_data, out, "--categories", "Hlth", "--run-name", "health")) == 0
    assert sorted(r["task_id"] for r in results(out, "health")) == [1, 2]
    assert run_cli(*base_args(server, small_data, out, "--categories", "Mining")) == 2
    assert "unknown category 'Mining'" in capsys.readouterr().err

    tasks = small_data / "eval_benchmark_solvable.jsonl"
    tasks.write_text(tasks.read_text() + '{"task_id": 4, "task_scenario_name": "Inventory Reconciliation", '
                     '"agent_instruction": "x", "env_name": "env_missing", "difficulty_level": 1}\n')
    assert run_cli(*base_args(server, small_data, out)) == 2
    assert "unknown environment 'env_missing'" in capsys.readouterr().err
    tasks.write_text(tasks.read_text() + "{broken\n")
    assert run_cli(*base_args(server, small_data, out)) == 2
    assert f"{tasks}:5: invalid JSON" in capsys.readouterr().err

    assert run_cli(*base_args(server, tmp_path / "nowhere", out)) == 2
    assert "occubench data download" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        run_cli(*base_args(server, small_data, out, "--agent-params", "{top_p: 1}"))
    assert exit_.value.code == 2 and "--agent-params: not valid JSON" in capsys.readouterr().err


def test_agent_parameters_and_plan_reach_the_agent_requests(small_data: Path, server: MockLLMServer,
                                                            tmp_path: Path) -> None:
    assert run_cli(*base_args(server, small_data, tmp_path, "--task-ids", "1", "--with-plan", "--temperature",
                              "0.3", "--max-tokens", "512", "--reasoning-effort", "high", "--agent-params",
                              '{"top_k": 20}', "--world-params", '{"temperature": 0}')) == 0
    agent = agent_requests(server)
    world = [r for r in server.requests if "<predicted_observation>" in r["messages"][0]["content"]]
    assert agent and all(r["temperature"] == 0.3 and r["max_tokens"] == 512 and r["reasoning_effort"] == "high"
                         and r["top_k"] == 20 for r in agent)
    assert "Call get_prescription with RX-100" in agent[0]["messages"][0]["content"]
    assert world and all(r["temperature"] == 0 for r in world)
    [record] = results(tmp_path)
    assert record["with_plan"] is True


def test_fault_modes_are_recorded_and_reach_the_simulator(small_data: Path, server: MockLLMServer,
                                                          tmp_path: Path) -> None:
    assert run_cli(*base_args(server, small_data, tmp_path, "--env-mode", "E3", "--fault-count", "1",
                              "--fault-duration", "3", "--task-ids", "3")) == 0
    [record] = results(tmp_path, "agent-m__world-m__E3__fc1_fd3")
    assert (record["env_mode"], record["fault_count"], record["fault_duration"]) == ("E3", 1, 3)
    world_prompt = next(r for r in server.requests
                        if "<predicted_observation>" in r["messages"][0]["content"])["messages"][0]["content"]
    assert "1 fault window(s), each covering 3 consecutive tool call(s)" in world_prompt


def test_debug_log_and_path_safe_run_names(small_data: Path, server: MockLLMServer, tmp_path: Path) -> None:
    assert run_cli("--agent-model", "meta-llama/Llama-3-70b", "--world-model", "qwen3:8b", "--base-url",
                   server.base_url, "--data-dir", str(small_data), "--output-dir", str(tmp_path), "--task-ids", "1",
                   "--max-workers", "1", "--debug") == 0
    run_dir = run_folder(tmp_path, "meta-llama_Llama-3-70b__qwen3_8b__E0")
    log = (run_dir / "debug.log").read_text()
    for line in ("[AGENT] Step 1, messages=2", "[AGENT] Tool call: get_prescription(",
                 "[LWM] Simulating: get_prescription, history_len=0", "[LWM] Observation: {",
                 "[VERIFIER] Votes: "):
        assert line in log
    assert "[task " not in log  # one worker: lines as in the OccuBench README


def test_debug_log_tags_each_line_once_with_several_workers(small_data: Path, server: MockLLMServer,
                                                             tmp_path: Path) -> None:
    assert run_cli(*base_args(server, small_data, tmp_path, "--max-workers", "3", "--debug")) == 0
    lines = (run_folder(tmp_path, "agent-m__world-m__E0") / "debug.log").read_text().splitlines()
    assert lines and all(re.fullmatch(r"\[task [123]\] \[(AGENT|LWM|VERIFIER|LLM)\] .*", line)
                         for line in lines), lines[:5]
    # Every role's requests are logged, by the one client they all go through.
    for role in ("agent", "world", "verifier"):
        assert any(f"[LLM] the {role} (" in line and "answered in" in line for line in lines), role


def _readme_env(server: MockLLMServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OCCUBENCH_"))}
    return {**env, "OPENAI_BASE_URL": server.base_url}


@pytest.mark.slow
def test_readme_commands_run_unchanged_on_the_real_data(shared_data: Path, server: MockLLMServer,
                                                        tmp_path: Path) -> None:
    (tmp_path / "data").symlink_to(shared_data)
    common = ["--agent-model", "gpt-4o", "--world-model", "gpt-4o", "--api-key", "YOUR_API_KEY"]
    commands = [
        [*common, "--task-ids", "11", "--max-workers", "1"],
        [*common, "--env-mode", "E0", "--max-workers", "8"],
        [*common, "--env-mode", "E2", "--fault-count", "2", "--fault-duration", "2"],
    ]
    for command in commands:
        done = subprocess.run([sys.executable, "-m", "occubench.evaluate", *command], cwd=tmp_path,
                              env=_readme_env(server), capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
    clean = read_results(run_folder(tmp_path / "results", "gpt-4o__gpt-4o__E0") / "results.jsonl")
    faulty = read_results(run_folder(tmp_path / "results", "gpt-4o__gpt-4o__E2__fc2_fd2") / "results.jsonl")
    assert sorted(r["task_id"] for r in clean) == sorted(r["task_id"] for r in faulty)
    assert len(clean) == len({r["task_id"] for r in clean}) == 382
    assert {r["status"] for r in clean + faulty} == {"ok"}
    assert {(r["env_mode"], r["fault_count"], r["fault_duration"]) for r in faulty} == {("E2", 2, 2)}
    assert "secret" not in done.stdout and "YOUR_API_KEY" not in (
        run_folder(tmp_path / "results", "gpt-4o__gpt-4o__E0") / "args.json").read_text()


@pytest.mark.slow
def test_completion_rate_is_identical_under_rate_limits_and_server_errors(shared_data: Path,
                                                                          tmp_path: Path) -> None:
    """All 382 tasks, clean vs. a server allowing 4 concurrent requests and failing 30 % of them."""
    verdicts = []
    for name, options in (("clean", {}),
                          ("throttled", {"max_concurrent": 4, "error_rate": 0.3, "seed": 11, "latency_s": 0.01})):
        with MockLLMServer(**options) as server:
            code = run_cli("--agent-model", "gpt-4o", "--world-model", "gpt-4o", "--base-url", server.base_url,
                           "--data-dir", str(shared_data), "--output-dir", str(tmp_path), "--run-name", name)
        assert code == 0
        if options:
            assert server.stats.responses_by_status.get(429, 0) > 0
            assert sum(n for status, n in server.stats.responses_by_status.items() if status >= 500) > 100
        records = results(tmp_path, name)
        assert len(records) == len({r["task_id"] for r in records}) == 382
        verdicts.append({r["task_id"]: r["is_correct"] for r in records})
    clean, throttled = verdicts
    assert throttled == clean
    assert 0 < sum(clean.values()) < 382


def test_console_script_entry_point(small_data: Path, server: MockLLMServer, tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("occubench")  # installed by `pip install -e .` next to python
    done = subprocess.run([str(script), "run", *base_args(server, small_data, tmp_path),
                           "--task-ids", "2"], env=_readme_env(server), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "task 2:" in done.stderr and "Completion" in done.stdout
    assert len(results(tmp_path)) == 1


def _without_timing(records: list[dict]) -> list[dict]:
    return sorted(({k: v for k, v in r.items() if k != "duration_s"} for r in records), key=lambda r: r["task_id"])


def test_a_replayed_run_reproduces_its_results(small_data: Path, server: MockLLMServer, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache.sqlite")
    assert run_cli(*base_args(server, small_data, tmp_path, "--cache", cache, "--date", "2026-02-02",
                              "--run-name", "original")) == 0
    sent = server.stats.requests
    assert run_cli(*base_args(server, small_data, tmp_path, "--cache", cache, "--date", "2026-02-02",
                              "--run-name", "replayed", "--replay")) == 0
    assert server.stats.requests == sent  # not one request: no preflight, every answer from the cache
    assert _without_timing(results(tmp_path, "replayed")) == _without_timing(results(tmp_path, "original"))
    # A request the original run never made is refused, as an error of that task, not answered.
    assert run_cli(*base_args(server, small_data, tmp_path, "--cache", cache, "--date", "2026-02-03",
                              "--run-name", "other-day", "--replay")) == 1
    assert server.stats.requests == sent
    assert {r["error"]["kind"] for r in results(tmp_path, "other-day")} == {"cache_miss"}


def test_results_of_another_configuration_are_not_mixed_in(small_data: Path, server: MockLLMServer,
                                                            tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    named = ("--run-name", "mine")  # by default the two would not even share a directory
    assert run_cli(*base_args(server, small_data, tmp_path, "--task-ids", "1", "--temperature", "0.2", *named)) == 0
    assert run_cli(*base_args(server, small_data, tmp_path, "--temperature", "0.7", *named)) == 2
    assert "different configuration (--agent-params {'temperature': 0.2} → {'temperature': 0.7})" in \
        capsys.readouterr().err
    assert [r["task_id"] for r in results(tmp_path, "mine")] == [1]
    assert run_cli(*base_args(server, small_data, tmp_path, "--temperature", "0.7", "--force", *named)) == 0
    hashes = {r["task_id"]: r["config_hash"] for r in results(tmp_path, "mine")}
    assert len(hashes) == 3 and hashes[1] != hashes[2] == hashes[3]


@pytest.mark.slow
def test_kill_9_then_the_same_command_leaves_every_task_exactly_once(tmp_path: Path) -> None:
    data = write_small_data(tmp_path / "data", copies=8)
    with MockLLMServer(latency_s=0.02) as server:
        command = [sys.executable, "-m", "occubench.evaluate", *base_args(server, data, tmp_path / "results"),
                   "--max-workers", "3"]
        process = subprocess.Popen(command, env=_readme_env(server), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
                (found := list((tmp_path / "results").glob("*/results.jsonl"))) and
                found[0].read_text().count("\n") >= 4):
            time.sleep(0.02)
        path = run_folder(tmp_path / "results", "agent-m__world-m__E0") / "results.jsonl"
        process.kill()  # SIGKILL: no cleanup of any kind
        process.wait()
        before = read_results(path)
        assert 4 <= len(before) < 24
        done = subprocess.run(command, env=_readme_env(server), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    after = read_results(path)
    assert sorted(r["task_id"] for r in after) == sorted(t + 10 * c for c in range(8) for t in (1, 2, 3))
    assert {r["status"] for r in after} == {"ok"}
    assert after[:len(before)] == before  # nothing already computed was lost or redone


def _malformed_once(request: dict, index: int) -> str | dict:
    """Scripted answers, except that a third of world-model and judge requests first get an unparsable reply (never
    twice in a row, so the bounded re-ask always recovers)."""
    reply = scripted_responder(request, index)
    asked_again = any(m["role"] == "assistant" and m.get("content") == "Sorry, I cannot format that."
                      for m in request["messages"])
    digest = hashlib.sha256(json.dumps(request["messages"]).encode()).digest()[0] + index
    if request.get("tools") or asked_again or digest % 3:
        return reply
    return "Sorry, I cannot format that."


def test_dropped_connections_and_malformed_answers_change_no_verdict(tmp_path: Path) -> None:
    data = write_small_data(tmp_path / "data", copies=6)
    verdicts = []
    for name, options in (("clean", {}), ("flaky", {"drop_rate": 0.05, "seed": 5, "responder": _malformed_once})):
        with MockLLMServer(**options) as server:
            assert run_cli(*base_args(server, data, tmp_path, "--run-name", name)) == 0
        if options:
            assert server.stats.dropped > 0
        records = results(tmp_path, name)
        assert len(records) == len({r["task_id"] for r in records}) == 18
        verdicts.append({r["task_id"]: r["is_correct"] for r in records})
        if options:
            assert any(v["attempts"] > 1 for r in records for v in r["votes"])  # malformed verdicts re-asked
    assert verdicts[0] == verdicts[1]


def _busy_agent(calls: int):
    """A responder whose agent makes ``calls`` tool calls (cycling through its tools) before answering; the world
    model and the judge are the scripted ones."""
    scripted = make_scripted_responder()

    def responder(request: dict, index: int) -> str | dict:
        tools = request.get("tools")
        if not tools:
            return scripted(request, index)
        done = sum(m["role"] == "tool" for m in request["messages"])
        if done >= calls:
            return "Final answer after checking everything."
        tool = tools[done % len(tools)]["function"]
        arguments = {name: "X-1" if spec.get("type") == "string" else 1
                     for name, spec in tool["parameters"]["properties"].items()}
        return {"content": None, "tool_calls": [{"name": tool["name"], "arguments": arguments}]}
    return responder


def test_harness_faults_hit_the_same_calls_for_every_agent(small_data: Path, tmp_path: Path) -> None:
    flags = ["--env-mode", "E2", "--fault-mode", "harness", "--fault-count", "2", "--fault-duration", "2",
             "--seed", "7"]
    events = {}
    with MockLLMServer(_busy_agent(10)) as server:
        for agent in ("agent-a", "agent-b"):
            assert run_cli("--agent-model", agent, "--world-model", "world-m", "--base-url", server.base_url,
                           "--data-dir", str(small_data), "--output-dir", str(tmp_path), *flags) == 0
            records = results(tmp_path, f"{agent}__world-m__E2__fc2_fd2__harness_s7")
            assert {(r["fault_mode"], r["seed"], r["fault_count"], r["fault_duration"]) for r in records} == \
                {("harness", 7, 2, 2)}
            events[agent] = {r["task_id"]: [(e["call_index"], e["kind"]) for e in r["fault_events"]] for r in records}
            for record in records:
                assert len(record["fault_events"]) == 4
                assert [w["fired"] for w in record["fault_windows"]] == [2, 2]
                faulted = {e["call_index"] for e in record["fault_events"]}
                for call in (c for step in record["steps"] for c in step["tool_calls"]):
                    assert "error" not in call["observation"]  # silent: the agent sees no marker
                    assert (call["call_index"] in faulted) == (call["observation"] != json.loads(
                        server_observation(call)))
    assert events["agent-a"] == events["agent-b"]
    assert len({tuple(v) for v in events["agent-a"].values()}) > 1  # tasks differ
    world_prompts = [r["messages"][0]["content"] for r in server.requests
                     if "<predicted_observation>" in r["messages"][0]["content"]]
    assert world_prompts and not any("Fault simulation" in p for p in world_prompts)  # harness, not prompt mode


def server_observation(call: dict) -> str:
    """What the scripted world model answers for this call, undegraded."""
    action = json.dumps({"name": call["name"], "arguments": json.loads(call["arguments"])})
    reply = make_scripted_responder()({"messages": [{"role": "system", "content": "<predicted_observation>"},
                                                    {"role": "user", "content": action}]}, 0)
    return reply.split("<predicted_observation>")[1].split("</predicted_observation>")[0]


def test_short_episodes_record_windows_that_never_fired(small_data: Path, server: MockLLMServer,
                                                        tmp_path: Path) -> None:
    assert run_cli(*base_args(server, small_data, tmp_path, "--env-mode", "E1", "--fault-mode", "harness",
                              "--run-name", "short")) == 0
    for record in results(tmp_path, "short"):  # the scripted agent makes only 2 calls
        fired = [w["fired"] for w in record["fault_windows"]]
        assert len(fired) == 2 and 0 in fired and len(record["fault_events"]) == sum(fired) <= 1


def test_trials_repeat_each_task_and_resume_per_trial(small_data: Path, server: MockLLMServer, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache.sqlite")
    assert run_cli(*base_args(server, small_data, tmp_path, "--trials", "3", "--task-ids", "1", "2",
                              "--cache", cache)) == 0
    records = results(tmp_path)
    assert sorted((r["task_id"], r["trial"]) for r in records) == [(t, k) for t in (1, 2) for k in range(3)]
    # Each trial asked the endpoint itself: a cached answer of one trial is not reused by another.
    assert len(agent_requests(server)) == 2 * 3 * 3  # 2 tasks × 3 trials × 3 agent turns
    sent = server.stats.requests
    assert run_cli(*base_args(server, small_data, tmp_path, "--trials", "4", "--task-ids", "1", "2",
                              "--cache", cache)) == 0
    assert len(results(tmp_path)) == 8 and server.stats.requests > sent  # only trial 3 of each task ran


def test_every_role_key_is_masked_in_args(tmp_path: Path) -> None:
    keys = {f"--{role}-api-key": f"{role}.placeholder.key.{i}" for i, role in enumerate(evaluate.ROLES)}
    assert run_cli("--suite", "workplace", "--agent", "reference", "--days", "1", "--output-dir", str(tmp_path),
                   "--run-name", "keys", *[part for flag, key in keys.items() for part in (flag, key)]) == 0
    args = json.loads((tmp_path / "keys" / "args.json").read_text())
    assert all(args[flag[2:].replace("-", "_")] == "<redacted>" for flag in keys)
    for path in (tmp_path / "keys").iterdir():
        assert not any(key in path.read_text() for key in keys.values()), path


def test_a_refused_key_is_never_printed(small_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = "sk-WRONGKEY123"
    with MockLLMServer(api_key="right") as server:  # its 401 quotes the key it was sent
        for flags in (["--api-key", wrong], ["--api-key", "right", "--world-api-key", wrong], []):
            if not flags:
                monkeypatch.setenv("OPENAI_API_KEY", wrong)
            assert run_cli(*base_args(server, small_data, tmp_path, *flags)) == 2
            err = capsys.readouterr().err
            assert "Incorrect API key provided: <redacted>" in err and wrong not in err, flags
    assert not list(tmp_path.glob("agent-m__world-m__E0*"))  # a failed preflight leaves no run directory


def test_credentials_in_urls_reach_no_file_and_no_terminal(small_data: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    with MockLLMServer(error_rate=1.0) as server:
        url = server.base_url.replace("http://", "http://user:PASSWORD42@") + "?api_key=SECRET42"
        assert run_cli("--agent-model", "a", "--world-model", "w", "--base-url", url, "--data-dir", str(small_data),
                       "--output-dir", str(tmp_path), "--skip-preflight", "--retry-budget", "0.2", "--debug") == 1
        assert cli_main(["report", str(run_folder(tmp_path, "a__w__E0")), "--html", str(tmp_path / "r.html")]) == 0
    shown = capsys.readouterr()
    records = read_results(run_folder(tmp_path, "a__w__E0") / "results.jsonl")
    assert records and all("user:<redacted>@" in r["error"]["message"] for r in records)
    for text in [shown.out, shown.err, *(p.read_text() for p in run_folder(tmp_path, "a__w__E0").iterdir()),
                 (tmp_path / "r.html").read_text()]:
        assert "PASSWORD42" not in text and "SECRET42" not in text


def test_connection_failures_and_missing_keys_fail_the_preflight_at_once(small_data: Path, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    # The default retry budget is 600 s: a refused connection is named at once instead of retried.
    assert run_cli("--agent-model", "a", "--world-model", "w", "--base-url", closed, "--data-dir", str(small_data),
                   "--output-dir", str(tmp_path / "results")) == 2
    assert "connection refused" in capsys.readouterr().err
    # No endpoint and no key: the OpenAI API would refuse; said before any request is made.
    assert run_cli("--agent-model", "a", "--world-model", "w", "--data-dir", str(small_data),
                   "--output-dir", str(tmp_path / "results")) == 2
    assert "no API key for the agent" in capsys.readouterr().err
    assert not (tmp_path / "results").exists()


def _bad(tmp_path: Path, name: str, rows: list[object]) -> Path:
    path = tmp_path / name
    path.write_bytes(b"".join(row if isinstance(row, bytes) else json.dumps(row).encode() + b"\n" for row in rows))
    return path


def test_bad_input_is_named_exits_2_and_loses_nothing(small_data: Path, server: MockLLMServer, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    assert run_cli(*base_args(server, small_data, out, "--task-ids", "1")) == 0
    saved = (run_folder(out, "agent-m__world-m__E0") / "results.jsonl").read_bytes()
    tasks = [json.loads(line) for line in (small_data / "eval_benchmark_solvable.jsonl").read_text().splitlines()]
    config = json.loads((small_data / "world_model_configs" / "env_fixture_pharmacy.json").read_text())
    config["action_set_definitions"][0]["parameters"] = "oops"
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "env_fixture_pharmacy.json").write_text(json.dumps(config))
    (tmp_path / "configs" / "env_fixture_warehouse.json").write_text(
        (small_data / "world_model_configs" / "env_fixture_warehouse.json").read_text())
    (tmp_path / "a-file").write_text("")
    cases = [
        (["--eval-data", str(_bad(tmp_path, "utf8.jsonl", [tasks[0], b"{\"task_id\": \"\xff\"}\n"]))],
         "utf8.jsonl:2: not UTF-8 text"),
        (["--eval-data", str(small_data)], "is a directory, not a file"),
        (["--eval-data", str(_bad(tmp_path, "obj.jsonl", [{**tasks[0], "agent_instruction": {"do": "x"}}]))],
         "obj.jsonl:1: agent_instruction must be a string, got dict"),
        (["--config-dir", str(tmp_path / "configs")],
         "env_fixture_pharmacy.json: action 'get_prescription': parameters must be a JSON schema object"),
        (["--output-dir", str(tmp_path / "a-file")], "--output-dir"),
        (["--retry-budget", "nan"], "--retry-budget: Input should be a finite number"),
        (["--request-timeout", "-5"], "--request-timeout: Input should be greater than 0"),
    ]
    for flags, message in cases:
        assert run_cli(*base_args(server, small_data, out, *flags)) == 2, flags
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (flags, err)
    assert (run_folder(out, "agent-m__world-m__E0") / "results.jsonl").read_bytes() == saved


def test_cached_prompt_tokens_are_recorded_shown_and_priced(small_data: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"world-m": {"input": 2.0, "output": 8.0, "cached_input": 0.5}}))
    with MockLLMServer(prompt_cache=True) as server:
        assert run_cli(*base_args(server, small_data, tmp_path / "out", "--prices", str(prices))) == 0
    records = results(tmp_path / "out")
    world = [r["usage"]["world"] for r in records]
    cached, prompt = sum(u["cached_tokens"] for u in world), sum(u["prompt_tokens"] for u in world)
    assert 0 < cached < prompt  # every simulator request after the first extends the one before it
    assert all(r["usage"]["world"]["cached_tokens"] > 0 for r in records)
    shown = " ".join(capsys.readouterr().out.split())
    assert "cached" in shown and f"{cached:,}" in shown  # rich wraps the header in a narrow terminal
