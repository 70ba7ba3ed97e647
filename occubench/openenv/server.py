"""The OpenEnv server of a run's episodes: OpenEnv's routes over aiohttp (a dependency already), on the harness loop
where the episodes run.

``GET /health``, ``/metadata`` and ``/schema`` describe it; ``GET /ws`` is a WebSocket session (``?session_id=``:
the session an ``openenv/session/create`` made), ``POST /mcp`` JSON-RPC (see :mod:`occubench.openenv.wire`). Every
request must name the address served in its Host (and any Origin) header, against DNS rebinding; with a serve
token, which an address other than loopback requires, every request must carry ``Authorization: Bearer <token>``.
OpenEnv's stateless ``POST /reset`` and ``/step``, which make an environment per request and throw it away, have no
counterpart: an episode lives in a session.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import WSMsgType, web

from occubench import __version__, telemetry
from occubench.core.tools import clip
from occubench.errors import ConfigError
from occubench.mcp.hub import AFTER_ANSWER
from occubench.mcp.server import refusal, transport_security
from occubench.openenv import wire
from occubench.openenv.sessions import EpisodePool, Session, Sessions
from occubench.util.jsonsafe import dumps

log = logging.getLogger("occubench")

#: The largest message a client may send (its actions are small; an observation goes the other way).
MAX_MESSAGE = 4 << 20
_SCHEMA = {
    "action": {"oneOf": [
        {"type": "object", "properties": {"type": {"const": "list_tools"}}, "required": ["type"]},
        {"type": "object", "properties": {"type": {"const": "call_tool"}, "tool_name": {"type": "string"},
                                          "arguments": {"type": "object"}}, "required": ["type", "tool_name"]}]},
    "observation": {"type": "object"},
    "state": {"type": "object", "properties": {"episode_id": {"type": ["string", "null"]},
                                               "step_count": {"type": "integer"}}},
}


class OpenEnvServer:
    """Serves ``pool``'s episodes on ``host``:``port`` until none is left, then until the last session closes or
    :data:`~occubench.mcp.hub.AFTER_ANSWER` seconds pass. ``capacity``: sessions open at once at most."""

    def __init__(self, pool: EpisodePool, *, host: str, port: int, token: str | None, allowed_hosts: tuple[str, ...],
                 capacity: int, idle: float | None, description: str) -> None:
        self.pool, self.host, self.token, self.description = pool, host, token, description
        self.security = transport_security(host, allowed_hosts)
        self.sessions = Sessions(pool, capacity, idle)
        self.sockets: set[web.WebSocketResponse] = set()
        self.socket = listen(host, port)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.socket.getsockname()[1]}"

    async def serve(self) -> None:
        app = web.Application(middlewares=[self._guard], client_max_size=MAX_MESSAGE)
        app.router.add_get("/health", _constant({"status": "healthy"}))
        app.router.add_get("/metadata", _constant({"name": "occubench", "description": self.description,
                                                   "version": __version__}))
        app.router.add_get("/schema", _constant(_SCHEMA))
        app.router.add_post("/mcp", self._mcp)
        app.router.add_get("/ws", self._websocket)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        try:
            await web.SockSite(runner, self.socket, shutdown_timeout=1).start()
            await self.pool.finished.wait()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.sessions.none.wait(), AFTER_ANSWER)
        finally:
            for websocket in list(self.sockets):
                await websocket.close(code=1001, message=b"the run is over")
            await runner.cleanup()

    @web.middleware
    async def _guard(self, request: web.Request,
                     handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        headers = [(name.lower(), value) for name, value in request.raw_headers]
        if (refused := refusal(self.security, {"type": "http", "headers": headers})) is not None:
            return web.Response(status=refused.status_code, text=bytes(refused.body).decode())
        given = request.headers.get("Authorization", "").encode()
        if self.token and not hmac.compare_digest(given, f"Bearer {self.token}".encode()):  # constant time
            return web.Response(status=401, text="missing or wrong bearer token",
                                headers={"WWW-Authenticate": "Bearer"})
        telemetry.incoming(request.headers)  # the client's trace context, if it sent one
        return await handler(request)

    async def _mcp(self, request: web.Request) -> web.Response:
        try:
            message: Any = wire.parse(await request.read())
        except wire.ProtocolError as exc:
            return _json(wire.rpc_error(None, exc.rpc, str(exc), exc.code))
        return _json(await self.rpc(message, None))

    async def rpc(self, request: Any, session: Session | None) -> dict[str, Any]:
        """A JSON-RPC request's answer; ``session``: the WebSocket's, which ``params.session_id`` names otherwise."""
        request_id = wire.rpc_id(request)
        try:
            if not isinstance(request, dict) or request.get("jsonrpc") != "2.0" or \
                    not isinstance(method := request.get("method"), str):
                raise wire.ProtocolError("Invalid Request", rpc=wire.INVALID_REQUEST)
            if not isinstance(params := request.get("params", {}), dict):
                raise wire.ProtocolError("Params must be an object")
            return wire.rpc_result(request_id, await self._method(method, params, session))
        except wire.ProtocolError as exc:
            return wire.rpc_error(request_id, exc.rpc, str(exc), exc.code)
        except Exception as exc:  # a fault of ours answers this request, logged; the session goes on
            log.exception("OpenEnv session: a JSON-RPC request failed")
            return wire.rpc_error(request_id, wire.INTERNAL_ERROR, f"internal error: {exc}")

    async def _method(self, method: str, params: dict[str, Any], session: Session | None) -> Any:
        if method == "openenv/session/create":
            return {"session_id": (session or self.sessions.create()).id}
        target = session or self.sessions.named(params.get("session_id"))
        target.seen()
        if method == "openenv/session/close":
            if session is not None:
                raise wire.ProtocolError("a WebSocket's own session ends when it closes", rpc=wire.INVALID_REQUEST)
            if target.attached:  # the client may ask before its WebSocket's close has reached us
                target.closing = True
                return {"session_id": target.id, "closed": False, "closing": True}
            self.sessions.close(target, "the OpenEnv client closed its session before ending the episode")
            return {"session_id": target.id, "closed": True}
        if method == "tools/list":
            return {"tools": target.tools()}
        if method == "tools/call":
            name, arguments = params.get("name"), params.get("arguments", {})
            if not isinstance(name, str) or not isinstance(arguments, dict):
                raise wire.ProtocolError("tools/call: name is a string and arguments a JSON object")
            result, _, _ = await target.call(name, arguments)
            return result
        raise wire.ProtocolError(f"Method not found: {clip(method, 200)}", rpc=wire.METHOD_NOT_FOUND)

    async def _websocket(self, request: web.Request) -> web.WebSocketResponse:
        websocket = web.WebSocketResponse(max_msg_size=MAX_MESSAGE)
        await websocket.prepare(request)
        self.sockets.add(websocket)
        session: Session | None = None
        owned = False
        try:
            if (wanted := request.query.get("session_id")) is not None:
                session = self.sessions.named(wanted)
                if session.attached:
                    raise wire.ProtocolError("this session already has a WebSocket", wire.SESSION_ERROR)
            else:
                session, owned = self.sessions.create(), True
            session.attached = True
            async for message in websocket:
                if message.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
                    break
                reply = await self._message(session, message.data)
                if reply is None:
                    break
                await websocket.send_str(reply)
        except wire.ProtocolError as exc:  # the session cannot be had: said, then the socket closes
            await websocket.send_str(wire.error_frame(exc))
        finally:
            self.sockets.discard(websocket)
            if session is not None:
                session.attached = False
                if owned or session.closing:
                    self.sessions.close(session, "the OpenEnv client closed its WebSocket before ending the episode")
            await websocket.close()
        return websocket

    async def _message(self, session: Session, text: str | bytes) -> str | None:
        """The answer to one WebSocket message; None for ``close``."""
        try:
            message = wire.parse(text)
            kind = message.get("type") if isinstance(message, dict) else None
            session.seen()
            if kind == "reset":
                return wire.frame("observation", await session.reset(message.get("data", {})))
            if kind == "step":
                return wire.frame("observation", await session.step(message.get("data")))
            if kind == "state":
                return wire.frame("state", session.state())
            if kind == "mcp":
                return wire.frame("mcp", await self.rpc(message.get("data"), session))
            if kind == "close":
                return None
            raise wire.ProtocolError(f"Unknown message type: {clip(dumps(kind), 200)}", wire.UNKNOWN_TYPE)
        except wire.ProtocolError as exc:
            return wire.error_frame(exc)
        except Exception as exc:  # a fault of ours answers this message, logged; the session goes on
            log.exception("OpenEnv session: a message failed")
            return wire.error_frame(wire.ProtocolError(f"internal error: {exc}", wire.EXECUTION_ERROR))


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port``; a :class:`ConfigError` when there can be none."""
    try:
        return socket.create_server((host, port), backlog=1024, family=socket.AF_INET6 if ":" in host else
                                    socket.AF_INET)
    except OSError as exc:
        raise ConfigError(f"cannot serve OpenEnv on {host}:{port}: {exc.strerror or exc} (--host/--port of "
                          "occubench serve)") from None


def _constant(value: Any) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def answer(_: web.Request) -> web.StreamResponse:
        return _json(value)
    return answer


def _json(value: Any) -> web.Response:
    return web.Response(text=dumps(value), content_type="application/json")

