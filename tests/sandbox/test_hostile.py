"""The hostile-world corpus against both walls. Each test asserts that the attack's effect did not happen: the
marked host file does not exist, the victim file stays, the loopback listener saw no connection, the key is in no
file and no request, no worker started a process, and the harness carried on and exited normally.

- Loaded without the allow-list in a bubblewrap worker (:mod:`occubench.testing.unchecked`): the OS sandbox alone.
- Through the CLI (``run``, ``validate``, ``suites``, ``tasks``, ``serve`` with ``--worlds-dir``): both walls.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from occubench.cli import main
from occubench.errors import ConfigError, WorldError
from occubench.executable.isolated import load_isolated
from occubench.sandbox import Provider
from occubench.testing import MockLLMServer
from tests.sandbox.corpus import ATTACKS, BASE, SLOW, Attack, make_corpus_world

KEY = "sk-hostile-test-0f9e8d7c6b5a49382716"


def _forked() -> list[int]:
    """The processes whose parent is a worker's Python: a worker never starts one, so each would be world code's."""
    parents: dict[int, tuple[int, list[bytes]]] = {}
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
        except OSError:  # ended meanwhile
            continue
        parents[int(name)] = (int(stat.rsplit(")", 1)[1].split()[1]), argv)
    pythons = {pid for pid, (_, argv) in parents.items()
               if b"occubench.sandbox.worker" in argv and not argv[0].endswith(b"bwrap")}
    # A zygote's children are workers it forked (they keep its command line); they start nothing themselves.
    zygotes = {pid for pid in pythons if b"occubench.sandbox.zygote" in parents[pid][1] and
               parents[pid][0] not in pythons}
    workers = (pythons - zygotes) | {pid for pid, (parent, _) in parents.items() if parent in zygotes}
    return [pid for pid, (parent, _) in parents.items() if parent in workers]


class Scene:
    """One attack's world and everything its effects would show on."""

    def __init__(self, tmp_path: Path, attack: str | None) -> None:
        self.mark = tmp_path / "outside" / "escaped"
        self.root = tmp_path / "worlds"
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.setblocking(False)
        self.folder = make_corpus_world(self.root, ATTACKS[attack] if attack else Attack(), mark=self.mark,
                                        port=self.listener.getsockname()[1], harness=os.getpid())

    def assert_no_effect(self, *texts: str) -> None:
        assert not self.mark.exists() and not self.mark.parent.exists()
        assert (self.root / "victim.txt").read_text() == "keep me"
        with pytest.raises(BlockingIOError):
            self.listener.accept()  # no connection came
        assert _forked() == []  # no fork bomb went off
        for text in texts:
            assert KEY not in text
        for path in self.root.parent.rglob("*"):
            if path.is_file() and path.stat().st_size < 50 << 20:
                assert KEY.encode() not in path.read_bytes(), path
            assert not path.is_file() or path.stat().st_size < 60 << 20, path  # no gigabyte landed here

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def key_in_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness holds a key, as a real run does."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


@pytest.fixture(params=sorted(ATTACKS))
def scene(request: pytest.FixtureRequest, tmp_path: Path, key_in_environment: None) -> Iterator[Scene]:
    scene = Scene(tmp_path, request.param)
    scene.name = request.param  # type: ignore[attr-defined]
    yield scene
    scene.close()


@pytest.mark.slow
def test_the_os_sandbox_alone_holds_every_attack(scene: Scene, sandbox: Provider) -> None:
    outcome: list[str] = []
    try:
        [world] = load_isolated(scene.root, [scene.folder], sandbox, service="occubench.testing.unchecked")
        env = world.environment(time_limit=2)
        try:
            for claim in ("CLM-1004", "CLM-1008"):
                outcome.append(json.dumps(env.call("get_claim", {"claim_id": claim})))
        finally:
            env.close()
    except (ConfigError, WorldError) as exc:  # refused, stopped or crashed: the worker's end, never the harness's
        outcome.append(str(exc))
    scene.assert_no_effect(*outcome)
    assert outcome


def _run(scene: Scene, tmp_path: Path, server: MockLLMServer) -> list[dict]:
    code = main(["run", "--suite", "executable", "--worlds-dir", str(scene.root), "--agent", "reference",
                 "--verifier-model", "judge", "--base-url", server.base_url, "--api-key", KEY,
                 "--output-dir", str(tmp_path / "runs"), "--run-name", "r", "--skip-preflight"])
    results = tmp_path / "runs" / "r" / "results.jsonl"
    if code == 2:  # refused before anything ran
        assert not results.exists()
        return []
    return [json.loads(line) for line in results.read_text().splitlines()]


@pytest.mark.slow
def test_a_run_records_the_attack_as_an_environment_error_or_refuses_the_world(
        scene: Scene, tmp_path: Path, sandbox: Provider) -> None:
    with MockLLMServer() as server:
        results = _run(scene, tmp_path, server)
        bodies = [json.dumps(request) for request in server.requests]
    scene.assert_no_effect(*bodies)
    # A world stopped by a limit is never scored against the agent: its episodes are environment errors.
    for result in results:
        assert result["status"] == "ok" or result["error"]["kind"] == "environment"
    if scene.name in ("busy_loop", "memory_bomb", "catastrophic_regex", "huge_factorial"):  # type: ignore[attr-defined]
        assert results and all(r["status"] == "error" or "timeout" in r["trajectory"] for r in results)


