"""Nothing a ``command:`` program starts outlives its episode, and no process holding its output open holds the
episode past its time limit: with bubblewrap (the program's own PID namespace) and without (``OCCUBENCH_SANDBOX=none``:
its process group, then every process carrying the episode's mark)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from occubench.sandbox.provider import detect
from occubench.testing import MockLLMServer
from tests.mcp.test_command import command

#: A program that starts a child in a new session, keeping the program's stdout and stderr open, then prints an
#: answer and exits or sleeps past its time limit.
ESCAPES = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", sys.argv[2]], start_new_session=True)
print("the child is away", flush=True)
if sys.argv[1] == "sleeps":
    time.sleep(600)
"""


def _marked(mark: str) -> list[int]:
    """The processes whose command line holds ``mark``, as ``ps`` lists them."""
    listed = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True, check=True).stdout
    return [int(line.split()[0]) for line in listed.splitlines() if mark in line]


@pytest.mark.parametrize("sandbox", ["auto", "none"])
@pytest.mark.parametrize("program", ["exits", "sleeps"])
@pytest.mark.slow
def test_a_child_in_a_new_session_neither_outlives_nor_holds_its_episode(
        sandbox: str, program: str, tmp_path: Path, server: MockLLMServer) -> None:
    (tmp_path / "escapes.py").write_text(ESCAPES)
    mark = f"occubench-escape-{uuid.uuid4().hex}"
    argv = [sys.executable, "-m", "occubench", "run", "--suite", "executable", "--base-url", server.base_url,
            "--api-key", "k", "--output-dir", str(tmp_path), "--run-name", "r", "--limit", "1",
            "--max-seconds-per-task", "8",  # room for the program to start and answer on a loaded machine
            "--agent", command(sys.executable, str(tmp_path / "escapes.py"), program, mark)]
    try:
        # The deadline proves the run did not wait for the child, which sleeps 300 s (the run takes seconds; the
        # margin is for a loaded machine, not a measure of speed).
        done = subprocess.run(argv, capture_output=True, text=True, timeout=240,
                              env={**os.environ, "OCCUBENCH_SANDBOX": sandbox})
        deadline = time.monotonic() + 60  # the kernel may take a moment to finish killing (a poll: no cost when quick)
        while (left := _marked(mark)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert left == []
    finally:
        for pid in _marked(mark):  # a failed run leaves nothing behind either
            with contextlib.suppress(ProcessLookupError):  # one may have ended meanwhile
                os.kill(pid, signal.SIGKILL)
    assert done.returncode == 0, done.stderr
    [record] = [json.loads(line) for line in (tmp_path / "r" / "results.jsonl").read_text().splitlines()]
    assert record["status"] == "ok"
    if program == "exits":
        assert record["stop_reason"] == "answer" and record["final_answer"] == "the child is away"
    else:
        assert record["stop_reason"] == "max_seconds_per_task"


#: A program that tries to rewrite its run folder (its own verdicts to come, the results so far) and then answers.
TAMPERS = """
import pathlib, sys
run = pathlib.Path(sys.argv[1])
for name in ("results.jsonl", "planted.txt"):
    try:
        with open(run / name, "a") as out:
            out.write('{"task_id": "forged", "is_correct": true}\\n')
    except OSError as exc:
        print("refused:", exc.errno, file=sys.stderr)
print("done")
"""


@pytest.mark.skipif(not detect().provider, reason="bubblewrap confines a program's view of the results folder")
def test_a_program_cannot_rewrite_the_results_folder(tmp_path: Path, server: MockLLMServer) -> None:
    (tmp_path / "tampers.py").write_text(TAMPERS)
    out = tmp_path / "results"
    argv = [sys.executable, "-m", "occubench", "run", "--suite", "executable", "--base-url", server.base_url,
            "--api-key", "k", "--output-dir", str(out), "--run-name", "r", "--limit", "2",
            "--agent", command(sys.executable, str(tmp_path / "tampers.py"), str(out / "r"))]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (out / "r" / "results.jsonl").read_text().splitlines()]
    assert len(records) == 2 and "forged" not in {record["task_id"] for record in records}
    assert not (out / "r" / "planted.txt").exists()
    assert all("refused:" in record["agent_output"]["stderr"] for record in records)
