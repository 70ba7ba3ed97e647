"""Serve one environment instance over the Model Context Protocol, so any MCP client can act in the world.

Built on the official SDK's low-level server, not its decorator API, so each tool's JSON schema reaches the client
exactly as the world declares it, with a read-only or destructive hint when the world says whether the tool writes.
Every call goes through the environment's tool contract, so an unknown tool or invalid arguments come back as the
same ``{"error": kind, "message": ...}`` observation an agent gets, flagged ``isError``; an image in an observation
(:mod:`occubench.core.images`) follows it as ``ImageContent`` when the client's model takes images, else its text
stands in. Only this module imports the SDK, so the rest of occubench does not pay for it.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from occubench.core.environment import Environment, JSONObject
from occubench.core.images import Image, deliver
from occubench.core.tools import ToolSpec
from occubench.errors import ConfigError

TRANSPORTS = ("stdio", "http")
#: The environment variable that holds the HTTP transport's bearer token (never a flag: it would show in `ps`).
TOKEN_VARIABLE = "OCCUBENCH_SERVE_TOKEN"


def build_server(env: Environment, name: str, images: bool = False) -> Server[Any]:
    """An MCP server whose tools are ``env``'s; every call runs on this one instance, one call at a time. With
    ``images``, an observation's images are sent as image content; without, as their text."""
    tools = {tool.name: tool for tool in map(mcp_tool, env.tools())}
    # The world is not thread-safe: calls run in worker threads, so only one may touch it at a time.
    lock = anyio.Lock()

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(tools.values()))

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        async with lock:
            # env.call is blocking (a simulator may wait on a model), so keep it off the event loop.
            observation = await anyio.to_thread.run_sync(env.call, params.name, params.arguments or {})
        return tool_result(*deliver(observation, images))

    def input_schema(tool: str) -> dict[str, Any] | None:
        return tools[tool].input_schema if tool in tools else None

    # get_tool_input_schema spares the 2026 HTTP path a full tools/list on every call to validate headers.
    return Server(name, on_list_tools=list_tools, on_call_tool=call_tool, get_tool_input_schema=input_schema)


def serve(env: Environment, name: str, *, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8200,
          token: str | None = None, allowed_hosts: Sequence[str] = (), images: bool = False) -> None:
    """Serve ``env`` until the client disconnects (stdio) or the process is interrupted (http).

    The caller owns ``env`` and closes it afterwards. Over stdio, stdout carries protocol messages only: anything
    the world prints while serving goes to stderr. Over HTTP with a ``token``, every request must carry
    ``Authorization: Bearer <token>``; an address other than loopback is refused without one, and its requests
    must name ``host`` or one of ``allowed_hosts`` in their Host header. ``images``: see :func:`build_server`.
    """
    if transport not in TRANSPORTS:
        raise ValueError(f"unknown transport {transport!r}; expected one of {', '.join(TRANSPORTS)}")
    server = build_server(env, name, images)
    if transport == "stdio":
        anyio.run(_serve_stdio, server)
        return
    import uvicorn

    uvicorn.run(http_app(server, host, token, allowed_hosts), host=host, port=port)


def http_app(server: Server[Any], host: str, token: str | None = None, allowed_hosts: Sequence[str] = ()) -> ASGIApp:
    """The ASGI app that serves ``server`` on ``host``: behind the bearer check when there is a ``token`` (required
    for an address other than loopback), and checking the Host header."""
    if not token and not is_loopback(host):
        raise ConfigError(_NO_TOKEN.format(host=host))
    app = server.streamable_http_app(host=host, transport_security=transport_security(host, allowed_hosts))
    return BearerAuth(app, token) if token else app


_NO_TOKEN = ("--host {host} is reachable from other machines: serve it with a bearer token, in the environment "
             f"variable {TOKEN_VARIABLE} or in a file given with --token-file")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to any interface
        return False


def serve_token(host: str, token_file: str | None) -> str | None:
    """The HTTP transport's bearer token: the ``--token-file``'s text, else ``$OCCUBENCH_SERVE_TOKEN``. A
    :class:`ConfigError` when there is none and ``host`` is not loopback, or the file is unreadable or empty."""
    if token_file:
        try:
            token = Path(token_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"--token-file: cannot read {token_file}: {exc}") from None
        if not token:
            raise ConfigError(f"--token-file: {token_file} is empty")
        return token
    if not (variable := os.environ.get(TOKEN_VARIABLE, "").strip()) and not is_loopback(host):
        raise ConfigError(_NO_TOKEN.format(host=host))
    return variable or None


