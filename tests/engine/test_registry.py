"""A suite and an agent that live outside the package run through `occubench run`: the suite found through the
occubench.suites entry-point group (an installed distribution's metadata) or named as module:attribute."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from occubench.store import read_results
from tests.conftest import run_folder

SUITE = '''
from occubench import Environment, Suite, SuiteDefinition, SuitePlan, Task, Verdict
from occubench.core.tools import ToolSpec


class Counter(Environment):
    def __init__(self):
        self.count = 0

    def tools(self):
        return [ToolSpec("add", "Add n to the counter.", {"type": "object", "properties": {"n": {"type": "integer"}},
                                                          "required": ["n"]}, writes=True)]

    def _call(self, name, arguments):
        self.count += arguments["n"]
        return {"count": self.count}


class CounterSuite(Suite):
    def tasks(self):
        return [Task(task_id=f"reach-{n}", instruction=f"Bring the counter to {n}.", scenario="Counting",
                     category="Science & Research", domain="Arithmetic", difficulty=1, env_name="counter",
                     metadata={"target": n}) for n in (3, 5)]

    def world(self, task):
        return Counter()

    def verify(self, task, trajectory, env):
        count = env.unwrapped.count
        return Verdict(is_correct=count == task.metadata["target"], feedback=f"counter at {count}",
                       details={"count": count})


def plan(config, console):
    return SuitePlan(CounterSuite().tasks(), {}, lambda models, rules: CounterSuite(), world_label=None,
                     simulated=False)


suite = SuiteDefinition(name="acme", description="a counter to bring to a target", plan=plan)
'''

AGENT = '''
import json
from occubench import Step, ToolCall


class Adder:
    """A factory: occubench calls it with an AgentContext."""

    def __init__(self, context):
        self.date = context.date

    def run(self, task, env, trajectory):
        step = Step(content=None)
        trajectory.steps.append(step)
        for index in range(task.metadata["target"]):
            step.tool_calls.append(ToolCall("add", json.dumps({"n": 1}), env.call("add", {"n": 1}), index))
        # A wrong-typed call is an observation the agent sees; the episode goes on and is scored.
        step.tool_calls.append(ToolCall("add", '{"n": "1"}', env.call("add", {"n": "1"})))
        trajectory.final_answer, trajectory.stop_reason = "done", "answer"


class Sloppy:
    def run(self, task, env, trajectory):
        env.call("add", {"n": 1})
        trajectory.final_answer, trajectory.stop_reason = "done", "answer"


sloppy = Sloppy()  # an agent object is used as it is
'''


@pytest.fixture
def third_party(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "acme_suite.py").write_text(SUITE)
    (site / "acme_agent.py").write_text(AGENT)
    info = site / "acme-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[occubench.suites]\nacme = acme_suite:suite\n")
    return {**os.environ, "PYTHONPATH": str(site)}


def occubench(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "occubench", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_entry_point_suite_and_factory_agent(third_party: dict[str, str], tmp_path: Path) -> None:
    listed = occubench(third_party, "suites", "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["acme"]["description"] == "a counter to bring to a target"
    done = occubench(third_party, "run", "--suite", "acme", "--agent", "acme_agent:Adder", "--output-dir",
                     str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    records = read_results(run_folder(tmp_path / "out", "Adder__acme__E0") / "results.jsonl")
    assert sorted((r["task_id"], r["is_correct"], r["suite"]) for r in records) == [
        ("reach-3", True, "acme"), ("reach-5", True, "acme")]
    assert all(r["verdict_details"]["count"] == int(r["task_id"][-1]) for r in records)
    last = records[0]["steps"][0]["tool_calls"][-1]["observation"]
    assert last["error"] == "invalid_arguments" and "integer" in last["message"]


def test_suite_and_agent_named_as_module_attribute(third_party: dict[str, str], tmp_path: Path) -> None:
    done = occubench(third_party, "run", "--suite", "acme_suite:suite", "--agent", "acme_agent:sloppy",
                     "--output-dir", str(tmp_path / "out"), "--run-name", "sloppy")
    assert done.returncode == 0, done.stderr
    assert [r["is_correct"] for r in read_results(tmp_path / "out" / "sloppy" / "results.jsonl")] == [False, False]
    missing = occubench(third_party, "run", "--suite", "acme", "--agent", "acme_agent:nobody")
    assert missing.returncode == 2 and "acme_agent has no attribute 'nobody'" in missing.stderr


ANSWERING = '''
from neighbour import ANSWER


class FirstToolAgent:
    """Takes no context: a class called with nothing."""

    def run(self, task, env, trajectory):
        trajectory.final_answer = ANSWER
'''


@pytest.mark.parametrize("form", ["file", "module"])
@pytest.mark.slow
def test_an_agent_by_file_path_or_by_module_from_any_folder(form: str, tmp_path: Path) -> None:
    # The README's own-agent example: `--agent my_agents:FirstToolAgent` from the folder holding my_agents.py
    # (a console script's import path lacks it), or `--agent path/to/my_agents.py:FirstToolAgent` from anywhere.
    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "my_agents.py").write_text(ANSWERING)
    (folder / "neighbour.py").write_text('ANSWER = "done"\n')
    spec, cwd = ("agents/my_agents.py:FirstToolAgent", tmp_path) if form == "file" else \
        ("my_agents:FirstToolAgent", folder)
    done = subprocess.run([sys.executable, "-m", "occubench", "run", "--suite", "executable", "--agent", spec,
                           "--task-ids", "clinic_scheduling/book_urgent_cardiology", "--run-name", "r",
                           "--output-dir", str(tmp_path / "out")], cwd=cwd, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    [record] = read_results(tmp_path / "out" / "r" / "results.jsonl")
    assert record["status"] == "ok" and record["final_answer"] == "done" and record["agent_model"] == "FirstToolAgent"


def test_an_agent_file_that_does_not_load_is_named(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def run(:\n")
    for spec, named in ((f"{tmp_path}/broken.py:Agent", "broken.py:1"), (f"{tmp_path}/none.py:Agent", "no file")):
        done = subprocess.run([sys.executable, "-m", "occubench", "run", "--suite", "executable", "--agent", spec],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 2 and named in done.stderr and "Traceback" not in done.stderr
