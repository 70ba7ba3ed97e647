"""Every built-in world: valid (reference passes, do-nothing and wrong solutions fail), big enough, and robust to
hostile arguments."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from occubench.executable import ExecutableEnvironment, load_world, validate
from occubench.executable.registry import world_names
from occubench.executable.validate import world_problems

HOSTILE = ["' OR '1'='1", "x'); DROP TABLE claims; --", "../../etc/passwd", "", "🦀" * 50, "%", "NULL"]


@pytest.mark.parametrize("name", world_names())
def test_world_is_valid(name: str) -> None:
    world = load_world(name)
    problems, results = validate([world])
    assert problems == {name: []}
    for result in results:
        assert (result.reference, result.noop, result.wrong, result.problems) == (True, False, False, []), \
            result.task.task_id


@pytest.mark.parametrize("name", world_names())
def test_hostile_arguments_never_escape_a_tool(name: str) -> None:
    world = load_world(name)
    env = ExecutableEnvironment(world)
    tables = env.db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
    for tool in world.tools.values():
        parameters = tool.spec.parameters["properties"]
        strings = [p for p, spec in parameters.items() if spec.get("type") == "string" and "enum" not in spec]
        for payload in HOSTILE:
            arguments = {p: payload if p in strings else _sample(spec) for p, spec in parameters.items()}
            before = env.state_diff()
            observation = env.call(tool.name, arguments)
            json.dumps(observation, allow_nan=False)  # always a JSON object, whatever came in
            assert "error" not in observation or observation["error"] in ("tool_error", "invalid_arguments"), \
                (tool.name, payload, observation)  # a domain failure or a rejection, never a crash inside
            if not tool.writes:
                assert env.state_diff() == before, (tool.name, payload)  # a read changes nothing
    assert env.db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == tables


def _sample(spec: dict) -> object:
    if "enum" in spec:
        return spec["enum"][0]
    return {"integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {}}.get(spec.get("type"), "x")


def test_suite_size() -> None:
    worlds = [load_world(name) for name in world_names()]
    assert len(worlds) >= 10 and len({w.category for w in worlds}) >= 5
    assert all(not world_problems(world) for world in worlds)


@pytest.mark.slow
def test_cli_lists_and_validates() -> None:
    listing = subprocess.run([sys.executable, "-m", "occubench", "suites", "--json"], capture_output=True, text=True)
    entries = json.loads(listing.stdout)["executable"]["listing"]
    assert [e["name"] for e in entries] == world_names()
    assert all(e["tools"] >= 5 and e["tasks"] >= 3 for e in entries)
    done = subprocess.run([sys.executable, "-m", "occubench", "validate", "--suite", "executable"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:]
    assert f"{sum(e['tasks'] for e in entries)}/{sum(e['tasks'] for e in entries)} tasks valid" in done.stdout
