"""Outside text on the terminal: strings of a world folder, of an OccuBench-format data folder and of a run folder's
results carry escape sequences (clear the screen, write the clipboard through OSC 52, retitle the window), a C1
control and rich markup (a link, a stray closing tag that rich refuses). Every command that shows them prints them as
inert text: no control byte reaches stdout or stderr, the markup is shown as written, no traceback."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from occubench.executable.registry import _WORLDS
from occubench.simulated.data import SAMPLE
from occubench.testing import MockLLMServer
from occubench.testing.responders import scripted_responder

MARKUP = "[/bold][link=http://x]y[/link]"
HOSTILE = "\x1b[2J\x1b]52;c;b3duZWQ=\x07\x1b]0;pwned\x07\x9b31m" + MARKUP
#: A line break that would start a line of its own making in a table or a one-line message.
FORGED = "\n[9/9] task forged: PASS"
#: What must never be printed: ESC, BEL, any C1 control, and bytes that are not UTF-8 (a lone 0x9b).
_UNSAFE = re.compile("[\x07\x1b\x80-\x9f\udc80-\udcff]")


def shown(*args: str, codes: tuple[int, ...] = (0,)) -> str:
    """``occubench ARGS`` as a user runs it, its output piped (so rich adds no colour of its own); what it printed,
    checked to be inert."""
    environment = {key: value for key, value in os.environ.items() if key not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    done = subprocess.run([sys.executable, "-m", "occubench", *args], capture_output=True, timeout=600,
                          env={**environment, "COLUMNS": "400"})  # wide: no cell folds the markup over two lines
    printed = (done.stdout + done.stderr).decode("utf-8", errors="surrogateescape")
    assert done.returncode in codes, printed
    assert "Traceback" not in printed and not _UNSAFE.findall(printed), printed
    return printed


@pytest.fixture
def world_dir(tmp_path: Path) -> Path:
    """A built-in world copied out of the package, its scenario, domain and an instruction hostile (its category
    is one of OccuBench's ten, checked on load)."""
    folder = tmp_path / "worlds" / "insurance_claims"
    shutil.copytree(_WORLDS / "insurance_claims", folder, ignore=shutil.ignore_patterns("__pycache__"))
    source = (folder / "__init__.py").read_text()
    for text in ('"Insurance Claims Adjudication"', '"Insurance"', '"Claim CLM-1004 '):
        assert text in source
        source = source.replace(text, repr(HOSTILE + " ") + " " + text, 1)  # adjacent literals: one string
    (folder / "__init__.py").write_text(source)
    return folder.parent


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """The OccuBench-format sample, its scenarios' names, categories and domains and its instructions hostile."""
    root = tmp_path / "data"
    shutil.copytree(SAMPLE / "worlds", root / "world_model_configs")
    scenarios = [json.loads(line) for line in (SAMPLE / "scenarios.jsonl").read_text().splitlines()]
    tasks = [json.loads(line) for line in (SAMPLE / "tasks.jsonl").read_text().splitlines()]
    for record in [*scenarios, *tasks]:
        for key in ("category", "domain", "task_scenario_name", "agent_instruction"):
            if key in record:
                record[key] = HOSTILE + record[key]
    (root / "task_scenario_all_pool.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scenarios))
    (root / "eval_benchmark_solvable.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return root


@pytest.mark.slow
def test_a_world_folders_strings_are_shown_inert_by_suites_tasks_validate_and_run(world_dir: Path,
                                                                                 tmp_path: Path) -> None:
    listed = shown("suites", "--worlds-dir", str(world_dir))
    assert MARKUP in listed and "\\x1b[2J" in listed  # shown as written, escapes visible
    assert json.loads(shown("suites", "--worlds-dir", str(world_dir), "--json"))["executable"]["listing"][0][
        "domain"].startswith(HOSTILE)  # JSON keeps the text exact, escaped as JSON
    assert MARKUP in shown("tasks", "--suite", "executable", "--worlds-dir", str(world_dir))
    assert json.loads(shown("tasks", "--suite", "executable", "--worlds-dir", str(world_dir), "--json"))
    assert "3/3 tasks valid" in shown("validate", "--worlds-dir", str(world_dir))
    shown("run", "--suite", "executable", "--worlds-dir", str(world_dir), "--agent", "reference",
          "--output-dir", str(tmp_path / "runs"), "--run-name", "r")


def test_a_data_folders_strings_are_shown_inert_by_tasks_and_run(data_dir: Path, tmp_path: Path) -> None:
    assert MARKUP in shown("tasks", "--data-dir", str(data_dir))
    with MockLLMServer() as server:
        ran = shown("run", "--data-dir", str(data_dir), "--agent-model", "agent", "--world-model", "world",
                    "--base-url", server.base_url, "--api-key", "k", "--output-dir", str(tmp_path / "runs"),
                    "--run-name", "r", "--debug")
    assert MARKUP in ran  # the categories, in the summary's table


def _hostile_run(tmp_path: Path, world_dir: Path, name: str, model: str) -> Path:
    """A run folder of an attacker's making (no ``args.json``: its results are taken whole) whose results carry
    hostile task ids, categories, domains, models (which forge a line too), error kinds and messages."""
    shown("run", "--suite", "executable", "--worlds-dir", str(world_dir), "--agent", "reference",
          "--output-dir", str(tmp_path / "runs"), "--run-name", name)
    (tmp_path / "runs" / name / "args.json").unlink()
    path = tmp_path / "runs" / name / "results.jsonl"
    results = [json.loads(line) for line in path.read_text().splitlines()]
    for i, result in enumerate(results):
        result.update(task_id=f"{HOSTILE}{i}", agent_model=model + FORGED, category=HOSTILE, domain=HOSTILE)
    results[0].update(status="error", error={"kind": HOSTILE, "message": HOSTILE}, is_correct=None)
    path.write_text("".join(json.dumps(result) + "\n" for result in results))
    return path.parent


@pytest.mark.slow
def test_a_run_folders_results_are_shown_inert_by_report_compare_and_robustness(world_dir: Path,
                                                                                 tmp_path: Path) -> None:
    first = str(_hostile_run(tmp_path, world_dir, "a", HOSTILE + "model-a"))
    second = str(_hostile_run(tmp_path, world_dir, "b", HOSTILE + "model-b"))
    assert MARKUP in shown("report", first, second)
    assert FORGED not in shown("report", first, second) + shown("compare", first, second, "--by", "agent_model")
    assert json.loads(shown("report", first, second, "--format", "json"))
    assert MARKUP in shown("report", first, second, "--format", "csv")
    shown("report", first, second, "--html", str(tmp_path / "report.html"))
    assert MARKUP in shown("compare", first, second, "--by", "agent_model")
    assert json.loads(shown("compare", first, second, "--by", "agent_model", "--format", "json"))
    assert MARKUP in shown("robustness", first, second) and FORGED not in shown("robustness", first, second)


def _hostile_model(request: dict, index: int) -> str | dict:
    """The scripted mock, every text it answers (the agent's, the world model's, the judge's) led by hostile text,
    and the world model's observations holding it too (``--debug`` prints them)."""
    reply = scripted_responder(request, index)
    if isinstance(reply, dict):
        return {**reply, "content": HOSTILE + (reply.get("content") or "")}
    return HOSTILE + reply.replace('"status"', f'"note": {json.dumps(HOSTILE)}, "status"')


def test_models_answers_and_error_messages_are_shown_inert(data_dir: Path, tmp_path: Path) -> None:
    with MockLLMServer(_hostile_model) as server:
        ran = shown("run", "--data-dir", str(data_dir), "--agent-model", "agent", "--world-model", "world",
                    "--base-url", server.base_url, "--api-key", "k", "--output-dir", str(tmp_path / "runs"),
                    "--run-name", "r", "--debug", codes=(0, 1))
    assert "[LWM] Observation" in ran and MARKUP in ran
    # An error quoting what the user gave (here, a task id) goes through the command's error handler.
    assert MARKUP in shown("tasks", "--data-dir", str(data_dir), "--task-ids", HOSTILE, codes=(2,))
