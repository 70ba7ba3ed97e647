"""The OpenEnv server's edges, spoken to over its wire format directly (aiohttp's client): what it refuses and how,
what ends an episode other than ``submit``, who may reach it. The clients' side of the same protocol is the peer's
(test_peer.py)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from occubench.cli import main as cli_main
from tests.openenv.test_peer import TOKEN, records, serving

AUTH = {"Authorization": f"Bearer {TOKEN}"}


class Socket:
    """One WebSocket session: each message sent, its answer read."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        self.socket = socket

    async def send(self, message: Any) -> dict[str, Any]:
        await (self.socket.send_str(message) if isinstance(message, str) else self.socket.send_json(message))
        return dict(json.loads(await self.socket.receive_str()))

    async def reset(self, **data: Any) -> dict[str, Any]:
        return await self.send({"type": "reset", "data": data})

    async def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        return await self.send({"type": "step", "data": {"type": "call_tool", "tool_name": tool,
                                                         "arguments": arguments}})


def drive(url: str, play: Callable[[aiohttp.ClientSession], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with aiohttp.ClientSession(headers=AUTH) as http:
            return await play(http)
    return asyncio.run(main())


async def opened(http: aiohttp.ClientSession, url: str) -> Socket:
    return Socket(await http.ws_connect(f"{url}/ws"))


@pytest.mark.slow
def test_hostile_messages_are_answered_with_errors_and_the_session_plays_on(tmp_path: Path) -> None:
    with serving(["--suite", "executable", "--limit", "1", "--output-dir", str(tmp_path / "runs"), "--run-name",
                  "r"], tmp_path / "serve.log") as (url, process):
        async def play(http: aiohttp.ClientSession) -> list[tuple[str, str]]:
            session = await opened(http, url)
            answers = [await session.send(message) for message in [
                "{not json", "[" * 100_000, "[1, 2]", {"type": "jump"},
                {"type": "step", "data": {"type": "list_tools"}}, {"type": "reset", "data": {"task_id": {"a": 1}}},
                {"type": "reset", "data": {"task_id": "no/such"}}, {"type": "reset", "data": []}]]
            answers.append(await session.reset())
            answers += [await session.send({"type": "step", "data": action}) for action in [
                {"type": "call_tool"}, {"type": "call_tool", "tool_name": "x", "arguments": []}, {"type": "walk"}, 7]]
            called = await session.call("no_such_tool")
            await session.call("submit", answer="\ud800" * 3 + "\x1b[2J")
            return [(a["type"], a["data"].get("code", "")) for a in answers] + [(called["type"], json.dumps(called))]

        seen = drive(url, play)
        assert process.wait(timeout=120) == 0
    assert seen[:8] == [("error", "INVALID_JSON"), ("error", "INVALID_JSON"), ("error", "UNKNOWN_TYPE"),
                        ("error", "UNKNOWN_TYPE"), ("error", "VALIDATION_ERROR"), ("error", "VALIDATION_ERROR"),
                        ("error", "VALIDATION_ERROR"), ("error", "VALIDATION_ERROR")]
    assert seen[8] == ("observation", "") and [kind for kind, _ in seen[9:13]] == ["error"] * 4
    assert "unknown_tool" in seen[13][1]  # an unknown tool is the world's answer, recorded, as in any run
    (record,) = records(tmp_path / "runs" / "r").values()
    assert record["status"] == "ok" and record["final_answer"] == "\ufffd" * 3 + "\x1b[2J"


@pytest.mark.slow
def test_an_episode_left_by_a_reset_or_a_closed_socket_is_an_agent_error_and_play_goes_on(tmp_path: Path) -> None:
    with serving(["--suite", "executable", "--limit", "3", "--output-dir", str(tmp_path / "runs"), "--run-name",
                  "r"], tmp_path / "serve.log") as (url, process):
        async def play(http: aiohttp.ClientSession) -> dict[str, Any]:
            first = await opened(http, url)
            left = (await first.reset())["data"]["observation"]["task_id"]
            again = await first.reset(task_id=left)  # its one episode is under way or done
            second = (await first.reset())["data"]["observation"]["task_id"]  # the first left unanswered
            other = await opened(http, url)
            third = (await other.reset())["data"]["observation"]["task_id"]
            await other.socket.close()  # the third left unanswered
            ended = await first.call("submit", answer="done")
            return {"left": left, "again": again, "second": second, "third": third, "ended": ended}

        seen = drive(url, play)
        assert process.wait(timeout=120) == 1  # episodes ended in errors
    served = {task: record for (task, _), record in records(tmp_path / "runs" / "r").items()}
    assert seen["again"]["type"] == "error" and seen["again"]["data"]["code"] == "TASK_TAKEN"
    assert "under way or done" in seen["again"]["data"]["message"]
    assert served[seen["left"]]["error"] == {"kind": "agent", "message": "the OpenEnv client reset its session "
                                             "before ending the episode"}
    assert served[seen["third"]]["error"]["message"] == "the OpenEnv client closed its WebSocket before ending the " \
                                                       "episode"
    assert served[seen["second"]]["status"] == "ok" and seen["ended"]["data"]["done"] is True
    assert seen["ended"]["data"]["reward"] == float(served[seen["second"]]["is_correct"])


def test_an_episode_whose_client_goes_quiet_ends_at_the_idle_timeout(tmp_path: Path) -> None:
    results = tmp_path / "runs" / "r" / "results.jsonl"
    with serving(["--suite", "executable", "--limit", "1", "--idle-timeout", "0.5", "--output-dir",
                  str(tmp_path / "runs"), "--run-name", "r"], tmp_path / "serve.log") as (url, process):
        async def play(http: aiohttp.ClientSession) -> dict[str, Any]:
            session = await opened(http, url)
            await session.reset()
            while not results.exists():  # silent (any request is a sign of life) until the episode is recorded
                await asyncio.sleep(0.1)
            return await session.send({"type": "state"})

        state = drive(url, play)
        assert process.wait(timeout=120) == 1  # its one episode ended in an error
    (record,) = records(tmp_path / "runs" / "r").values()
    assert record["error"] == {"kind": "agent", "message": "the OpenEnv client sent nothing for 0.5 s"}
    assert state["data"]["done"] is True and state["data"]["reward"] is None  # an error is not scored


def test_json_rpc_sessions_are_named_by_their_id_and_refuse_what_is_not_theirs(tmp_path: Path) -> None:
    with serving(["--suite", "executable", "--limit", "1", "--max-concurrency", "2", "--output-dir",
                  str(tmp_path / "runs"), "--run-name", "r"], tmp_path / "serve.log") as (url, process):
        async def play(http: aiohttp.ClientSession) -> dict[str, Any]:
            async def rpc(method: str, **params: Any) -> dict[str, Any]:
                answer = await http.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": method,
                                                             "params": params})
                return dict(await answer.json())
            made = (await rpc("openenv/session/create"))["result"]["session_id"]
            seen = {"early": await rpc("tools/list", session_id=made), "unknown": await rpc("tools/list",
                                                                                            session_id="guess"),
                    "missing": await rpc("tools/call", name="x"), "method": await rpc("tools/run", session_id=made),
                    "bad": await (await http.post(f"{url}/mcp", data=b'{"jsonrpc": "2.0", "method": 5}')).json()}
            second = await rpc("openenv/session/create")
            seen["full"] = await rpc("openenv/session/create")  # two sessions at most
            socket = Socket(await http.ws_connect(f"{url}/ws?session_id={made}"))
            await socket.reset()
            seen["tools"] = await rpc("tools/list", session_id=made)
            seen["twice"] = await (await http.ws_connect(f"{url}/ws?session_id={made}")).receive_json()
            seen["call"] = await rpc("tools/call", session_id=made, name="submit", arguments={"answer": "done"})
            seen["closed"] = await rpc("openenv/session/close", session_id=second["result"]["session_id"])
            await socket.socket.close()
            await rpc("openenv/session/close", session_id=made)
            return seen

        seen = drive(url, play)
        assert process.wait(timeout=120) == 0
    assert "reset first" in seen["early"]["error"]["message"]
    assert seen["unknown"]["error"]["message"] == "Unknown session_id"
    assert seen["unknown"]["error"]["data"] == {"code": "SESSION_ERROR"}
    assert seen["missing"]["error"]["message"] == "session_id is required"
    assert seen["method"]["error"]["code"] == -32601 and seen["bad"]["error"]["code"] == -32600
    assert "Server at capacity" in seen["full"]["error"]["message"]
    assert seen["full"]["error"]["code"] == -32000 and seen["full"]["error"]["data"] == {"code": "CAPACITY_REACHED"}
    assert "submit" in {tool["name"] for tool in seen["tools"]["result"]["tools"]}
    assert seen["twice"]["data"]["code"] == "SESSION_ERROR"
    data = seen["call"]["result"]["data"]
    (record,) = records(tmp_path / "runs" / "r").values()
    assert data["status"] == "submitted" and data["reward"] == float(record["is_correct"])
    assert seen["closed"]["result"]["closed"] is True


