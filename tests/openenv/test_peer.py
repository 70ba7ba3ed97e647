"""`occubench serve --protocol openenv` played by OpenEnv's own clients (``MCPToolClient`` and ``GenericEnvClient``
of the openenv peer, run as a subprocess): every world kind's episodes are reset, played and rewarded; the reward
and the stored record equal a native run's for the same calls; 64 sessions play at once on one server.

The native run is the built-in agent loop whose model (the mock) replies with the calls the OpenEnv client made,
then its answer: the same calls through the same world, wrappers and verifier.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from occubench.cli import build_parser
from occubench.cli import main as cli_main
from occubench.cli.run import run_configs_from_args
from occubench.core.agent import ScriptedAgent
from occubench.engine.factory import EpisodeFactory
from occubench.testing import MockLLMServer, scripted_responder
from tests.conftest import AWM_SAMPLE, awm_sample, extra_reason, peer, write_small_data

TOKEN = "an-openenv-serve-token"
CLIENT = Path(__file__).with_name("peer_client.py")

#: What differs between a record played over OpenEnv and the native run's of the same calls, and why: the agent's
#: label and so the run's identity, the time taken, the agent model's usage and conversation (the native agent is
#: a model; the OpenEnv client brings its own), the system prompt it was shown (how to end: a reply, or submit).
AGENT_SIDE = {"agent_model", "config_hash", "duration_s", "usage", "messages", "context"}
#: An AWM world stamps its seed rows with the time it starts: two runs' observations differ in those stamps, and so
#: what the judge makes of them. Its records are compared with the stamps masked, its verdict with its own reward.
CLOCKED = {"steps", "trajectory", "is_correct", "votes", "feedback"}
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?")

#: Each world kind's run flags, the OpenEnv client that plays it, and whether its tasks have reference solutions
#: (played as the scripted calls; the others call each task's first two tools).
KINDS: dict[str, tuple[Callable[[Path], list[str]], str, bool]] = {
    "executable": (lambda root: ["--suite", "executable", "--limit", "6", "--env-mode", "E3", "--fault-mode",
                                 "harness"], "mcp", True),
    "simulated": (lambda root: ["--suite", "occubench", "--data-dir", str(write_small_data(root / "data")),
                                "--world-model", "world"], "generic", False),
    # Every day of a workplace set opens with the same instruction, by which the native run's mock finds the
    # script: one day, two trials.
    "workplace": (lambda root: ["--suite", "workplace", "--days", "1", "--seed", "4", "--trials", "2"], "mcp", True),
    "awm": (lambda root: ["--suite", "awm", "--data-dir", str(AWM_SAMPLE), "--verifier-model", "judge", "--task-ids",
                          "content_platform_1/0", "content_platform_1/1"], "generic", False),
}


@contextmanager
def serving(args: list[str], log: Path, token: str | None = TOKEN) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``occubench serve --protocol openenv ARGS --port 0`` (with the serve ``token``), its URL read from what it
    prints."""
    env = {key: value for key, value in os.environ.items() if key != "OCCUBENCH_SERVE_TOKEN"}
    with open(log, "wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "occubench", "serve", "--protocol", "openenv", *args,
                                    "--port", "0"], stdout=out, stderr=out,
                                   env={**env, "COLUMNS": "200", **({"OCCUBENCH_SERVE_TOKEN": token} if token else {})})
    try:
        deadline = time.monotonic() + 120  # a bound on waiting, not an assertion: a sandboxed world starts slowly
        while not (found := re.search(r"OpenEnv server: (http://\S+)", log.read_text())):
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield found[1], process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)


def in_peer(args: list[str], given: str, **env: str) -> Any:
    """What a script run by the openenv peer's Python prints (JSON), given ``given`` on its stdin."""
    venv = peer("openenv")
    done = subprocess.run([str(venv / "bin" / "python"), *args], input=given, capture_output=True, text=True,
                          timeout=600, env={**os.environ, **env, "NO_PROXY": "127.0.0.1,localhost",
                                            "no_proxy": "127.0.0.1,localhost"})
    assert done.returncode == 0, done.stderr[-5000:]
    return json.loads(done.stdout)


