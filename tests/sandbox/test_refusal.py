"""No sandbox, no outside code: with no provider (``OCCUBENCH_SANDBOX=none``) every command refuses a world from
outside the package before any of its code runs (exit 2, saying why and how to install one), unless the user passes
``--trust-world-code``, which warns and is recorded. The built-in worlds still run (in a plain worker process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import BUILTIN_TASKS
from tests.sandbox.corpus import ATTACKS, BASE, Attack, make_corpus_world

WITHOUT_SANDBOX = {**os.environ, "OCCUBENCH_SANDBOX": "none"}


def occubench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "occubench", *args], capture_output=True, text=True,
                          env=WITHOUT_SANDBOX, cwd=cwd, timeout=300, check=False)


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    """A world that would write a file at import, if it ever ran; and that file."""
    mark = tmp_path / "ran"
    make_corpus_world(tmp_path / "worlds", ATTACKS["import_time_shell"], mark=mark, port=9, harness=os.getpid())
    return tmp_path / "worlds", mark


@pytest.mark.parametrize("command", [
    ["suites"], ["tasks", "--suite", "executable"], ["validate"], ["serve", "--env", BASE],
    ["run", "--suite", "executable", "--agent", "reference", "--run-name", "r"],
])
@pytest.mark.slow
def test_every_command_refuses_an_outside_world_without_a_sandbox(command: list[str], hostile: tuple[Path, Path],
                                                                  tmp_path: Path) -> None:
    worlds, mark = hostile
    done = occubench(*command, "--worlds-dir", str(worlds), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "runs only in a sandbox" in done.stderr and "--trust-world-code" in done.stderr
    assert "bubblewrap" in done.stderr and "Traceback" not in done.stderr
    assert not mark.exists() and not (tmp_path / "results").exists()


@pytest.mark.parametrize("attack", sorted(ATTACKS))
@pytest.mark.slow
def test_the_whole_corpus_is_refused_without_a_sandbox(attack: str, tmp_path: Path) -> None:
    mark = tmp_path / "outside" / "ran"
    make_corpus_world(tmp_path / "worlds", ATTACKS[attack], mark=mark, port=9, harness=os.getpid())
    done = occubench("validate", "--worlds-dir", str(tmp_path / "worlds"), cwd=tmp_path)
    assert done.returncode == 2 and "runs only in a sandbox" in done.stderr and "Traceback" not in done.stderr
    assert not mark.exists() and (tmp_path / "worlds" / "victim.txt").read_text() == "keep me"


def test_synthesis_refuses_to_execute_generated_code_without_a_sandbox(tmp_path: Path) -> None:
    from occubench.testing import MockLLMServer

    with MockLLMServer() as server:
        done = occubench("synth", "executable", "--scenario", "Insurance claims", "--out", str(tmp_path / "out"),
                         "--synth-model", "m", "--base-url", server.base_url, "--api-key", "k", cwd=tmp_path)
        asked = len(server.requests)
    assert done.returncode == 2 and "runs only in a sandbox" in done.stderr
    assert asked == 0 and not (tmp_path / "out").exists()  # refused before any request or file


@pytest.mark.slow
def test_the_trust_flag_runs_an_outside_world_as_a_plain_process_and_says_so(tmp_path: Path) -> None:
    worlds = tmp_path / "worlds"
    make_corpus_world(worlds, Attack(), mark=tmp_path / "m", port=9, harness=0)  # a clean copy
    done = occubench("run", "--suite", "executable", "--worlds-dir", str(worlds), "--agent", "reference",
                     "--run-name", "r", "--trust-world-code", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "warning: --trust-world-code" in done.stdout + done.stderr
    args = json.loads((tmp_path / "results" / "r" / "args.json").read_text())
    assert args["trust_world_code"] is True and args["sandbox"].startswith("none")
    results = [json.loads(line) for line in (tmp_path / "results" / "r" / "results.jsonl").read_text().splitlines()]
    assert len(results) == 3 and all(r["is_correct"] for r in results)


@pytest.mark.slow
def test_the_built_in_worlds_still_run_without_a_sandbox(tmp_path: Path) -> None:
    done = occubench("validate", cwd=tmp_path)
    assert done.returncode == 0 and f"{BUILTIN_TASKS}/{BUILTIN_TASKS} tasks valid" in done.stdout


def test_doctor_names_the_sandbox_or_why_there_is_none(tmp_path: Path) -> None:
    done = occubench("doctor", cwd=tmp_path)
    assert done.returncode == 0
    assert "sandbox: none (OCCUBENCH_SANDBOX=none)" in done.stdout and "--trust-world-code" in done.stdout
