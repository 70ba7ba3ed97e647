"""Episodes over MCP are each their own: one episode's agent cannot find, reach or play another's; nothing lists the
episodes without the serve token; every route checks the Host header; an episode's MCP sessions stay few."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from occubench.core.task import Task
from occubench.core.tools import ToolSpec
from occubench.mcp.hub import MAX_SESSIONS, Episode, EpisodeHub
from occubench.sandbox.provider import detect
from occubench.testing import MockLLMServer
from tests.mcp.test_command import command, run
from tests.mcp.test_server_auth import INITIALIZE, MCP_HEADERS

#: An agent program that, before playing its own episode, tries to play the other one running beside it: through
#: the listing, URLs derived from its own, and (where it is confined, so this is a real test) any URL it can read in
#: the processes it sees. Both programs wait for each other, so both episodes are open during the attack.
INTRUDER = r"""
import asyncio, json, os, re, sys, time
from pathlib import Path
import httpx
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

own, task, room, scan = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4] == "scan"
me = task.replace("/", "_")

def meet(step):
    (room / f"{step}-{me}").touch()
    deadline = time.monotonic() + 60
    while len(list(room.glob(f"{step}-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)

def seen_in_processes():
    found = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        for part in ("cmdline", "environ"):
            try:
                text = open(f"/proc/{pid}/{part}", "rb").read().decode(errors="replace")
            except OSError:
                continue
            found.update(re.findall(r"http://[\w.:\[\]]+/episodes/[\w-]+/mcp", text))
    return found

async def submit(url, answer):
    async with Client(streamable_http_client(url)) as episode:
        return (await episode.call_tool("submit", {"answer": answer})).is_error

async def main():
    meet("open")
    base, _, episode_id = own.removesuffix("/mcp").rpartition("/")
    listing = httpx.get(base, trust_env=False)
    urls = {e["url"] for e in listing.json()} if listing.status_code == 200 else set()
    urls |= {f"{base}/{episode_id[:-1]}{'A' if episode_id[-1] != 'A' else 'B'}/mcp", f"{base}/{episode_id[:8]}/mcp",
             f"{base}//mcp", f"{base}/../mcp"}
    if scan:
        urls |= seen_in_processes()
    tried = {}
    for url in sorted(urls - {own}):
        try:
            tried[url] = "not an error" if not await asyncio.wait_for(submit(url, "HACKED"), 20) else "error"
        except Exception as exc:
            tried[url] = type(exc).__name__
    (room / f"tried-{me}.json").write_text(json.dumps({"listing": listing.status_code, "tried": tried}))
    meet("attacked")
    await submit(own, f"honest {task}")

asyncio.run(main())
"""


def test_a_program_cannot_list_or_play_another_running_episode(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, server: MockLLMServer) -> None:
    (tmp_path / "intruder.py").write_text(INTRUDER)
    room = tmp_path_factory.mktemp("room")  # outside the results folder, which programs see read-only
    scan = "scan" if detect().provider is not None else "no-scan"  # unconfined, programs see each other's argv
    code, results = run(tmp_path, server, "two", "--limit", "2", "--max-concurrency", "2", "--agent",
                        command(sys.executable, str(tmp_path / "intruder.py"), "{mcp_url}", "{task_id}", str(room),
                                scan))

    assert code == 0 and len(results) == 2
    for result in results.values():  # each episode holds its own program's answer, and nothing else
        assert result.ok and result.stop_reason == "answer" and result.final_answer == f"honest {result.task_id}"
        assert not result.tool_calls and [step.content for step in result.steps] == [result.final_answer]
    assert "HACKED" not in (tmp_path / "two" / "results.jsonl").read_text()
    attempts = [json.loads(path.read_text()) for path in room.glob("tried-*.json")]
    assert len(attempts) == 2 and all(a["listing"] == 404 and len(a["tried"]) >= 4 for a in attempts)


def _task() -> Task:
    return Task(task_id="t/1", instruction="Find the claim and pay it.", scenario="Claims", category="c",
                domain="d", difficulty=1, env_name="claims")


@asynccontextmanager
async def _open(hub: EpisodeHub) -> AsyncIterator[tuple[Episode, str]]:
    """An episode served by ``hub`` (no one plays it), and its URL."""
    episode = Episode(_task(), [ToolSpec("look", "Look.", {"type": "object"}, writes=False)], "Be careful.")
    async with hub.serving(episode, linger=0) as url:
        yield episode, url


def _drive(hub: EpisodeHub, test: Callable[[Episode, str, httpx.AsyncClient], Awaitable[None]]) -> None:
    async def main() -> None:
        async with _open(hub) as (episode, url), httpx.AsyncClient(trust_env=False, timeout=30) as http:
            await test(episode, url, http)

    asyncio.run(main())


def test_the_listing_needs_the_serve_token_and_a_host_served() -> None:
    async def test(episode: Episode, url: str, http: httpx.AsyncClient) -> None:
        listing = url.split("/episodes/")[0] + "/episodes"
        auth = {"Authorization": "Bearer the-token"}
        refused = [await http.get(listing), await http.get(listing, headers={"Authorization": "Bearer guess"}),
                   await http.get(listing, headers={**auth, "Host": "rebound.example"}),
                   await http.get(listing, headers={**auth, "Origin": "http://rebound.example"}),
                   await http.get(listing.replace("/episodes", "/nothing"), headers={"Host": "rebound.example"})]
        assert [r.status_code for r in refused] == [401, 401, 421, 403, 421]
        assert not any(episode.id in r.text or "careful" in r.text or "Find the claim" in r.text for r in refused)
        allowed = await http.get(listing, headers=auth)  # the token's holder is shown the episode
        assert allowed.status_code == 200 and [e["url"] for e in allowed.json()] == [url]

    _drive(EpisodeHub(token="the-token"), test)


def test_without_a_token_or_for_programs_nothing_lists_the_episodes() -> None:
    async def test(episode: Episode, url: str, http: httpx.AsyncClient) -> None:
        listing = await http.get(url.split("/episodes/")[0] + "/episodes")
        assert listing.status_code in (403, 404) and episode.id not in listing.text

    _drive(EpisodeHub(), test)  # `occubench serve` on loopback with no serve token
    _drive(EpisodeHub(token="the-token", listing=False), test)  # a command: run


async def _initialize(http: httpx.AsyncClient, url: str) -> int:
    """Opens an MCP session and leaves it open, as a client that never ends its sessions does."""
    return (await http.post(url, json=INITIALIZE, headers=MCP_HEADERS)).status_code


async def _tool_names(url: str) -> list[str]:
    async with Client(streamable_http_client(url)) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


def test_an_episode_holds_a_bounded_number_of_mcp_sessions() -> None:
    async def test(episode: Episode, url: str, http: httpx.AsyncClient) -> None:
        statuses = [await _initialize(http, url) for _ in range(3 * MAX_SESSIONS)]
        assert statuses.count(200) == MAX_SESSIONS and episode.sessions == MAX_SESSIONS
        assert set(statuses) == {200, 503}

    _drive(EpisodeHub(session_idle=None), test)


def test_idle_mcp_sessions_are_closed_and_the_episode_stays_playable() -> None:
    async def test(episode: Episode, url: str, http: httpx.AsyncClient) -> None:
        assert [await _initialize(http, url) for _ in range(MAX_SESSIONS)] == [200] * MAX_SESSIONS
        deadline = time.monotonic() + 30  # a bound on waiting, not a timing assertion
        while episode.sessions and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert episode.sessions == 0
        assert await _tool_names(url) == ["look", "submit"]

    _drive(EpisodeHub(session_idle=0.2), test)