def transport_security(host: str, allowed_hosts: Sequence[str] = ()) -> TransportSecuritySettings:
    """The DNS-rebinding protection for serving on ``host``: the Host (and any Origin) header must name it."""
    if host in ("127.0.0.1", "localhost", "::1"):  # any of the loopback names, as the SDK's own default allows
        names = ["127.0.0.1", "localhost", "[::1]"]
    elif host in ("0.0.0.0", "::"):  # every interface: clients name the machine, or loopback on it
        names = [socket.gethostname(), "localhost", "127.0.0.1", "[::1]"]
    else:
        names = [host]
    names = [f"[{name}]" if ":" in name and not name.startswith("[") else name for name in [*names, *allowed_hosts]]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[pattern for name in dict.fromkeys(names) for pattern in (name, f"{name}:*")],
        allowed_origins=[f"{scheme}://{name}{port}" for name in dict.fromkeys(names) for scheme in ("http", "https")
                         for port in ("", ":*")])


def refusal(settings: TransportSecuritySettings, scope: Scope) -> PlainTextResponse | None:
    """The answer to a request whose Host (or Origin) header names no address served (DNS rebinding), or None.
    The SDK checks the same for its own endpoints, but logs the header's text raw to the terminal."""
    headers = Headers(scope=scope)
    if not _allowed(headers.get("host", ""), settings.allowed_hosts, origin=False):
        return PlainTextResponse("Invalid Host header", status_code=421)
    if (origin := headers.get("origin")) and not _allowed(origin, settings.allowed_origins, origin=True):
        return PlainTextResponse("Invalid Origin header", status_code=403)
    return None


def _allowed(value: str, patterns: Sequence[str], *, origin: bool) -> bool:
    """Whether ``value``, a Host header (``HOST[:PORT]``) or an ``origin`` (``SCHEME://HOST[:PORT]``), is one of
    ``patterns``, where ``NAME:*`` stands for NAME with any port. Parsed, never matched as text: a value is taken
    only when it is exactly its scheme, host and port, with no user (``http://127.0.0.1:1@evil.example`` names
    evil.example), path or other part."""
    try:
        parts = urlsplit(value if origin else f"//{value}")
        port = parts.port
    except ValueError:
        return False
    if not parts.hostname or (origin and parts.scheme not in ("http", "https")):
        return False
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    prefix = f"{parts.scheme}://" if origin else ""
    exact = f"{prefix}{host}" + ("" if port is None else f":{port}")
    if exact != value.lower():  # a user, a path, a query, an empty or padded port: not an address we serve
        return False
    allowed = {pattern.lower() for pattern in patterns}  # names are case-blind (a machine's name may not be)
    return exact in allowed or (port is not None and f"{prefix}{host}:*" in allowed)


class BearerAuth:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer <token>`` gets 401 and reaches nothing."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = Headers(scope=scope).get("authorization", "").encode()
            if not hmac.compare_digest(given, self.expected):  # constant time: the token is not guessed by timing
                response = PlainTextResponse("missing or wrong bearer token", status_code=401,
                                             headers={"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def _serve_stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        # The SDK diverts file descriptor 1 only while serving, so text a world prints would sit in sys.stdout's
        # buffer and reach the protocol stream when it is flushed at exit, after the descriptor is restored.
        with contextlib.redirect_stdout(sys.stderr):
            await server.run(read_stream, write_stream, server.create_initialization_options())


def mcp_tool(spec: ToolSpec) -> types.Tool:
    if spec.writes is None:  # unknown (a simulated world's tool): no hint rather than a wrong one
        annotations = None
    elif spec.writes:  # a write may overwrite or delete (an update, a cancellation): not merely additive
        annotations = types.ToolAnnotations(read_only_hint=False, destructive_hint=True)
    else:
        annotations = types.ToolAnnotations(read_only_hint=True)
    return types.Tool(name=spec.name, description=spec.description, input_schema=spec.parameters,
                      annotations=annotations)


def tool_result(observation: JSONObject, images: Sequence[Image] = ()) -> types.CallToolResult:
    """The answer to a call: the observation as JSON text and structured content (both without image data, see
    :func:`~occubench.core.images.deliver`), then each image the client is sent."""
    content: list[types.ContentBlock] = [types.TextContent(text=json.dumps(observation, ensure_ascii=False))]
    content += [types.ImageContent(data=image.encoded(), mime_type=image.media_type)
                for image in images]
    return types.CallToolResult(content=content, structured_content=observation, is_error="error" in observation)
