"""Serve one environment instance over the Model Context Protocol, so any MCP client can act in the world.

Built on the official SDK's low-level server, not its decorator API, so each tool's JSON schema reaches the client
exactly as the world declares it, with a read-only or destructive hint when the world says whether the tool writes.
Every call goes through the environment's tool contract, so an unknown tool or invalid arguments come back as the
same ``{"error": kind, "message": ...}`` observation an agent gets, flagged ``isError``. Only this module imports
the SDK, so the rest of occubench does not pay for it.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from occubench.environment import Environment, JSONObject
from occubench.tools import ToolSpec

TRANSPORTS = ("stdio", "http")


def build_server(env: Environment, name: str) -> Server[Any]:
    """An MCP server whose tools are ``env``'s; every call runs on this one instance, one call at a time."""
    tools = {tool.name: tool for tool in map(_mcp_tool, env.tools())}
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
        return _result(observation)

    def input_schema(tool: str) -> dict[str, Any] | None:
        return tools[tool].input_schema if tool in tools else None

    # get_tool_input_schema spares the 2026 HTTP path a full tools/list on every call to validate headers.
    return Server(name, on_list_tools=list_tools, on_call_tool=call_tool, get_tool_input_schema=input_schema)


def serve(env: Environment, name: str, *, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8200) -> None:
    """Serve ``env`` until the client disconnects (stdio) or the process is interrupted (http).

    The caller owns ``env`` and closes it afterwards. Over stdio, stdout carries protocol messages only: anything
    the world prints while serving goes to stderr.
    """
    if transport not in TRANSPORTS:
        raise ValueError(f"unknown transport {transport!r}; expected one of {', '.join(TRANSPORTS)}")
    server = build_server(env, name)
    if transport == "stdio":
        anyio.run(_serve_stdio, server)
    else:
        import uvicorn

        # host also picks the SDK's DNS-rebinding protection, which is on for loopback addresses.
        uvicorn.run(server.streamable_http_app(host=host), host=host, port=port)


async def _serve_stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        # The SDK diverts file descriptor 1 only while serving, so text a world prints would sit in sys.stdout's
        # buffer and reach the protocol stream when it is flushed at exit, after the descriptor is restored.
        with contextlib.redirect_stdout(sys.stderr):
            await server.run(read_stream, write_stream, server.create_initialization_options())


def _mcp_tool(spec: ToolSpec) -> types.Tool:
    if spec.writes is None:  # unknown (a simulated world's tool): no hint rather than a wrong one
        annotations = None
    elif spec.writes:  # a write may overwrite or delete (an update, a cancellation): not merely additive
        annotations = types.ToolAnnotations(read_only_hint=False, destructive_hint=True)
    else:
        annotations = types.ToolAnnotations(read_only_hint=True)
    return types.Tool(name=spec.name, description=spec.description, input_schema=spec.parameters,
                      annotations=annotations)


def _result(observation: JSONObject) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=json.dumps(observation, ensure_ascii=False))],
                                structured_content=observation, is_error="error" in observation)
