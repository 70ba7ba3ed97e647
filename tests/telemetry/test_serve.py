"""Outside agents' traces: on the OpenEnv server, the ``traceparent`` of the request that started an episode is the
episode span's parent; over MCP, each tool call's span links to the span of the client's request that made it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from tests.mcp.test_episodes import open_episodes
from tests.mcp.test_episodes import serving as mcp_serving
from tests.openenv.test_peer import records, serving
from tests.openenv.test_server import drive, opened
from tests.telemetry.collector import collector

TRACE, PARENT = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


def test_an_openenv_client_s_traceparent_is_the_episode_s_parent(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with collector() as found:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", found.endpoint)
        monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")
        with serving(["--suite", "executable", "--limit", "1", "--output-dir", str(tmp_path / "runs"),
                      "--run-name", "r"], tmp_path / "serve.log") as (url, process):
            async def play(http: aiohttp.ClientSession) -> Any:
                http.headers["traceparent"] = f"00-{TRACE}-{PARENT}-01"
                socket = await opened(http, url)
                await socket.reset()
                return await socket.call("submit", answer="done")

            drive(url, play)
            assert process.wait(timeout=120) in (0, 1)
        [[record]] = [list(records(tmp_path / "runs" / "r").values())]
        [episode] = [span for span in found.spans if span.name.startswith("episode ")]
    assert (episode.trace, episode.parent) == (TRACE, PARENT)
    assert episode.attributes["occubench.task"] == str(record["task_id"])


def test_an_mcp_client_s_tool_calls_are_linked_to_its_spans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The episode is open before the client comes: its trace is its own, and each tool call's span links to the
    # span of the client's request that made it (MCP's convention: the trace context in the request's _meta).
    with collector() as found:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", found.endpoint)
        monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")
        with mcp_serving(["--suite", "executable", "--limit", "1", "--output-dir", str(tmp_path), "--run-name", "r",
                          "--task-ids", "insurance_claims/pay_water_claim"], tmp_path / "serve.log") as (port, process):
            [episode] = open_episodes(port, 1, process, tmp_path / "serve.log")

            async def play() -> None:
                async with Client(streamable_http_client(episode["url"])) as client:
                    meta: Any = {"traceparent": f"00-{TRACE}-{PARENT}-01"}
                    await client.call_tool("get_claim", {"claim_id": "CLM-1004"}, meta=meta)
                    await client.call_tool("submit", {"answer": "done"})

            anyio.run(play)
            assert process.wait(timeout=120) in (0, 1)
        [tool] = [span for span in found.spans if span.name == "execute_tool get_claim"]
        [root] = found.roots()
    assert tool.trace == root.trace != TRACE and tool.links == [(TRACE, PARENT)]
