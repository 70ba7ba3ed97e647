"""A client of `occubench serve --protocol openenv`: one session per rollout, each playing one episode.

The session is made over HTTP (JSON-RPC ``openenv/session/create`` on ``POST /mcp``) so that it outlives any one
connection: each operation then attaches a WebSocket to it (``/ws?session_id=...``), sends one message, reads the
answer and detaches, so that the rollout's task (in the eval process) and the tool server (a process of its own)
can both play it. ``reset`` with a ``task_id`` starts the run's next pending episode of that task; a ``step`` with
``call_tool`` makes a call, and the step that ends the episode (the ``submit`` call, or the one that reaches the
run's ``--max-steps``) carries the verdict; ``state`` tells whether it has ended and with what verdict.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any

import aiohttp

#: The server refuses a session beyond its --max-concurrency: a rollout waits for one to close, this long between
#: tries.
CAPACITY_WAIT = 0.5
#: How long one request may take: a tool call of an LLM-simulated world waits for the world model, a submit for the
#: judge.
REQUEST_TIMEOUT = 1800.0


class EpisodeError(RuntimeError):
    """The occubench server refused or failed a request; ``code`` is its OpenEnv error code, when it gave one."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Server:
    """Where an `occubench serve --protocol openenv` listens, and its serve token (None: it has none)."""

    url: str
    token: str | None = None

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def http(self) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(headers=self.headers(), timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT))

    async def rpc(self, method: str, **params: Any) -> Any:
        """The result of a JSON-RPC request to ``POST /mcp``."""
        async with self.http() as http, http.post(f"{self.url}/mcp", json={
                "jsonrpc": "2.0", "id": 1, "method": method, "params": params}) as response:
            answer = await _json(response)
        if not isinstance(answer, dict) or "error" in answer:
            error = answer.get("error") if isinstance(answer, dict) else None
            if not isinstance(error, dict):
                raise EpisodeError(f"{method}: {answer!r}")
            data = error.get("data") if isinstance(error.get("data"), dict) else {}
            raise EpisodeError(f"{method}: {error.get('message')}", data.get("code"))
        return answer.get("result")


@dataclass(frozen=True)
class Session:
    """One OpenEnv session of the server: the rollout's episode. Its id is its credential."""

    server: Server
    id: str

    @classmethod
    async def open(cls, server: Server, task_id: str) -> tuple[Session, dict[str, Any]]:
        """A new session playing an episode of ``task_id``, and the episode's first observation (``instruction``,
        ``prompt``, ``submit``, ``trial``...). When the server is at capacity, waits for a session to close."""
        while True:
            try:
                created = await server.rpc("openenv/session/create")
                break
            except EpisodeError as exc:
                if exc.code != "CAPACITY_REACHED":
                    raise
            await asyncio.sleep(CAPACITY_WAIT)
        session = cls(server, str(created["session_id"]))
        try:
            start = await session.send({"type": "reset", "data": {"task_id": task_id}})
        except BaseException:
            with contextlib.suppress(Exception):  # the reset's failure is the one to tell
                await session.close()
            raise
        return session, start["observation"]

    async def send(self, message: dict[str, Any]) -> dict[str, Any]:
        """The answer's data to one WebSocket message; an error frame raises :class:`EpisodeError`."""
        async with self.server.http() as http, http.ws_connect(
                f"{self.server.url}/ws", params={"session_id": self.id}, max_msg_size=0) as socket:
            await socket.send_json(message)
            frame = await socket.receive()
        if frame.type != aiohttp.WSMsgType.TEXT:
            raise EpisodeError(f"the occubench server closed the connection ({frame.type.name}, {frame.extra})")
        answer = json.loads(frame.data)
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, dict):
            raise EpisodeError(f"unexpected answer from the occubench server: {frame.data[:300]}")
        if answer.get("type") == "error":
            raise EpisodeError(str(data.get("message")), data.get("code"))
        return data

    async def tools(self) -> list[dict[str, Any]]:
        """The episode's tools, ``submit`` last: ``name``, ``description``, ``input_schema``."""
        return list((await self.send({"type": "step", "data": {"type": "list_tools"}}))["observation"]["tools"])

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A tool call's step: ``observation.result`` (MCP's CallToolResult), and once the episode is over
        ``done`` and the verdict as ``metadata``."""
        return await self.send({"type": "step", "data": {"type": "call_tool", "tool_name": name,
                                                         "arguments": arguments}})

    async def state(self) -> dict[str, Any]:
        """``done``, and once done the ``verdict``."""
        return await self.send({"type": "state"})

    async def close(self) -> None:
        """Ends the session; an episode not answered yet is recorded as the agent's error. Closing one that is
        closed already does nothing."""
        try:
            await self.server.rpc("openenv/session/close", session_id=self.id)
        except EpisodeError as exc:
            if exc.code != "SESSION_ERROR":
                raise


async def _json(response: aiohttp.ClientResponse) -> Any:
    if response.status != 200:
        raise EpisodeError(f"the occubench server answered HTTP {response.status}: {(await response.text())[:300]}")
    return await response.json(content_type=None)
