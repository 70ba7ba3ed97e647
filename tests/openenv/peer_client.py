"""Plays the episodes of an `occubench serve --protocol openenv` server with OpenEnv's own clients; run by the
openenv peer's Python (never imported by the tests, which cannot import openenv).

Reads a plan as JSON on stdin: ``url``, ``token``, ``client`` ("mcp": ``MCPToolClient``, whose tools go over HTTP
``/mcp`` and whose reset and final step go over the WebSocket; "generic": ``GenericEnvClient``, every action a
step), ``sessions`` (how many play at once), ``tasks`` (the task ids to reset to, in turn; null: the server's next
episode until none is left), ``scripts`` (by task id: ``{"calls": [[tool, arguments]...], "answer": text}``; a task
without one calls its first two tools with example arguments) and ``barrier`` (every session's first reset returns
before any session calls a tool: that many episodes are open at once). Prints one JSON object: each episode played.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from openenv import GenericEnvClient
from openenv.core.env_server.mcp_types import CallToolAction
from openenv.core.mcp_client import MCPToolClient

LEFT = "no episode is left to start"


def example(schema: dict[str, Any]) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), "null") if isinstance(kind, list) else kind
    return {"integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {}, "null": None}.get(str(kind), "X-1")


def auto_script(tools: list[dict[str, Any]], submit: str) -> dict[str, Any]:
    calls = []
    for tool in [t for t in tools if t["name"] != submit][:2]:
        schema = tool["input_schema"] or {}
        properties = schema.get("properties") or {}
        required = schema.get("required") or []
        calls.append([tool["name"], {name: example(properties.get(name) or {}) for name in required}])
    return {"calls": calls, "answer": f"Final answer: done after {len(calls)} tool calls."}


class Player:
    """One session, through ``MCPToolClient`` or ``GenericEnvClient``."""

    def __init__(self, plan: dict[str, Any]) -> None:
        headers = {"Authorization": f"Bearer {plan['token']}"} if plan.get("token") else None
        self.mcp = plan["client"] == "mcp"
        kind = MCPToolClient if self.mcp else GenericEnvClient
        self.env = kind(base_url=plan["url"], headers=headers, message_timeout_s=300)

    async def reset(self, task_id: Any) -> dict[str, Any]:
        result = await self.env.reset(**({} if task_id is None else {"task_id": task_id}))
        observation = result.observation
        return observation if isinstance(observation, dict) else observation.model_dump()

    async def tools(self) -> list[dict[str, Any]]:
        if self.mcp:
            return [tool.model_dump() for tool in await self.env.list_tools(use_cache=False)]
        return (await self.env.step({"type": "list_tools"})).observation["tools"]

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        # MCPToolClient.call_tool(name, **arguments) cannot pass an argument called "name": such a call is a step.
        if self.mcp and "name" not in arguments:
            return await self.env.call_tool(name, **arguments)
        action = CallToolAction(tool_name=name, arguments=arguments)
        observation = (await self.env.step(action if self.mcp else action.model_dump())).observation
        return (observation.result if self.mcp else observation["result"])["data"]

    async def finish(self, submit: str, answer: str) -> dict[str, Any]:
        """The final answer as a step, through either client: the step result carries reward and done."""
        action = CallToolAction(tool_name=submit, arguments={"answer": answer})
        result = await self.env.step(action if self.mcp else action.model_dump())
        data = (result.observation.result if self.mcp else result.observation["result"])["data"]
        return {"reward": result.reward, "done": result.done, "metadata": result.metadata, "data": data}

    async def state(self) -> dict[str, Any]:
        state = await self.env.state()
        return state if isinstance(state, dict) else state.model_dump()


async def play(plan: dict[str, Any], queue: asyncio.Queue[Any], barrier: asyncio.Event, opened: list[int],
               played: list[dict[str, Any]]) -> None:
    player = Player(plan)
    async with player.env:
        first = True
        while True:
            if plan.get("tasks") is not None and queue.empty():
                return
            asked = None if plan.get("tasks") is None else queue.get_nowait()
            try:
                start = await player.reset(asked)
            except RuntimeError as exc:
                if LEFT in str(exc):
                    return
                raise
            if first and plan.get("barrier"):
                first = False
                opened.append(1)
                if len(opened) == plan["sessions"]:
                    barrier.set()
                await barrier.wait()
            tools = await player.tools()
            script = plan.get("scripts", {}).get(str(start["task_id"])) or auto_script(tools, start["submit"])
            seen = [await player.call(name, arguments) for name, arguments in script["calls"]]
            end = await player.finish(start["submit"], script["answer"])
            played.append({"start": start, "tools": [t["name"] for t in tools], "calls": script["calls"],
                           "answer": script["answer"], "observations": seen, **end, "state": await player.state()})


async def main() -> None:
    plan = json.load(sys.stdin)
    queue: asyncio.Queue[Any] = asyncio.Queue()
    for task_id in plan.get("tasks") or []:
        queue.put_nowait(task_id)
    barrier, opened, played = asyncio.Event(), [], []
    await asyncio.gather(*(play(plan, queue, barrier, opened, played) for _ in range(plan["sessions"])))
    json.dump({"played": played}, sys.stdout)


if __name__ == "__main__":
    asyncio.run(main())
