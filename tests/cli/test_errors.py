"""Bad command lines, across every subcommand: each is refused with exit status 2 and one line on stderr that names
the flag or file at fault, never a traceback, and before anything runs or any request is sent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _pytest.mark import ParameterSet

from occubench.cli import main

#: Where an endpoint is needed: nothing listens on the discard port, and every row fails before calling it.
URL = "http://127.0.0.1:9/v1"
OFFLINE = ["--suite", "executable", "--agent", "reference"]
LLM = ["--agent-model", "m", "--world-model", "w", "--base-url", URL, "--api-key", "k"]

# (command line, text the error line must contain). {tmp}/... paths are made by the `files` fixture.
BAD: list[tuple[list[str], str] | ParameterSet] = [
    # run: numbers out of range or not numbers
    (["run", *OFFLINE, "--max-steps", "0"], "--max-steps"),
    (["run", *OFFLINE, "--max-steps", "many"], "--max-steps"),
    (["run", *OFFLINE, "--trials", "0"], "--trials"),
    (["run", *OFFLINE, "--trials", "-1"], "--trials"),
    (["run", *OFFLINE, "--trials", "1.5"], "--trials"),
    (["run", *OFFLINE, "--num-votes", "0"], "--num-votes"),
    (["run", *OFFLINE, "--max-workers", "0"], "--max-workers"),
    (["run", *OFFLINE, "--max-workers", "-3"], "--max-workers"),
    (["run", *OFFLINE, "--max-connections", "0"], "--max-connections"),
    (["run", *OFFLINE, "--limit", "0"], "--limit"),
    (["run", *OFFLINE, "--limit", "-2"], "--limit"),
    (["run", "--suite", "workplace", "--agent", "reference", "--days", "0"], "--days"),
    (["run", "--suite", "workplace", "--agent", "reference", "--days", "-1"], "--days"),
    (["run", *OFFLINE, "--fault-count", "-1"], "--fault-count"),
    (["run", *OFFLINE, "--fault-duration", "0"], "--fault-duration"),
    (["run", *OFFLINE, "--history-window", "0"], "--history-window"),
    (["run", *OFFLINE, "--max-tokens", "0"], "--max-tokens"),
    (["run", *OFFLINE, "--max-tokens-per-task", "-5"], "--max-tokens-per-task"),
    (["run", *OFFLINE, "--max-seconds-per-task", "0"], "--max-seconds-per-task"),
    (["run", *OFFLINE, "--max-cost", "-1"], "--max-cost"),
    (["run", *OFFLINE, "--request-timeout", "0"], "--request-timeout"),
    (["run", *OFFLINE, "--request-timeout", "nan"], "--request-timeout"),
    (["run", *OFFLINE, "--retry-budget", "-5"], "--retry-budget"),
    (["run", *OFFLINE, "--temperature", "warm"], "--temperature"),
    (["run", *OFFLINE, "--seed", "x"], "--seed"),
    (["run", *OFFLINE, "--fail-on-error", "2"], "--fail-on-error"),
    (["run", *OFFLINE, "--ray-workers", "0"], "--ray-workers"),
    # run: unknown choices and malformed values
    (["run", *OFFLINE, "--env-mode", "E9"], "--env-mode"),
    (["run", *OFFLINE, "--fault-mode", "sometimes"], "--fault-mode"),
    (["run", *OFFLINE, "--executor", "spark"], "--executor"),
    (["run", "--suite", "workplace", "--agent", "reference", "--guidance", "4"], "--guidance"),
    (["run", "--suite", "nosuch", "--agent", "reference"], "--suite"),
    (["run", "--suite", "executable", "--agent", "magic"], "--agent"),
    (["run", *OFFLINE, "--date", "2024-13-01"], "--date"),
    (["run", *OFFLINE, "--run-name", "a/b"], "--run-name"),
    # options are never abbreviated: --config is not --config-dir, --agent-mod not --agent-model
    (["tasks", "--config", "x.toml"], "--config x.toml"),
    (["run", *OFFLINE, "--agent-mod", "m"], "--agent-mod"),
    (["run", *OFFLINE, "--difficulty", "hard"], "--difficulty"),
    (["run", *OFFLINE, "--task-ids", "nosuch"], "--task-ids"),
    (["run", *OFFLINE, "--no-such-flag"], "--no-such-flag"),
    (["run", *OFFLINE, "--with-plan=yes"], "--with-plan"),
    (["run", *OFFLINE, "--max-steps"], "--max-steps"),
    # run: JSON parameters
    (["run", *LLM, "--agent-params", "{bad"], "--agent-params"),
    (["run", *LLM, "--agent-params", "[1, 2]"], "--agent-params"),
    (["run", *LLM, "--world-params", "nope"], "--world-params"),
    (["run", *LLM, "--verifier-params", "3"], "--verifier-params"),
    (["run", *LLM, "--npc-params", '{"a": }'], "--npc-params"),
    # run: files and folders
    (["run", *OFFLINE, "--config", "{tmp}/missing.toml"], "missing.toml"),
    (["run", *OFFLINE, "--config", "{tmp}/garbled.toml"], "garbled.toml"),
    (["run", *OFFLINE, "--config", "{tmp}/unknown_key.toml"], "unknown_key.toml"),
    (["run", *OFFLINE, "--config", "{tmp}/bad_value.toml"], "bad_value.toml"),
    (["run", *OFFLINE, "--config", "{tmp}/binary.toml"], "binary.toml"),
    (["run", *OFFLINE, "--config", "{tmp}"], "--config"),
    (["run", *OFFLINE, "--prices", "{tmp}/missing.json", "--output-dir", "{tmp}/out"], "missing.json"),
    (["run", *OFFLINE, "--worlds-dir", "{tmp}/missing", "--output-dir", "{tmp}/out"], "--worlds-dir"),
    (["run", "--suite", "workplace", "--agent", "reference", "--workplace-dir", "{tmp}/missing",
      "--output-dir", "{tmp}/out"], "{tmp}/missing"),
    (["run", *LLM, "--eval-data", "{tmp}/missing.jsonl", "--output-dir", "{tmp}/out"], "missing.jsonl"),
    # tasks
    (["tasks", "--limit", "0"], "--limit"),
    (["tasks", "--suite", "workplace", "--days", "0"], "--days"),
    (["tasks", "--suite", "nosuch"], "--suite"),
    (["tasks", "--seed", "x"], "--seed"),
    (["tasks", "--data-dir", "{tmp}/missing"], "{tmp}/missing"),
    (["tasks", "--suite", "executable", "--worlds-dir", "{tmp}/file.txt"], "--worlds-dir"),
    # validate
    (["validate", "--suite", "workplace", "--days", "0"], "--days"),
    (["validate", "--suite", "workplace", "--days", "-1"], "--days"),
    (["validate", "--suite", "nosuch"], "--suite"),
    (["validate", "--suite", "occubench"], "--suite"),
    (["validate", "--worlds-dir", "{tmp}/missing"], "--worlds-dir"),
    # workplace generate
    (["workplace", "generate", "--days", "0", "--seed", "1", "--out", "{tmp}/days"], "--days"),
    (["workplace", "generate", "--days", "2", "--seed", "1"], "--out"),
    (["workplace", "generate", "--days", "2", "--seed", "1", "--out", "{tmp}/file.txt"], "--out"),
    (["workplace", "explode"], "ACTION"),
    # serve
    (["serve", "--env", "insurance_claims", "--port", "70000"], "--port"),
    (["serve", "--env", "insurance_claims", "--port", "-1"], "--port"),
    (["serve", "--env", "insurance_claims", "--port", "http"], "--port"),
    (["serve", "--env", "nosuch"], "--env"),
    (["serve"], "--data-dir"),  # a run's episodes, of the default suite
    (["serve", "--suite", "executable", "--transport", "stdio"], "--transport stdio"),
    (["serve", "--suite", "executable", "--agent", "llm"], "drop --agent"),
    (["serve", "--suite", "executable", "--host", "0.0.0.0"], "OCCUBENCH_SERVE_TOKEN"),
    (["run", "--suite", "executable", "--agent", "command:python {mcp_url} {nope}"], "{nope}"),
    (["run", "--suite", "executable", "--agent", "mcp", "--executor", "ray"], "--executor ray"),
    (["serve", "--env", "insurance_claims", "--transport", "sse"], "--transport"),
    (["serve", "--env", "insurance_claims", "--transport", "http", "--host", "0.0.0.0"], "OCCUBENCH_SERVE_TOKEN"),
    (["serve", "--env", "insurance_claims", "--transport", "http", "--token-file", "{tmp}/missing"], "--token-file"),
    (["serve", "--env", "insurance_claims", "--transport", "http", "--token-file", "{tmp}/empty.txt"],
     "--token-file"),
    (["serve", "--env", "insurance_claims", "--worlds-dir", "{tmp}/missing"], "--worlds-dir"),
    # report, compare, robustness
    (["report", "{tmp}/run", "--resamples", "0"], "--resamples"),
    (["report", "{tmp}/run", "--resamples", "-5"], "--resamples"),
    (["report", "{tmp}/run", "--resamples", "1000000000"], "--resamples"),
    (["report", "{tmp}/run", "--format", "xml"], "--format"),
    (["report", "{tmp}/run", "--seed", "x"], "--seed"),
    (["report", "{tmp}/missing"], "{tmp}/missing"),
    (["report", "{tmp}/empty"], "{tmp}/empty"),
    (["report", "{tmp}/run", "--prices", "{tmp}/missing.json"], "missing.json"),
    (["report", "{tmp}/run", "--prices", "{tmp}/garbled.json"], "garbled.json"),
    (["report"], "RUN_DIR"),
    (["compare", "{tmp}/run", "--format", "xml"], "--format"),
    (["compare", "{tmp}/missing"], "{tmp}/missing"),
    (["robustness", "{tmp}/missing"], "{tmp}/missing"),
    (["robustness", "{tmp}/empty"], "{tmp}/empty"),
    # rescore, view
    (["rescore", "{tmp}/run"], "--verifier-model"),
    (["rescore", "{tmp}/missing", "--verifier-model", "m", "--base-url", URL], "{tmp}/missing"),
    (["rescore", "{tmp}/run", "--verifier-model", "m", "--verifier-params", "{bad"], "--verifier-params"),
    (["view", "--port", "70000"], "--port"),
    (["view", "{tmp}/file.txt"], "{tmp}/file.txt"),
    # export
    (["export", "{tmp}/run", "--format", "parquet", "--out", "{tmp}/o"], "--format"),
    (["export", "{tmp}/run", "--out", "{tmp}/o.jsonl", "--prices", "{tmp}/garbled.json"], "--prices"),
    (["export", "{tmp}/run", "--format", "atif", "--out", "{tmp}/empty"], "{tmp}/empty"),
    (["export", "{tmp}/run", "--format", "atif", "--out", "{tmp}/file.txt"], "{tmp}/file.txt"),
    (["export", "{tmp}/run", "--format", "atif", "--out", "{tmp}/no/o"], "{tmp}/no"),
    (["export", "{tmp}/missing", "--format", "atif", "--out", "{tmp}/o"], "{tmp}/missing"),
    (["export", "{tmp}/run", "--format", "atif", "--out", "{tmp}/o", "--prices", "{tmp}/garbled.json"],
     "garbled.json"),
    (["view", "--port", "-1"], "--port"),
    # synth
    (["synth", "executable", "--out", "{tmp}/s", "--synth-model", "m", "--scenario", "x", "--worlds", "0"],
     "--worlds"),
    (["synth", "executable", "--out", "{tmp}/s", "--synth-model", "m", "--scenario", "x", "--tasks", "2"],
     "--tasks"),
    (["synth", "executable", "--out", "{tmp}/s", "--synth-model", "m", "--scenario", "x", "--max-workers", "0"],
     "--max-workers"),
    (["synth", "simulated", "--out", "{tmp}/s", "--runs", "0"], "--runs"),
    (["synth", "simulated", "--out", "{tmp}/s", "--tasks-per-scenario", "17"], "--tasks-per-scenario"),
    (["synth", "simulated", "--out", "{tmp}/s", "--agent-params", "{"], "--agent-params"),
    (["synth", "simulated", "--out", "{tmp}/s", "--synth-params", "[]"], "--synth-params"),
    (["synth", "simulated", "--config", "{tmp}/missing.toml"], "missing.toml"),
    (["synth", "simulated", "--out", "{tmp}/s", "--synth-model", "m", "--agent-model", "a", "--world-model", "w",
      "--scenario", "x", "--base-url", URL], "--category"),
    (["synth", "simulated", "--out", "{tmp}/s", "--solvable-threshold", "2"], "--solvable-threshold"),
    (["synth", "nosuch"], "TRACK"),
    # data, and the command itself
    (["data", "verify", "--dir", "{tmp}/missing"], "{tmp}/missing"),
    (["data"], "ACTION"),
    (["nosuch"], "nosuch"),
    ([], "COMMAND"),
]


def _ids(rows: list[tuple[list[str], str] | ParameterSet]) -> list[str]:
    return [" ".join(row.values[0] if isinstance(row, ParameterSet) else row[0]) or "(nothing)"  # type: ignore[arg-type]
            for row in rows]


@pytest.fixture
def files(tmp_path: Path) -> Path:
    return make_files(tmp_path)


def make_files(tmp_path: Path) -> Path:
    """The files and folders the rows name: broken configs and price files, an empty and a real run folder."""
    (tmp_path / "garbled.toml").write_text("max_steps = = 5\n[unclosed", encoding="utf-8")
    (tmp_path / "unknown_key.toml").write_text("max_stepz = 5\n", encoding="utf-8")
    (tmp_path / "bad_value.toml").write_text('trials = "three"\n', encoding="utf-8")
    (tmp_path / "binary.toml").write_bytes(b"\xff\xfe\x00garbage")
    (tmp_path / "garbled.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "file.txt").write_text("a file, not a folder", encoding="utf-8")
    (tmp_path / "empty.txt").write_text("\n", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "results.jsonl").write_text("", encoding="utf-8")
    run = tmp_path / "run"
    run.mkdir()
    record = {"task_id": 1, "task_scenario_name": "S", "category": "Technology & IT", "domain": "D",
              "difficulty_level": 1, "agent_model": "A", "world_model": "sim", "env_mode": "E0", "is_correct": True,
              "status": "ok", "votes": [], "usage": {}, "final_answer": "done", "steps": [], "fault_events": []}
    (run / "results.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    (run / "args.json").write_text(json.dumps({"suite": "occubench"}), encoding="utf-8")
    return tmp_path


def test_the_table_is_large_enough() -> None:
    assert len(BAD) >= 65


@pytest.mark.parametrize(("argv", "named"), BAD, ids=_ids(BAD))
def test_bad_command_line(argv: list[str], named: str, files: Path, capsys: pytest.CaptureFixture[str],
                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(files)  # default folders (./results, ./data) are the test's own
    monkeypatch.delenv("OCCUBENCH_SERVE_TOKEN", raising=False)
    argv = [arg.replace("{tmp}", str(files)) for arg in argv]
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse's refusals
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert named.replace("{tmp}", str(files)) in lines[0]
    assert not (files / "out").exists() and not (files / "results").exists()  # nothing ran


def test_the_evaluate_module_refuses_in_one_line_too() -> None:
    done = subprocess.run([sys.executable, "-m", "occubench.evaluate", "--max-steps", "0"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        line for line in done.stderr.strip().splitlines() if "--max-steps" in line] != []


def test_validate_api_refuses_no_days() -> None:
    from rich.console import Console

    from occubench.core.suite import ValidateOptions
    from occubench.engine.registry import load_suite
    from occubench.errors import ConfigError

    validate = load_suite("workplace").validate
    assert validate is not None
    with pytest.raises(ConfigError, match="--days"):
        validate(ValidateOptions(days=0, seed=0), Console())


TWO_TASKS = ["--task-ids", "insurance_claims/pay_water_claim", "insurance_claims/review_open_thefts"]


@pytest.mark.parametrize(("extra", "episodes"), [(["--trials", "3", "--run-name", "piped"], 6),
                                                 (["--env-mode", "E0", "E1"], 4)], ids=["one run", "matrix"])
def test_run_into_a_closed_pipe_ends_quietly(extra: list[str], episodes: int, tmp_path: Path) -> None:
    # `occubench run ... | head` once head has left: the reader end is closed before the run prints anything.
    read, write = os.pipe()
    process = subprocess.Popen([sys.executable, "-m", "occubench", "run", *OFFLINE, *TWO_TASKS, *extra,
                                "--output-dir", str(tmp_path)], stdout=write, stderr=subprocess.PIPE, text=True,
                               cwd=tmp_path)
    os.close(write)
    os.close(read)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    assert "Traceback" not in err and "Error" not in err
    lines = [json.loads(line) for path in tmp_path.glob("*/results.jsonl") for line in path.read_text().splitlines()]
    assert len(lines) == episodes and all(line["status"] == "ok" for line in lines)