def play(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """The peer client's episodes, played as ``plan`` says (see peer_client.py)."""
    return list(in_peer([str(CLIENT)], json.dumps({"token": TOKEN, **plan}))["played"])


def reference_scripts(flags: list[str]) -> dict[str, dict[str, Any]]:
    """Each task's reference solution: its calls and answer."""
    config, = run_configs_from_args(build_parser().parse_args(["run", *flags, "--agent", "reference"]))
    factory = EpisodeFactory.create(config)
    agent = factory.plan.reference
    assert isinstance(agent, ScriptedAgent)
    return {str(task.task_id): dict(zip(("calls", "answer"), agent.script(task))) for task in factory.plan.tasks}


def replaying(scripts: dict[str, tuple[list[Any], str]]) -> Callable[[dict, int], str | dict]:
    """A mock whose agent replies, for the task whose instruction it is given, with ``scripts``' calls in turn and
    then its answer; every other role as the scripted mock plays it."""
    def respond(request: dict, index: int) -> str | dict:
        messages = request["messages"]
        script = scripts.get(next((m["content"] for m in messages if m["role"] == "user"), ""))
        if not request.get("tools") or script is None:  # not the agent of an episode (the preflight, say)
            return scripted_responder(request, index)
        calls, answer = script
        made = sum(1 for m in messages if m["role"] == "tool")
        if made == len(calls):
            return answer
        name, arguments = calls[made]
        return {"content": None, "tool_calls": [{"name": name, "arguments": arguments}]}
    return respond


def records(run_dir: Path) -> dict[tuple[Any, int], dict[str, Any]]:
    lines = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    return {(record["task_id"], record["trial"]): record for record in lines}


# The executable kind in the README's run (it carries the harness's faults); the others, 5-10 s each, in the slow run.
@pytest.mark.parametrize("kind", [kind if kind == "executable" else pytest.param(kind, marks=pytest.mark.slow)
                                  for kind in KINDS])
def test_every_world_kinds_episodes_are_played_and_rewarded_as_a_native_run_records_them(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    peer("openenv")
    if kind == "awm":
        awm_sample()
        pytest.importorskip("sqlalchemy", reason=extra_reason("awm"))
        request.getfixturevalue("sandbox")
        monkeypatch.setenv("OCCUBENCH_CACHE_DIR", str(tmp_path / "cache"))
    flags, client, scripted = KINDS[kind]
    run_flags = flags(tmp_path)
    scripts = reference_scripts(run_flags) if scripted else {}
    replies: dict[str, tuple[list[Any], str]] = {}
    runs, log = tmp_path / "runs", tmp_path / "serve.log"
    with MockLLMServer(responder=replaying(replies)) as mock:
        common = [*run_flags, "--base-url", mock.base_url, "--api-key", "k", "--output-dir", str(runs)]
        with serving([*common, "--run-name", "openenv"], log) as (url, process):
            played = play({"url": url, "client": client, "sessions": 2, "tasks": None, "scripts": scripts})
            assert process.wait(timeout=300) == 0, log.read_text()
        replies.update({episode["start"]["instruction"]: (episode["calls"], episode["answer"]) for episode in played})
        # What the mock finds by an instruction is what every episode of it played.
        assert all(replies[e["start"]["instruction"]] == (e["calls"], e["answer"]) for e in played)
        assert cli_main(["run", *common, "--agent-model", "scripted", "--run-name", "native"]) == 0

    served, native = records(runs / "openenv"), records(runs / "native")
    assert len(played) == len(served) == len(native) > 0 and served.keys() == native.keys()
    for episode in played:
        key = (episode["start"]["task_id"], episode["start"]["trial"])
        record, twin = served[key], native[key]
        assert record["status"] == "ok" and record["agent_model"] == "openenv", record.get("error")
        different = {field for field in record.keys() | twin.keys() if record.get(field) != twin.get(field)}
        expected = AGENT_SIDE | (CLOCKED if kind == "awm" else set())
        assert different <= expected, {field: (record.get(field), twin.get(field)) for field in different}
        if kind == "awm":
            assert STAMP.sub("", json.dumps(record["steps"])) == STAMP.sub("", json.dumps(twin["steps"]))
            twin = record
        # The reward is the verdict, in the final step, in the answer to submit and in the state.
        reward = float(twin["is_correct"])
        assert (episode["reward"], episode["done"], episode["data"]["reward"]) == (reward, True, reward)
        assert episode["metadata"]["is_correct"] == twin["is_correct"]
        state = episode["state"]  # MCPToolClient's State keeps two fields; GenericEnvClient's dict every one
        assert (state["episode_id"], state["step_count"]) == (episode["start"]["episode_id"], len(episode["calls"]) + 1)
        assert client == "mcp" or (state["done"], state["reward"]) == (True, reward)
        assert [call["name"] for step in record["steps"] for call in step["tool_calls"]] == \
            [name for name, _ in episode["calls"]]
    assert any(episode["calls"] for episode in played)
    if kind == "executable":  # the harness's faults reached the calls, as in the native run
        assert any(record["fault_events"] for record in served.values())
        assert any(episode["reward"] == 1.0 for episode in played)


@pytest.mark.slow  # 64 sessions: over 20 s
def test_sixty_four_sessions_play_at_once_on_one_server(tmp_path: Path) -> None:
    peer("openenv")
    flags = ["--suite", "executable", "--trials", "3"]  # 30 tasks × 3 trials: 90 episodes
    runs, log = tmp_path / "runs", tmp_path / "serve.log"
    with serving([*flags, "--max-concurrency", "64", "--output-dir", str(runs), "--run-name", "many"],
                 log) as (url, process):
        played = play({"url": url, "client": "mcp", "sessions": 64, "tasks": None, "barrier": True,
                       "scripts": reference_scripts(flags)})
        assert process.wait(timeout=300) == 0, log.read_text()
    served = records(runs / "many")
    # Every session's first episode was open before any session made a call: 64 at once.
    assert len(played) == len(served) == 90
    assert len({(e["start"]["task_id"], e["start"]["trial"]) for e in played}) == 90
    assert all(e["reward"] == 1.0 and e["done"] for e in played)  # the reference solves every task
    assert all(r["status"] == "ok" and r["is_correct"] and r["agent_model"] == "openenv" for r in served.values())
