"""A world served over MCP, driven by the official SDK's own clients in a separate process: stdio and HTTP. Tools
carry read-only/destructive hints from the world, and every call keeps the tool contract's error shape."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import ImageContent, TextContent

from occubench.core.environment import Environment, JSONObject
from occubench.core.tools import ToolSpec
from occubench.mcp.server import build_server, serve
from tests.core.test_images import PNG_TEXT, SHOWS, Charts

TOOLS: list[dict[str, Any]] = [
    {"name": "deposit", "description": "Add an amount to an account.", "writes": True,
     "parameters": {"type": "object", "additionalProperties": False, "required": ["account", "amount"],
                    "properties": {"account": {"type": "string", "enum": ["alice", "bob"]},
                                   "amount": {"type": "integer", "minimum": 1, "description": "In cents."}}}},
    {"name": "balance", "description": "Read an account's balance.", "writes": False,
     "parameters": {"type": "object", "required": ["account"], "properties": {"account": {"type": "string"}}}},
    {"name": "forecast", "description": "A simulated tool: whether it writes is unknown.",
     "parameters": {"type": "object", "properties": {}}},
]

# The served world. It prints on every call: over stdio, that must reach stderr and never the protocol stream.
SERVER = f"""
import sys

from occubench.core.environment import Environment
from occubench.mcp.server import build_server, serve
from occubench.core.tools import ToolError, ToolSpec

TOOLS = [ToolSpec(**tool) for tool in {TOOLS!r}]


class Ledger(Environment):
    def __init__(self):
        self.balances = {{"alice": 10}}

    def tools(self):
        return TOOLS

    def _call(self, name, arguments):
        print("stray print from", name)
        account = arguments.get("account", "alice")
        if account not in self.balances:
            raise ToolError(f"no account {{account}}")
        if name == "deposit":
            self.balances[account] += arguments["amount"]
        return {{"account": account, "balance": self.balances[account]}}


serve(Ledger(), "test-env", transport=sys.argv[1], port=int(sys.argv[2]) if len(sys.argv) > 2 else 8000)
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "ledger_server.py"
    path.write_text(SERVER)
    return path


