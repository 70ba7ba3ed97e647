"""``occubench serve`` with run flags: a run's episodes played by outside MCP clients, verified and stored as any run's.

The serving process is the real command; the clients are the example agent (the official MCP client and the
``openai`` SDK, talking to the mock server) and, for the client that leaves, the MCP SDK's own client.
"""

from __future__ import annotations

import asyncio
import importlib.util
import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from rich.console import Console

from occubench.cli import main as cli_main
from occubench.core.task import Task
from occubench.core.trajectory import Trajectory
from occubench.mcp.episodes import EpisodeHub, McpAgent
from occubench.store import ResultStore
from occubench.testing import MockLLMServer
from tests.conftest import write_small_data
from tests.core.test_images import PNG_TEXT, TASK, Charts
from tests.mcp.test_server import _Slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mcp_agent.py"
#: The serve token of the servers these tests start: the listing of their episodes needs it.
TOKEN = "a-serve-token"

#: Each world kind's run flags: ten episodes of its tasks.
SUITES: dict[str, Callable[[Path], list[str]]] = {
    "executable": lambda root: ["--suite", "executable"],
    "simulated": lambda root: ["--suite", "occubench", "--data-dir", str(write_small_data(root / "data", copies=4)),
                               "--world-model", "world"],
    "workplace": lambda root: ["--suite", "workplace", "--days", "10", "--seed", "4"],
}


def example_agent() -> ModuleType:
    spec = importlib.util.spec_from_file_location("occubench_example_mcp_agent", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serving(args: list[str], log: Path) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    port = free_port()
    with open(log, "wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "occubench", "serve", *args, "--port", str(port)],
                                   stdout=out, stderr=out,
                                   env={**os.environ, "COLUMNS": "200", "OCCUBENCH_SERVE_TOKEN": TOKEN})
    try:
        yield port, process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)


def open_episodes(port: int, count: int, process: subprocess.Popen[bytes], log: Path) -> list[dict[str, Any]]:
    """The episodes the server lists, once it lists ``count`` of them."""
    deadline = time.monotonic() + 120  # a bound on waiting, not an assertion: the worlds start in sandboxes
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        try:
            listed = httpx.get(f"http://127.0.0.1:{port}/episodes",
                               headers={"Authorization": f"Bearer {TOKEN}"}).json()
        except httpx.TransportError:
            listed = []
        if len(listed) >= count:
            return list(listed)
        time.sleep(0.1)
    raise AssertionError(f"the server never listed {count} episodes:\n{log.read_text()}")


