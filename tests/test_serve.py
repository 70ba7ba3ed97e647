"""A world served over MCP, driven by the official SDK's own clients in a separate process: stdio and HTTP."""

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

from occubench.environment import Environment, JSONObject
from occubench.serve import build_server, serve

TOOLS = [
    {"type": "function", "function": {
        "name": "deposit", "description": "Add an amount to an account.",
        "parameters": {"type": "object", "additionalProperties": False, "required": ["account", "amount"],
                       "properties": {"account": {"type": "string", "enum": ["alice", "bob"]},
                                      "amount": {"type": "integer", "minimum": 1, "description": "In cents."}}}}},
    {"type": "function", "function": {
        "name": "balance", "description": "Read an account's balance.",
        "parameters": {"type": "object", "required": ["account"], "properties": {"account": {"type": "string"}}}}},
]

# The served world. It prints on every call: over stdio, that must reach stderr and never the protocol stream.
SERVER = f"""
import sys

from occubench.environment import Environment
from occubench.serve import build_server, serve


class Ledger(Environment):
    def __init__(self):
        self.balances = {{"alice": 10}}

    def tools(self):
        return {TOOLS!r}

    def call(self, name, arguments):
        print("stray print from", name)
        account = arguments["account"]
        if account not in self.balances:
            return {{"error": f"no account {{account}}"}}
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
                    }

    out = anyio.run(session_run)

    assert [(t.name, t.description, t.input_schema) for t in out["tools"]] == [
        (f["name"], f["description"], f["parameters"]) for f in (tool["function"] for tool in TOOLS)]
    assert not out["deposit"].is_error and _observation(out["deposit"]) == {"account": "alice", "balance": 15}
    assert _observation(out["balance"]) == {"account": "alice", "balance": 15}  # the deposit stuck on the instance
    assert out["no_account"].is_error and _observation(out["no_account"]) == {"error": "no account bob"}
    assert out["unknown"].is_error and "withdraw" in _observation(out["unknown"])["error"]
    # The world's prints went to stderr, and the client never met a line on stdout that was not a message.
    assert "stray print from deposit" in (tmp_path / "stderr.log").read_text()
    assert not [r for r in caplog.records if r.name.startswith("mcp") and r.levelno >= logging.WARNING]


def test_http_serves_the_same_tools(http_url: str) -> None:
    # Client negotiates the 2026 protocol era here; the stdio test above takes the initialize-handshake era.
    async def session_run() -> tuple[list[str], JSONObject, JSONObject]:
        async with Client(streamable_http_client(http_url)) as client:
            tools = await client.list_tools()
            first = await client.call_tool("deposit", {"account": "alice", "amount": 2})
            second = await client.call_tool("deposit", {"account": "alice", "amount": 3})
            return [t.name for t in tools.tools], _observation(first), _observation(second)

    names, first, second = anyio.run(session_run)

    assert names == ["deposit", "balance"]
    assert (first["balance"], second["balance"]) == (12, 15)


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

    def tools(self) -> list[JSONObject]:
        return [{"type": "function", "function": {"name": "wait", "parameters": {"type": "object"}}}]

    def call(self, name: str, arguments: JSONObject) -> JSONObject:
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
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{log.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"server did not listen on port {port}:\n{log.read_text()}")