def test_a_clean_outside_world_loads_validates_and_runs_in_the_sandbox(tmp_path: Path, sandbox: Provider,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    scene = Scene(tmp_path, None)
    assert main(["validate", "--worlds-dir", str(scene.root)]) == 0
    assert "3/3 tasks valid" in capsys.readouterr().out
    assert main(["run", "--suite", "executable", "--worlds-dir", str(scene.root), "--agent", "reference",
                 "--output-dir", str(tmp_path / "runs"), "--run-name", "r"]) == 0
    args = json.loads((tmp_path / "runs" / "r" / "args.json").read_text())
    assert args["sandbox"].startswith("bubblewrap") and args["trust_world_code"] is False
    results = [json.loads(line) for line in (tmp_path / "runs" / "r" / "results.jsonl").read_text().splitlines()]
    assert len(results) == 3 and all(r["is_correct"] for r in results)
    scene.close()


# validate plays nine episodes one after another: an attack that holds each until the kill is shown by the run test.
@pytest.mark.slow
@pytest.mark.parametrize(("command", "attack"), [(command, attack) for command in ("suites", "tasks", "validate")
                                                 for attack in sorted(ATTACKS)
                                                 if command != "validate" or attack not in SLOW])
def test_listing_and_validating_never_let_an_attack_out(command: str, attack: str, tmp_path: Path,
                                                        key_in_environment: None, sandbox: Provider,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    scene = Scene(tmp_path, attack)
    args = {"suites": ["suites"], "tasks": ["tasks", "--suite", "executable"], "validate": ["validate"]}[command]
    code = main([*args, "--worlds-dir", str(scene.root)])
    out = capsys.readouterr()
    assert code in (0, 1, 2)
    scene.assert_no_effect(out.out, out.err)
    scene.close()


@pytest.mark.parametrize("attack", ["container_escape_shell", "import_time_shell", "memory_bomb", "read_environ"])
@pytest.mark.slow
def test_serving_a_hostile_world_lets_nothing_out(attack: str, tmp_path: Path, key_in_environment: None,
                                                  sandbox: Provider) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    scene = Scene(tmp_path, attack)

    async def session() -> str:
        params = StdioServerParameters(command=sys.executable, args=["-m", "occubench", "serve", "--worlds-dir",
                                                                      str(scene.root), "--env", BASE],
                                       env={**os.environ, "OPENAI_API_KEY": KEY})
        try:
            async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                result = await client.call_tool("get_claim", {"claim_id": "CLM-1004"})
                return result.model_dump_json()
        except Exception as exc:  # noqa: BLE001 - a refused world ends the server before it serves
            return f"{type(exc).__name__}: {exc}"
    text = anyio.run(session)
    scene.assert_no_effect(text)
    scene.close()


#: An outside agent (``--agent command:``): looks a claim up over MCP, which runs the attack, then answers.
_OUTSIDE = """
import asyncio, sys
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

async def main():
    async with Client(streamable_http_client(sys.argv[1])) as world:
        seen = await world.call_tool("get_claim", {"claim_id": "CLM-1004"})
        await world.call_tool("submit", {"answer": seen.content[0].text[:200]})

asyncio.run(main())
"""


@pytest.mark.slow
@pytest.mark.parametrize("attack", ["container_escape_shell", "read_environ", "memory_bomb", "busy_loop"])
def test_an_outside_agents_episode_in_a_hostile_world_lets_nothing_out(attack: str, tmp_path: Path,
                                                                       key_in_environment: None,
                                                                       sandbox: Provider) -> None:
    scene = Scene(tmp_path, attack)
    (tmp_path / "outside.py").write_text(_OUTSIDE)
    with MockLLMServer() as server:
        code = main(["run", "--suite", "executable", "--worlds-dir", str(scene.root), "--base-url", server.base_url,
                     "--agent", f"command:{sys.executable} {tmp_path / 'outside.py'} {{mcp_url}}",
                     "--task-ids", f"{BASE}/pay_water_claim", "--output-dir", str(tmp_path / "runs"),
                     "--run-name", "r", "--skip-preflight"])
        bodies = [json.dumps(request) for request in server.requests]
    results = tmp_path / "runs" / "r" / "results.jsonl"
    records = [json.loads(line) for line in results.read_text().splitlines()] if code != 2 else []
    scene.assert_no_effect(*bodies, *(json.dumps(r) for r in records))
    for record in records:  # the world's failure is the environment's, never scored against the agent
        assert record["status"] == "ok" or record["error"]["kind"] in ("environment", "agent")
    if attack in ("memory_bomb", "busy_loop"):  # past the allow-list: the OS sandbox stopped them
        assert records and (records[0]["status"] == "error" or "timeout" in records[0]["trajectory"])
    scene.close()
