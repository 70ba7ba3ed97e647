"""`occubench serve --suite awm`: a scenario's endpoints reach the official MCP client as tools, and two episodes
served at once each write to a database of their own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from occubench.testing import MockLLMServer
from tests.mcp.test_episodes import open_episodes, serving


async def _call(world: Client, tool: str, arguments: dict[str, Any]) -> Any:
    result = await world.call_tool(tool, arguments)
    return json.loads("".join(block.text for block in result.content if block.type == "text"))


def test_two_served_episodes_each_write_to_their_own_database(data: Path, tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    with MockLLMServer() as judge, serving(["--suite", "awm", "--data-dir", str(data), "--verifier-model", "judge",
                                            "--base-url", judge.base_url, "--api-key", "k", "--task-ids",
                                            "content_platform_1/0", "content_platform_1/1", "--output-dir",
                                            str(tmp_path / "runs"), "--run-name", "served"], log) as (port, process):
        first, second = open_episodes(port, 2, process, log)
        seen: dict[str, Any] = {}

        async def drive() -> None:
            async with Client(streamable_http_client(first["url"])) as one, \
                    Client(streamable_http_client(second["url"])) as other:
                seen["tools"] = {tool.name for tool in (await one.list_tools()).tools}
                before = await _call(other, "list_user_subscriptions", {})
                seen["wrote"] = await _call(one, "subscribe_to_channel", {"channel_id": 1})
                seen["one"] = await _call(one, "list_user_subscriptions", {})
                seen["other"] = await _call(other, "list_user_subscriptions", {})
                seen["before"] = before
                for world in (one, other):
                    await world.call_tool("submit", {"answer": "done"})

        anyio.run(drive)
        assert process.wait(timeout=300) == 0, log.read_text()

    assert {"subscribe_to_channel", "list_user_subscriptions", "submit"} <= seen["tools"]
    assert "error" not in seen["wrote"]

    def channels(listing: dict[str, Any]) -> set[int]:
        return {item["channel_id"] for item in listing["subscriptions"]}
    assert channels(seen["one"]) == channels(seen["before"]) | {1} and 1 not in channels(seen["before"])
    assert channels(seen["other"]) == channels(seen["before"])
