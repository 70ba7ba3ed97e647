"""occubench.run(config) as a library: typed config and results, the same results from a TOML file through the
CLI, one run at a time per directory, and records that are always written."""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from occubench import RunConfig, run
from occubench.cli import main as cli
from occubench.store import RESULTS_FILE, read_results
from occubench.testing import MockLLMServer, make_scripted_responder
from tests.conftest import BUILTIN_TASKS, run_folder

QUIET = Console(quiet=True)


def _strict(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise ValueError(f"not strict JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.slow
def test_python_config_and_toml_file_give_the_same_results(tmp_path: Path) -> None:
    summary = run(RunConfig(suite="executable", agent="reference", output_dir=str(tmp_path), run_name="py"),
                  console=QUIET)
    assert (summary.passed, summary.evaluated, summary.errors) == (BUILTIN_TASKS, BUILTIN_TASKS, 0)
    assert summary.run_dir == tmp_path / "py" and len(summary.results) == BUILTIN_TASKS
    toml = tmp_path / "run.toml"
    toml.write_text(f'suite = "executable"\nagent = "reference"\noutput-dir = "{tmp_path}"\nrun_name = "ignored"\n')
    assert cli(["run", "--config", str(toml), "--run-name", "toml"]) == 0  # the flag wins over the file
    assert not (tmp_path / "ignored").exists()
    verdicts = {path: {(r["task_id"], r["is_correct"], r["config_hash"]) for r in read_results(path)}
                for path in (tmp_path / "py" / RESULTS_FILE, tmp_path / "toml" / RESULTS_FILE)}
    assert len(set(map(frozenset, verdicts.values()))) == 1


@pytest.mark.slow
def test_a_second_run_into_a_busy_directory_refuses(small_data: Path, tmp_path: Path) -> None:
    gate = threading.Event()
    scripted = make_scripted_responder()

    def held(request: dict, index: int) -> Any:
        gate.wait(60)  # the first run stays busy until the second one has been refused
        return scripted(request, index)

    with MockLLMServer(held) as server:
        command = [sys.executable, "-m", "occubench", "run", "--agent-model", "a", "--world-model", "w",
                   "--base-url", server.base_url, "--data-dir", str(small_data), "--output-dir", str(tmp_path),
                   "--skip-preflight"]
        first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            assert first.stdout is not None
            for line in first.stdout:  # the first run says where it works once it holds the directory
                if line.startswith("Run directory:"):
                    break
            lock = run_folder(tmp_path, "a__w__E0") / "run.lock"
            assert str(first.pid) in lock.read_text()
            second = subprocess.run(command, capture_output=True, text=True, timeout=120)
            assert second.returncode == 2
            assert f"in use by process {first.pid}" in second.stderr
            with MockLLMServer() as other:  # with its preflight: refused before it sends a request
                preflown = [*command[:command.index("--base-url") + 1], other.base_url,
                            *command[command.index("--base-url") + 2:-1]]
                third = subprocess.run(preflown, capture_output=True, text=True, timeout=120)
                assert third.returncode == 2 and f"in use by process {first.pid}" in third.stderr
                assert other.requests == []
        finally:
            gate.set()
            first.communicate(timeout=120)
    assert first.returncode == 0
    assert sorted(r["task_id"] for r in read_results(run_folder(tmp_path, "a__w__E0") / RESULTS_FILE)) == [1, 2, 3]


BIG = "9" * 5000


def hostile(request: dict, index: int) -> Any:
    """An agent, a simulator and a judge whose replies carry a lone surrogate, NaN and a 5,000-digit integer."""
    system = "".join(str(m.get("content")) for m in request["messages"] if m.get("role") == "system")
    if "<predicted_observation>" in system:
        return f'<predicted_observation>{{"note": "bad \ud800 byte", "ratio": NaN, "count": {BIG}}}' \
               '</predicted_observation>'
    if "<verdict>" in system or not system:  # the judge, and the preflight's probes
        return make_scripted_responder()(request, index)
    if not any(m.get("role") == "tool" for m in request["messages"]):
        function = request["tools"][0]["function"]
        name, first = function["name"], function["parameters"]["required"][0]
        return {"content": "Checking \ud800", "tool_calls": [
            {"name": name, "arguments": f'{{"{first}": "RX-\ud800", "dose": NaN}}'},
            {"name": name, "arguments": f'{{"{first}": {BIG}}}'},
            {"name": name, "arguments": dict.fromkeys(function["parameters"]["required"], "X-1")}]}
    return f"Done \ud800: NaN refills, {BIG} units."


def test_hostile_replies_leave_a_valid_results_file_and_report(small_data: Path, tmp_path: Path) -> None:
    with MockLLMServer(hostile) as server:
        summary = run(RunConfig(agent_model="a", world_model="w", base_url=server.base_url, data_dir=str(small_data),
                                output_dir=str(tmp_path), run_name="hostile"), console=QUIET)
    assert summary.errors == 0 and summary.evaluated == 3
    text = (tmp_path / "hostile" / RESULTS_FILE).read_text(encoding="utf-8")
    lines = [_strict(line) for line in text.splitlines()]
    calls = lines[0]["steps"][0]["tool_calls"]
    assert lines[0]["final_answer"].startswith("Done \ufffd: NaN refills")
    assert [c["observation"].get("error") for c in calls] == ["invalid_arguments", "invalid_arguments", None]
    assert calls[2]["observation"] == {"note": "bad \ufffd byte", "ratio": "NaN", "count": BIG[:4000] + BIG[4000:]}
    html = tmp_path / "report.html"
    assert cli(["report", str(tmp_path / "hostile"), "--html", str(html)]) == 0
    data = re.search(r'<script type="application/json" id="occubench-data">(.*?)</script>', html.read_text(), re.S)
    assert data is not None and len(_strict(data.group(1))["tasks"]) == 3


def test_a_finished_runs_debug_log_gets_nothing_of_the_next_run(small_data: Path, tmp_path: Path) -> None:
    common = ["run", "--agent-model", "a", "--world-model", "w", "--api-key", "k", "--data-dir", str(small_data),
              "--output-dir", str(tmp_path), "--task-ids", "1"]
    with MockLLMServer() as server:
        assert cli([*common, "--base-url", server.base_url, "--run-name", "first", "--debug"]) == 0
        log = (tmp_path / "first" / "debug.log").read_text()
        assert "[LLM] the agent" in log
        assert cli([*common, "--base-url", server.base_url, "--run-name", "second"]) == 0  # its preflight logs too
    assert (tmp_path / "first" / "debug.log").read_text() == log
    assert not (tmp_path / "second" / "debug.log").exists()


def test_a_run_inside_another_gives_the_log_back_when_it_ends(tmp_path: Path) -> None:
    # A synthesis logs around its calibration runs: once one ends, the synthesis's lines go to its own log again.
    import logging

    from occubench.util.log import end_logging, setup_logging
    from occubench.util.redact import Redactor

    log = logging.getLogger("occubench")
    before = list(log.handlers)
    (tmp_path / "outer").mkdir()
    (tmp_path / "inner").mkdir()
    outer = setup_logging(tmp_path / "outer", debug=True, redactor=Redactor(), tag_tasks=False)
    inner = setup_logging(tmp_path / "inner", debug=True, redactor=Redactor(), tag_tasks=False)
    log.debug("during the inner run")
    end_logging(inner)
    log.debug("after the inner run")
    end_logging(outer)
    log.debug("after both")
    assert (tmp_path / "inner" / "debug.log").read_text() == "during the inner run\n"
    assert (tmp_path / "outer" / "debug.log").read_text() == "after the inner run\n"
    assert log.handlers == before  # what was there before either run


def test_a_run_raises_its_open_files_limit_for_its_connections(small_data: Path, tmp_path: Path,
                                                              server: MockLLMServer) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 3000:
        pytest.skip(f"the hard limit on open files here is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (300, hard))  # what some systems start a process with, or less
    try:
        summary = run(RunConfig(agent_model="a", world_model="w", base_url=server.base_url, data_dir=str(small_data),
                                output_dir=str(tmp_path), max_concurrency=2000, skip_preflight=True), console=QUIET)
        raised = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert summary.evaluated == 3 and raised >= 2000


def test_a_run_needing_more_open_files_than_the_hard_limit_stops_before_anything(small_data: Path, tmp_path: Path,
                                                                                server: MockLLMServer) -> None:
    def limited() -> None:  # in the child only
        resource.setrlimit(resource.RLIMIT_NOFILE, (512, 512))

    runs = tmp_path / "runs"
    done = subprocess.run([sys.executable, "-m", "occubench", "run", "--agent-model", "a", "--world-model", "w",
                           "--base-url", server.base_url, "--data-dir", str(small_data), "--output-dir", str(runs),
                           "--max-concurrency", "2000"], capture_output=True, text=True, preexec_fn=limited,
                          timeout=120)
    assert done.returncode == 2
    assert "--max-concurrency 2000 on 1 endpoint(s): up to 2,000 connections" in done.stderr
    assert "at most 512 (its hard limit, `ulimit -Hn`)" in done.stderr
    assert not server.requests and not runs.exists()  # not even the preflight, nor a run directory