def records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("kind", SUITES)
@pytest.mark.slow
def test_ten_outside_episodes_of_every_world_kind_are_verified_and_stored_like_native_ones(
        kind: str, tmp_path: Path, server: MockLLMServer, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    common = [*SUITES[kind](tmp_path), "--base-url", server.base_url, "--api-key", "test-key", "--limit", "10",
              "--output-dir", str(runs)]
    # The example agent's own model: the mock, as the openai SDK finds it in the environment.
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    log = tmp_path / "serve.log"
    with serving([*common, "--run-name", "served", "--max-concurrency", "10"], log) as (port, process):
        episodes = open_episodes(port, 10, process, log)

        async def drive() -> None:  # ten clients at once, one per episode
            async with anyio.create_task_group() as group:
                for episode in episodes:
                    group.start_soon(example_agent().play, episode["url"], episode["instruction"], "outside", 50)

        anyio.run(drive)
        assert process.wait(timeout=300) == 0, log.read_text()
    assert cli_main(["run", *common, "--agent-model", "outside", "--run-name", "native"]) == 0

    served, native = records(runs / "served"), records(runs / "native")
    assert len(served) == 10 and {r["task_id"] for r in served} == {e["task_id"] for e in episodes}
    assert all(r["status"] == "ok" and r["is_correct"] is not None and r["agent_model"] == "mcp" for r in served)
    # Identical in form: the same fields, steps and calls; the same calls made and verdicts reached (the example
    # agent and the built-in loop got the same scripted replies).
    assert {tuple(r) for r in served} == {tuple(r) for r in native}
    by_task = {r["task_id"]: r for r in native}
    for record in served:
        twin = by_task[record["task_id"]]
        assert [(c["name"], json.loads(c["arguments"])) for s in record["steps"] for c in s["tool_calls"]] == \
            [(c["name"], json.loads(c["arguments"])) for s in twin["steps"] for c in s["tool_calls"]]
        assert {tuple(s) for s in record["steps"]} == {tuple(s) for s in twin["steps"]}
        assert (record["is_correct"], record["final_answer"]) == (twin["is_correct"], twin["final_answer"])
    assert any(c for r in served for s in r["steps"] for c in s["tool_calls"])

    capsys.readouterr()
    assert cli_main(["report", str(runs / "served")]) == 0
    assert "served" in capsys.readouterr().out


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.slow
def test_a_client_that_leaves_mid_episode_is_an_agent_error_not_a_score(mode: str, tmp_path: Path,
                                                                       server: MockLLMServer) -> None:
    # legacy: the client ends its MCP session (DELETE) and opens no other; auto (the 2026 protocol, no sessions):
    # it just goes quiet. Either way the episode is abandoned after --idle-timeout.
    run_dir = tmp_path / "left"
    log = tmp_path / "serve.log"
    with serving(["--suite", "executable", "--limit", "1", "--base-url", server.base_url, "--api-key", "k",
                  "--output-dir", str(tmp_path), "--run-name", "left", "--idle-timeout", "1"], log) as (port, process):
        [episode] = open_episodes(port, 1, process, log)

        async def call_then_leave() -> Any:
            async with Client(streamable_http_client(episode["url"]), mode=mode) as client:
                tool = (await client.list_tools()).tools[0]
                return await client.call_tool(tool.name, {"no_such_argument": [1e308, {"deep": [[[]]]}]})

        wrong = anyio.run(call_then_leave)
        assert process.wait(timeout=120) == 1, log.read_text()  # an episode ended in an error
    assert wrong.is_error and json.loads(wrong.content[0].text)["error"] == "invalid_arguments"
    [result] = ResultStore(run_dir).load()
    assert result.status == "error" and result.error is not None and result.error.kind == "agent"
    assert result.is_correct is None
    assert [call.observation["error"] for call in result.tool_calls] == ["invalid_arguments"]


def test_serve_prints_a_tasks_text_as_text() -> None:
    # A world's strings with a screen clear, a clipboard write (OSC 52), a title change and rich markup.
    task = Task(task_id="t\x1b[2J", instruction="Pay \x1b]52;c;ZXZpbA==\x07 [link=http://evil.example]here[/link] "
                "[/bold]", scenario="Claims\x1b]0;owned\x07", category="c", domain="d", difficulty=1, env_name="e")
    shown = io.StringIO()
    agent = McpAgent(EpisodeHub(port=0), max_steps=5, date="2025-01-01", console=Console(file=shown, width=400))

    async def main() -> Trajectory:
        trajectory = Trajectory()
        playing = asyncio.create_task(agent.arun(task, _Slow(), trajectory))
        while not agent.hub.episodes:
            await asyncio.sleep(0.01)
        [episode] = agent.hub.episodes.values()
        async with Client(streamable_http_client(agent.hub.url(episode))) as client:
            await client.call_tool("submit", {"answer": "done"})
        await playing
        return trajectory

    assert asyncio.run(main()).final_answer == "done"
    printed = shown.getvalue()
    assert "\x1b" not in printed and "\x07" not in printed  # no byte the terminal would act on
    assert "[link=http://evil.example]here[/link] [/bold]" in printed and "\\x1b]52;c;" in printed


def test_an_outside_agent_that_takes_images_gets_image_content_and_the_result_holds_none() -> None:
    agent = McpAgent(EpisodeHub(port=0), max_steps=5, date="2025-01-01", images=True, console=Console(quiet=True))

    async def main() -> tuple[Trajectory, Any]:
        trajectory = Trajectory()
        playing = asyncio.create_task(agent.arun(TASK, Charts("chart"), trajectory))
        while not agent.hub.episodes:
            await asyncio.sleep(0.01)
        [episode] = agent.hub.episodes.values()
        async with Client(streamable_http_client(agent.hub.url(episode))) as client:
            shown = await client.call_tool("chart", {})
            await client.call_tool("submit", {"answer": "January 3, February 7."})
        await playing
        return trajectory, shown

    trajectory, shown = asyncio.run(main())
    assert [part.type for part in shown.content] == ["text", "image"]
    assert (shown.content[1].data, shown.content[1].mime_type) == (PNG_TEXT, "image/png")
    [call] = trajectory.tool_calls
    assert call.observation["result"]["$image"]["delivered_as"] == "image"
    assert json.loads(shown.content[0].text) == call.observation and PNG_TEXT not in json.dumps(call.observation)
