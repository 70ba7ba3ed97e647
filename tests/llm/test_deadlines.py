"""Deadlines are totals: a server that trickles its answer a byte at a time (each read succeeds, so the SDK's read
timeout never fires) holds a request no longer than the request timeout, and an episode no longer than its time
limit plus one request timeout; the process still exits at once. Bounds on wall time are generous (they prove "did
not hang for minutes", a normal reply trickled at these rates takes several minutes)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from occubench.cli import main as cli
from occubench.errors import LLMUnavailableError, TaskLimitReached
from occubench.llm import LLMClient, Model, RetryPolicy
from occubench.llm.ledger import TaskLimits, open_ledger
from occubench.store import RESULTS_FILE, read_results
from occubench.testing import MockLLMServer
from occubench.util.aio import run_sync

MESSAGES = [{"role": "user", "content": "Reply with the word OK."}]


def test_a_trickled_answer_is_cut_at_the_request_timeout_and_retried_as_transient() -> None:
    with MockLLMServer(trickle_s=0.5) as server, open_ledger() as ledger:
        client = LLMClient("k", server.base_url, timeout_s=1, retry=RetryPolicy(budget_s=2, base_delay_s=0.1))
        started = time.monotonic()
        with pytest.raises(LLMUnavailableError, match="no answer within the 1 s request timeout"):
            client.chat("m", MESSAGES, role="agent")
        assert time.monotonic() - started < 30
    assert ledger.by_role["agent"].retries["timeout"] >= 1


def test_the_episode_s_time_limit_cuts_an_open_request_and_stops_the_episode() -> None:
    with MockLLMServer(trickle_s=0.5) as server:
        client = LLMClient("k", server.base_url, timeout_s=60)
        started = time.monotonic()
        with open_ledger(TaskLimits(max_seconds=1)), pytest.raises(TaskLimitReached) as stopped:
            client.chat("m", MESSAGES, role="world")  # the simulator's request, in the episode, is cut too
        assert stopped.value.reason == "max_seconds_per_task"
        assert time.monotonic() - started < 30  # far below the 60 s request timeout


@pytest.mark.slow
def test_a_trickling_server_ends_a_run_s_tasks_as_errors_and_the_process_exits(small_data: Path,
                                                                               tmp_path: Path) -> None:
    # Limit 2 s, request timeout 5 s: the agent's first request is cut by the task's limit (the episode stops and
    # is judged), the judge's by the one request timeout it has past the limit (an infrastructure error).
    with MockLLMServer(trickle_s=0.5) as server:
        command = [sys.executable, "-m", "occubench", "run", "--agent-model", "a", "--world-model", "w",
                   "--base-url", server.base_url, "--data-dir", str(small_data), "--output-dir", str(tmp_path),
                   "--run-name", "r", "--skip-preflight", "--request-timeout", "5", "--retry-budget", "5",
                   "--max-seconds-per-task", "2", "--max-workers", "3"]
        started = time.monotonic()
        finished = subprocess.run(command, capture_output=True, text=True, timeout=120)
        elapsed = time.monotonic() - started
    assert finished.returncode == 1, finished.stderr
    assert elapsed < 3 * (2 + 5) + 20  # (limit + one request timeout) × 3, plus the interpreter's start
    results = read_results(tmp_path / "r" / RESULTS_FILE)
    assert sorted(r["task_id"] for r in results) == [1, 2, 3]
    assert {(r["status"], r["error"]["kind"], r["stop_reason"]) for r in results} == \
        {("error", "infrastructure", "max_seconds_per_task")}
    assert all(r["duration_s"] < 2 + 5 + 5 for r in results)


def test_a_request_timeout_alone_bounds_a_run_against_a_trickling_server(small_data: Path, tmp_path: Path) -> None:
    with MockLLMServer(trickle_s=0.5) as server:
        started = time.monotonic()
        code = cli(["run", "--agent-model", "a", "--world-model", "w", "--base-url", server.base_url,
                    "--data-dir", str(small_data), "--output-dir", str(tmp_path), "--run-name", "r",
                    "--skip-preflight", "--request-timeout", "1", "--retry-budget", "3", "--max-workers", "3"])
        assert time.monotonic() - started < 60
    assert code == 1
    results = read_results(tmp_path / "r" / RESULTS_FILE)
    assert {(r["status"], r["error"]["kind"]) for r in results} == {("error", "infrastructure")}
    assert all("1 s request timeout" in r["error"]["message"] for r in results)
    assert all(r["usage"]["agent"]["retries"]["timeout"] >= 1 for r in results)


@pytest.mark.slow
def test_waiting_for_a_connection_is_not_the_tasks_time() -> None:
    # Another episode holds the only connection for 6 s; this one's 5 s limit counts only its own time, so its
    # second turn is not refused (it was, when the wait counted).
    with MockLLMServer(lambda request, index: "ok") as server:
        client = LLMClient("k", server.base_url, max_in_flight=1, adaptive=False)
        agent = Model(client, "m", role="agent")
        held = run_sync(client.limiter.acquire())  # the only slot, taken as another episode would
        released = threading.Timer(6, lambda: client.limiter.release(held, ok=True))
        released.start()
        with open_ledger(TaskLimits(max_seconds=5)):
            assert agent.chat([{"role": "user", "content": "first"}]).replies[0].content == "ok"
            assert agent.chat([{"role": "user", "content": "second"}]).replies[0].content == "ok"
        released.join()
    assert server.stats.requests == 2
