"""``--executor ray`` on a local Ray instance: the local executor's verdicts, one limit per endpoint for the whole
cluster, the response cache, and a run killed mid-way that resumes with every task once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from occubench.cli import main as cli
from occubench.store import RESULTS_FILE, read_context, read_results
from occubench.testing import MockLLMServer
from tests.conftest import BUILTIN_TASKS, extra_reason, run_folder, write_small_data

ray = pytest.importorskip("ray", reason=extra_reason("ray"))  # the Ray instance is the package's (conftest.py)
pytestmark = pytest.mark.slow  # each test process starts a Ray cluster


def _verdicts(run_dir: Path) -> dict[tuple[str, int], tuple]:
    return {(str(r["task_id"]), r["trial"]): (r["status"], r["is_correct"], r["config_hash"], r["final_answer"],
                                             r["step_count"]) for r in read_results(run_dir / RESULTS_FILE)}


def test_the_executable_suite_gives_the_local_verdicts(tmp_path: Path) -> None:
    runs = {}
    for executor in ("local", "ray"):
        # Two modes at once (sharing the cluster), one with harness faults: the workers rebuild the fault wrapper.
        assert cli(["run", "--suite", "executable", "--agent", "reference", "--env-mode", "E0", "E1",
                    "--output-dir", str(tmp_path / executor), "--executor", executor]) == 0
        runs[executor] = {path.name: _verdicts(path) for path in (tmp_path / executor).iterdir()}
    assert runs["ray"] == runs["local"]
    assert len(runs["ray"]) == 2 and all(len(verdicts) == BUILTIN_TASKS for verdicts in runs["ray"].values())


def test_day_two_of_a_learning_run_is_told_day_one_s_feedback_in_the_workers(tmp_path: Path) -> None:
    told = {}
    for executor in ("local", "ray"):
        out = tmp_path / executor
        assert cli(["run", "--suite", "workplace", "--agent", "noop", "--days", "2", "--learning", "--output-dir",
                    str(out), "--run-name", "r", "--executor", executor]) == 0
        context = read_context(out / "r")
        told[executor] = {r["task_id"]: (r["is_correct"], context[r["context"]["instruction"]])
                          for r in read_results(out / "r" / RESULTS_FILE)}
    assert told["ray"] == told["local"] and len(told["ray"]) == 6  # two days, each with two day-two arms
    assert all(("Mentor's feedback" in instruction) == task.endswith("-day2-notes")
               for task, (_, instruction) in told["ray"].items())


def test_simulated_tasks_give_the_local_verdicts_and_context(small_data: Path, server: MockLLMServer,
                                                              tmp_path: Path) -> None:
    runs = {}
    for executor in ("local", "ray"):
        assert cli(["run", "--agent-model", "a", "--world-model", "w", "--base-url", server.base_url, "--api-key",
                    "sk-test-secret-1234", "--data-dir", str(small_data), "--output-dir", str(tmp_path / executor),
                    "--executor", executor]) == 0
        runs[executor] = run_folder(tmp_path / executor, "a__w__E0")
    assert _verdicts(runs["ray"]) == _verdicts(runs["local"]) and len(_verdicts(runs["ray"])) == 3
    # The context each worker's result carried was interned here, as a local run's is.
    for run_dir in runs.values():
        context = read_context(run_dir)
        assert all(set(r["context"]) == {"instruction", "system_prompt", "tools", "judge_prompt"} and
                   all(ref in context for ref in r["context"].values()) for r in read_results(run_dir / RESULTS_FILE))
    # The key reached the workers in memory only: not in the run directory, not in Ray's logs of this session.
    logs = Path(ray._private.worker._global_node.get_logs_dir_path())
    assert logs.is_dir() and not any("sk-test-secret-1234" in path.read_text(errors="replace")
                                     for path in [*runs["ray"].iterdir(), *logs.rglob("*")] if path.is_file())


def test_the_cost_budget_and_per_task_limits_hold_under_ray(small_data: Path, server: MockLLMServer,
                                                             tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({m: {"input": 1000.0, "output": 1000.0} for m in ("a", "w")}))
    command = ["run", "--agent-model", "a", "--world-model", "w", "--base-url", server.base_url, "--data-dir",
               str(small_data), "--output-dir", str(tmp_path), "--prices", str(prices), "--max-workers", "1",
               "--max-tokens-per-task", "1", "--executor", "ray"]
    assert cli([*command, "--max-cost", "0.01"]) == 1  # episodes left unstarted
    assert 1 <= len(read_results(run_folder(tmp_path, "a__w__E0") / RESULTS_FILE)) < 3
    assert cli([*command, "--max-cost", "1000"]) == 0
    records = read_results(run_folder(tmp_path, "a__w__E0") / RESULTS_FILE)
    assert len(records) == 3 and all(r["stop_reason"] == "max_tokens_per_task" for r in records)


def test_one_connection_limit_for_the_whole_cluster(tmp_path: Path) -> None:
    data = write_small_data(tmp_path / "data", copies=4)
    # The endpoint refuses (429) a third request in flight; two worker processes running two episodes each stay
    # within two only if they share one limiter.
    with MockLLMServer(max_concurrent=2, latency_s=0.02) as server:
        assert cli(["run", "--agent-model", "a", "--world-model", "w", "--base-url", server.base_url, "--data-dir",
                    str(data), "--output-dir", str(tmp_path / "out"), "--executor", "ray", "--ray-workers", "2",
                    "--max-workers", "4", "--max-connections", "2", "--fixed-concurrency"]) == 0
        assert server.stats.max_in_flight <= 2 and 429 not in server.stats.responses_by_status
    assert len(_verdicts(run_folder(tmp_path / "out", "a__w__E0"))) == 12


def test_cache_then_replay_gives_the_same_results_without_a_request(small_data: Path, server: MockLLMServer,
                                                                     tmp_path: Path) -> None:
    cache = tmp_path / "responses.sqlite"
    common = ["run", "--agent-model", "a", "--world-model", "w", "--base-url", server.base_url, "--data-dir",
              str(small_data), "--output-dir", str(tmp_path / "out"), "--executor", "ray", "--date", "2026-01-02",
              "--cache", str(cache)]
    assert cli([*common, "--run-name", "first"]) == 0
    sent = server.stats.requests
    assert cli([*common, "--run-name", "replayed", "--replay"]) == 0
    assert server.stats.requests == sent
    first, replayed = (read_results(tmp_path / "out" / name / RESULTS_FILE) for name in ("first", "replayed"))
    moment = ("duration_s",)
    assert sorted(json.dumps({k: v for k, v in r.items() if k not in moment}, sort_keys=True) for r in first) == \
        sorted(json.dumps({k: v for k, v in r.items() if k not in moment}, sort_keys=True) for r in replayed)


def test_a_run_killed_mid_way_resumes_with_every_task_once(cluster: str, tmp_path: Path) -> None:
    data = write_small_data(tmp_path / "data", copies=4)
    out = tmp_path / "out"
    command = ["run", "--agent-model", "a", "--world-model", "w", "--data-dir", str(data), "--output-dir", str(out),
               "--executor", "ray", "--max-workers", "2", "--skip-preflight"]
    with MockLLMServer(latency_s=0.1) as server:
        # Another process joins this module's Ray instance, as a run joins a cluster (--ray-address).
        process = subprocess.Popen([sys.executable, "-m", "occubench", *command, "--base-url", server.base_url,
                                    "--ray-address", cluster], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 120
            while not ((found := list(out.glob(f"*/{RESULTS_FILE}"))) and
                       len(found[0].read_bytes().splitlines()) >= 3):
                assert process.poll() is None and time.monotonic() < deadline, "the run ended before 3 results"
                time.sleep(0.05)
        finally:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
        assert cli([*command, "--base-url", server.base_url]) == 0
    results = run_folder(out, "a__w__E0") / RESULTS_FILE
    ids = [str(record["task_id"]) for record in read_results(results)]
    assert sorted(ids) == sorted(set(ids)) and len(ids) == 12
    assert all(record["status"] == "ok" for record in read_results(results))
