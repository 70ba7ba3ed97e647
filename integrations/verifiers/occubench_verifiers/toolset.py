"""The episode's tools as a verifiers tool server: one process for the whole eval (a taskset-scoped toolset), each
request made in the calling rollout's episode, which it finds in the rollout's state. Any harness that takes MCP
tools plays the episode through it; the tools are listed bare (no server prefix), as occubench's own agent sees
them, ``submit`` last."""

from __future__ import annotations

from typing import Any, cast

import mcp.types as types
import verifiers.v1 as vf
from mcp.server.mcpserver import MCPServer

from occubench_verifiers.state import EpisodeState


class OccubenchToolset(vf.Toolset[vf.SharedToolsetConfig, EpisodeState]):
    TOOL_PREFIX = None

    def register(self, mcp: MCPServer) -> None:
        # The tools are the rollout's episode's, not fixed ones: the SDK's own handlers are replaced.
        server = cast(Any, mcp)
        server.list_tools = self._with_state(self.list_tools)
        server.call_tool = self._with_state(self.call_tool)

    async def list_tools(self) -> list[types.Tool]:
        return [types.Tool(name=tool["name"], description=tool.get("description") or None,
                           input_schema=tool.get("input_schema") or {"type": "object"})
                for tool in self.state.tools]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> types.CallToolResult:
        step = await self.state.episode().call(name, arguments)
        if step.get("done"):  # the episode is over: its verdict is the rollout's reward
            self.state.verdict = step.get("metadata") or {}
        return _result(step["observation"]["result"])


def _result(result: dict[str, Any]) -> types.CallToolResult:
    """occubench's call result (MCP's CallToolResult as JSON) as the SDK's."""
    content: list[types.ContentBlock] = []
    for block in result.get("content") or []:
        if block.get("type") == "image":
            content.append(types.ImageContent(data=block["data"], mime_type=block["mimeType"]))
        else:
            content.append(types.TextContent(text=str(block.get("text", ""))))
    return types.CallToolResult(content=content, is_error=bool(result.get("is_error")))


if __name__ == "__main__":
    OccubenchToolset.run()