@pytest.mark.slow
def test_a_request_without_the_token_or_naming_another_host_reaches_nothing(tmp_path: Path) -> None:
    with serving(["--suite", "executable", "--limit", "1", "--output-dir", str(tmp_path / "runs")],
                 tmp_path / "serve.log") as (url, process):
        async def play(http: aiohttp.ClientSession) -> list[int]:
            async with aiohttp.ClientSession() as stranger:
                statuses = [(await stranger.get(f"{url}/health")).status,
                            (await stranger.get(f"{url}/ws")).status,
                            (await http.get(f"{url}/health", headers={"Host": "evil.example"})).status,
                            (await http.get(f"{url}/health", headers={"Origin": "http://evil.example"})).status,
                            # The address served, then a user part: what follows the @ is the host named.
                            (await http.get(f"{url}/health", headers={"Origin": "http://127.0.0.1:1@evil.example"}))
                            .status,
                            (await http.get(f"{url}/health", headers={"Host": "127.0.0.1:1@evil.example"})).status,
                            (await http.get(f"{url}/health", headers={"Origin": url})).status,
                            (await http.get(f"{url}/health")).status]
            session = await opened(http, url)
            await session.reset()
            await session.call("submit", answer="done")
            return statuses

        assert drive(url, play) == [401, 401, 421, 403, 403, 421, 200, 200]
        assert process.wait(timeout=120) == 0


@pytest.mark.parametrize(("flags", "said"), [
    (["--env", "insurance_claims"], "drop --env"),
    (["--agent-model", "mine"], "drop --agent-model"),
    (["--transport", "stdio"], "drop --transport"),
])
def test_flags_that_do_not_serve_openenv_are_refused(flags: list[str], said: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["serve", "--protocol", "openenv", "--suite", "executable", *flags]) == 2
    assert said in capsys.readouterr().err


def test_an_address_others_can_reach_is_refused_without_a_token(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "occubench", "serve", "--protocol", "openenv", "--suite",
                           "executable", "--host", "0.0.0.0", "--output-dir", str(tmp_path / "runs")],
                          capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if k != "OCCUBENCH_SERVE_TOKEN"})
    assert done.returncode == 2 and "OCCUBENCH_SERVE_TOKEN" in done.stderr and not (tmp_path / "runs").exists()
