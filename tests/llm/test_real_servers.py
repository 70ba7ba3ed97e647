"""Behaviours of real OpenAI-compatible servers (llama.cpp, vLLM, reasoning models), reproduced by the mock
server's modes, and what the harness does about each. Every run here goes through the CLI and the real openai SDK."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from occubench.cli import run as evaluate
from occubench.store import read_results
from occubench.testing import MockLLMServer
from tests.conftest import agent_requests


def run(server: MockLLMServer, data: Path, out: Path, *extra: str) -> tuple[int, list[dict[str, Any]]]:
    code = evaluate.main(["--agent-model", "agent-m", "--world-model", "world-m", "--base-url", server.base_url,
                          "--data-dir", str(data), "--output-dir", str(out), "--run-name", "r", *extra])
    return code, read_results(out / "r" / "results.jsonl")


def verdicts(records: list[dict[str, Any]]) -> dict[Any, Any]:
    return {r["task_id"]: (r["status"], r["is_correct"], r["step_count"]) for r in records}


def test_a_llama_cpp_like_server_scores_every_task_as_a_permissive_one(small_data: Path, tmp_path: Path) -> None:
    # llama.cpp refuses "content": null beside tool calls (as a 500) and ignores tools without tool_choice.
    with MockLLMServer() as permissive:
        _, expected = run(permissive, small_data, tmp_path / "a")
    with MockLLMServer(reject_null_content=True, tools_need_choice=True) as strict:
        code, records = run(strict, small_data, tmp_path / "b")
    assert code == 0 and verdicts(records) == verdicts(expected)
    assert all(r["step_count"] == 3 for r in records)  # the tools were used
    sent = agent_requests(strict)
    assert all(r["tool_choice"] == "auto" for r in sent)
    assert all(m["content"] == "" for r in sent for m in r["messages"] if m["role"] == "assistant")


def test_dropped_tools_are_warned_about(small_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with MockLLMServer(tools_need_choice=True) as server:
        code, records = run(server, small_data, tmp_path, "--agent-params", '{"tool_choice": "omit"}')
    shown = " ".join("".join(capsys.readouterr()).split())  # rich wraps lines at the terminal's width
    assert code == 0 and all(r["step_count"] == 1 and not r["steps"][0]["tool_calls"] for r in records)
    assert "answered a request that asked for a tool call without calling it" in shown  # the preflight
    assert "the agent made no tool call in any task" in shown                           # the end of the run


def test_a_context_overflow_on_an_n_request_is_not_taken_for_n_unsupported(small_data: Path,
                                                                          tmp_path: Path) -> None:
    # Agent and simulator fit the window; the judge's prompt (the whole trajectory) does not.
    def fits(request: dict[str, Any]) -> bool:
        return "<verdict>" not in json.dumps(request["messages"])
    with MockLLMServer(context_window=350) as server:
        code, records = run(server, small_data, tmp_path, "--task-ids", "1", "--retry-budget", "5",
                            "--world-params", '{"max_tokens": 50}', "--verifier-params", '{"max_tokens": 10}')
    [record] = records
    assert code == 1 and record["error"]["kind"] == "context_length"
    assert "the verifier (world-m at " in record["error"]["message"]            # the role, endpoint and model
    assert "exceed context window" in record["error"]["message"]                # the server's own words
    judge = [r for r in server.requests if not fits(r)]
    assert [r.get("n") for r in judge] == [3]  # no single-sample requests after: `n` was not blamed
    # The agent's third turn overflowed too: its episode ended there, and the judge was asked to score it.
    assert record["stop_reason"] == "context_length" and record["step_count"] == 2            # kept on the error,
    assert record["usage"]["agent"]["calls"] == 2 and record["usage"]["world"]["calls"] == 2  # and so is the usage


def test_a_context_overflow_on_the_first_turn_is_an_error_not_a_fail(small_data: Path, tmp_path: Path) -> None:
    # (A later overflow ends the episode and the judge scores it: see the test above.)
    with MockLLMServer(context_window=50) as tiny:
        code, records = run(tiny, small_data, tmp_path, "--task-ids", "1", "--skip-preflight")
    [record] = records
    assert code == 1 and record["error"]["kind"] == "context_length" and record["step_count"] == 0
    assert record["stop_reason"] == "error" and record["is_correct"] is None
    assert "the agent (agent-m at " in record["error"]["message"]


def test_retries_are_counted_per_role_and_logged(small_data: Path, tmp_path: Path) -> None:
    # A one-slot server slower than the request timeout: every attempt times out, each is logged and counted.
    with MockLLMServer(serial=True, latency_s=2.0) as server:
        code, records = run(server, small_data, tmp_path, "--task-ids", "1", "--skip-preflight",
                            "--request-timeout", "0.3", "--retry-budget", "1.5", "--debug")
    [record] = records
    assert code == 1 and record["error"]["kind"] == "infrastructure"
    assert "no answer within the 0.3 s request timeout" in record["error"]["message"]
    assert record["usage"]["agent"]["retries"]["timeout"] >= 1
    log = (tmp_path / "r" / "debug.log").read_text()
    assert "[LLM] the agent (agent-m at " in log and "no answer within the 0.3 s request timeout; retry 1 in" in log


def test_output_caps_for_every_role_but_the_agent(small_data: Path, tmp_path: Path) -> None:
    with MockLLMServer() as server:
        run(server, small_data, tmp_path, "--task-ids", "1", "--verifier-params", '{"max_tokens": 99}')
    world = [r for r in server.requests if "<predicted_observation>" in r["messages"][0]["content"]]
    judge = [r for r in server.requests if "<verdict>" in r["messages"][0]["content"]]
    assert world and {r["max_tokens"] for r in world} == {4096}
    assert judge and {r["max_tokens"] for r in judge} == {99}                  # overridable
    assert all("max_tokens" not in r for r in agent_requests(server))


def test_reasoning_text_tool_calls_and_max_completion_tokens(small_data: Path, tmp_path: Path) -> None:
    with MockLLMServer() as plain:
        _, expected = run(plain, small_data, tmp_path / "a")
    with MockLLMServer(reasoning=True, text_tool_calls=True, refuse_max_tokens=True) as server:
        code, records = run(server, small_data, tmp_path / "b", "--max-tokens", "300")
    assert code == 0 and verdicts(records) == verdicts(expected)  # the think blocks' drafts misled no parser
    assert all("<think>" not in r["final_answer"] and "maybe FALSE" not in r["final_answer"] for r in records)
    later = [r for r in agent_requests(server) if "max_completion_tokens" in r]
    assert later and all("max_tokens" not in r for r in later)


def test_a_real_llama_cpp_server(tmp_path: Path) -> None:
    """A few executable tasks against llama-cpp-python's OpenAI-compatible server, when it and a model are here."""
    pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] is not installed")
    model = os.environ.get("OCCUBENCH_LLAMA_MODEL")
    if not model or not Path(model).is_file():
        pytest.skip("set OCCUBENCH_LLAMA_MODEL to a local GGUF instruct model to run against llama.cpp")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", model, "--host", "127.0.0.1",
                               "--port", str(port), "--chat_format", "chatml-function-calling"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        code = evaluate.main(["--suite", "executable", "--agent-model", "local", "--verifier-model", "local",
                              "--base-url", f"http://127.0.0.1:{port}/v1", "--output-dir", str(tmp_path),
                              "--run-name", "r", "--categories", "Pub", "--max-steps", "8", "--max-workers", "1",
                              "--request-timeout", "600"])
    finally:
        server.terminate()
        server.wait(timeout=60)
    records = read_results(tmp_path / "r" / "results.jsonl")
    assert code in (0, 1) and records
    assert all(r["status"] == "ok" for r in records), [r["error"] for r in records]