@pytest.fixture
def http_url(script: Path, tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    with open(tmp_path / "http.log", "wb") as log:
        process = subprocess.Popen([sys.executable, str(script), "http", str(port)], stdout=log, stderr=log)
    try:
        _wait_for_port(process, port, tmp_path / "http.log")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait(timeout=5)


def test_stdio_serves_declared_schemas_and_one_stateful_instance(script: Path, tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    async def session_run() -> dict[str, Any]:
        with open(tmp_path / "stderr.log", "w") as errlog:
            params = StdioServerParameters(command=sys.executable, args=[str(script), "stdio"])
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return {
                        "tools": (await session.list_tools()).tools,
                        "deposit": await session.call_tool("deposit", {"account": "alice", "amount": 5}),
                        "balance": await session.call_tool("balance", {"account": "alice"}),
                        "no_account": await session.call_tool("balance", {"account": "bob"}),
                        "unknown": await session.call_tool("withdraw", {"account": "alice"}),
                        "invalid": await session.call_tool("deposit", {"account": "alice", "amount": 1.5}),
                        "missing": await session.call_tool("deposit", {"account": "alice"}),
                        "after": await session.call_tool("balance", {"account": "alice"}),
                    }

    out = anyio.run(session_run)

    assert [(t.name, t.description, t.input_schema) for t in out["tools"]] == [
        (tool["name"], tool["description"], tool["parameters"]) for tool in TOOLS]
    deposit, balance, forecast = (t.annotations for t in out["tools"])
    assert (deposit.read_only_hint, deposit.destructive_hint) == (False, True)
    assert balance.read_only_hint is True and forecast is None  # no hint when the world cannot say
    assert not out["deposit"].is_error and _observation(out["deposit"]) == {"account": "alice", "balance": 15}
    assert _observation(out["balance"]) == {"account": "alice", "balance": 15}  # the deposit stuck on the instance
    assert out["no_account"].is_error and _observation(out["no_account"]) == {"error": "tool_error",
                                                                              "message": "no account bob"}
    unknown = _observation(out["unknown"])
    assert out["unknown"].is_error and unknown["error"] == "unknown_tool" and "withdraw" in unknown["message"]
    assert out["invalid"].is_error and _observation(out["invalid"]) == {
        "error": "invalid_arguments", "message": "amount: 1.5 is not of type 'integer'"}
    assert out["missing"].is_error and _observation(out["missing"]) == {
        "error": "invalid_arguments", "message": "arguments: 'amount' is a required property"}
    assert _observation(out["after"]) == {"account": "alice", "balance": 15}  # rejected calls changed nothing
    # The world's prints went to stderr, and the client never met a line on stdout that was not a message.
    assert "stray print from deposit" in (tmp_path / "stderr.log").read_text()
    assert not [r for r in caplog.records if r.name.startswith("mcp") and r.levelno >= logging.WARNING]


def test_http_serves_the_same_tools(http_url: str) -> None:
    # Client negotiates the 2026 protocol era here; the stdio test above takes the initialize-handshake era.
    async def session_run() -> tuple[list[Any], JSONObject, JSONObject, Any]:
        async with Client(streamable_http_client(http_url)) as client:
            tools = await client.list_tools()
            first = await client.call_tool("deposit", {"account": "alice", "amount": 2})
            second = await client.call_tool("deposit", {"account": "alice", "amount": 3})
            invalid = await client.call_tool("deposit", {"account": "carol", "amount": 3})
            return tools.tools, _observation(first), _observation(second), invalid

    tools, first, second, invalid = anyio.run(session_run)

    assert [t.name for t in tools] == ["deposit", "balance", "forecast"]
    assert [t.annotations and t.annotations.read_only_hint for t in tools] == [False, True, None]
    assert (first["balance"], second["balance"]) == (12, 15)
    assert invalid.is_error and _observation(invalid)["error"] == "invalid_arguments"
    assert "account: 'carol' is not one of ['alice', 'bob']" in _observation(invalid)["message"]


def test_calls_run_off_the_event_loop_one_at_a_time() -> None:
    env = _Slow()

    async def session_run() -> None:
        async with Client(build_server(env, "test-env")) as client, anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(client.call_tool, "wait", {})

    anyio.run(session_run)

    assert env.most == 1
    assert threading.get_ident() not in env.threads


def test_serve_rejects_an_unknown_transport() -> None:
    with pytest.raises(ValueError, match="'sse'"):
        serve(_Slow(), "test-env", transport="sse")


class _Slow(Environment):
    """Records how many calls overlap and on which threads they run."""

    def __init__(self) -> None:
        self.active = self.most = 0
        self.threads: set[int] = set()

    def tools(self) -> list[ToolSpec]:
        return [ToolSpec("wait", "Wait a little.", {"type": "object"}, writes=False)]

    def _call(self, name: str, arguments: JSONObject) -> JSONObject:
        self.active += 1
        self.most = max(self.most, self.active)
        self.threads.add(threading.get_ident())
        time.sleep(0.02)
        self.active -= 1
        return {"ok": True}


def _observation(result: Any) -> JSONObject:
    """The observation a tool result carries, checked to be the same as text and as structured content."""
    observation = json.loads(result.content[0].text)
    assert result.structured_content == observation
    return observation


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + 60  # the world starts in a sandbox worker first
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{log.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"server did not listen on port {port}:\n{log.read_text()}")


@pytest.mark.parametrize("images", [True, False])
def test_an_image_reaches_the_official_client_as_image_content_or_as_its_text(images: bool) -> None:
    async def session_run() -> Any:
        async with Client(build_server(Charts("chart"), "charts", images=images)) as client:
            return await client.call_tool("chart", {})

    result = anyio.run(session_run)
    shown = _observation(result)["result"]["$image"]
    assert shown["delivered_as"] == ("image" if images else "text") and "data" not in shown
    if images:
        assert [type(part) for part in result.content] == [TextContent, ImageContent]
        assert (result.content[1].data, result.content[1].mime_type) == (PNG_TEXT, "image/png")
    else:
        assert len(result.content) == 1 and shown["text"] == SHOWS
