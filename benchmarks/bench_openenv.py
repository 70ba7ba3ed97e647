"""What OpenEnv adds to a tool call: the same call of an executable world made natively and through
``occubench serve --protocol openenv``, each timed call by call.

    python benchmarks/bench_openenv.py [--calls 2000] [--peer /work/peers/openenv]

- **native**: the call as the built-in agent makes it (``make_call`` on a world built and wrapped as a run builds
  it: the step limit, the fault injector's hold in E0), in this process, on the harness loop.
- **openenv, raw**: one WebSocket session of a server in its own process, ``step`` with a ``call_tool`` action per
  call, from a client in this process that sends the frames OpenEnv's ``EnvClient`` sends (aiohttp): the server's
  cost plus the loopback round trip.
- **openenv, GenericEnvClient** (with ``--peer``, the openenv peer's virtualenv): the same through OpenEnv's own
  client in the peer's Python, its pydantic parsing included.

The call is the first of the first task's reference solution (a read), repeated; the added time is the p50 of a
way through OpenEnv less the native p50.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp

from occubench.cli import build_parser
from occubench.cli.run import run_configs_from_args
from occubench.core.agent import ScriptedAgent, make_call
from occubench.core.trajectory import ToolCall
from occubench.engine.factory import EpisodeFactory
from occubench.util.aio import run_sync

PEER_CLIENT = """
import json, sys, time
from openenv import GenericEnvClient
plan = json.load(sys.stdin)
times = []
with GenericEnvClient(base_url=plan["url"]).sync() as env:
    env.reset(task_id=plan["task_id"])
    action = {"type": "call_tool", "tool_name": plan["tool"], "arguments": plan["arguments"]}
    for _ in range(plan["calls"]):
        start = time.perf_counter()
        env.step(action)
        times.append(time.perf_counter() - start)
    env.step({"type": "call_tool", "tool_name": "submit", "arguments": {"answer": "done"}})
json.dump(times, sys.stdout)
"""


def first_call(calls: int) -> tuple[EpisodeFactory, Any, str, dict[str, Any]]:
    config, = run_configs_from_args(build_parser().parse_args(
        ["run", "--suite", "executable", "--agent", "reference", "--max-steps", str(calls + 10)]))
    factory = EpisodeFactory.create(config)
    task = factory.plan.tasks[0]
    assert isinstance(factory.plan.reference, ScriptedAgent)
    (name, arguments), *_ = factory.plan.reference.script(task)[0]
    return factory, task, name, arguments


def native(factory: EpisodeFactory, task: Any, name: str, arguments: dict[str, Any], calls: int) -> list[float]:
    env = factory.world(factory.suite(factory.models()), task)
    specs = env.tools()

    async def timed() -> list[float]:
        times = []
        for index in range(calls):
            record = ToolCall(name=name, arguments=json.dumps(arguments), observation={})
            start = time.perf_counter()
            await make_call(env, specs, record, index)
            times.append(time.perf_counter() - start)
            assert "error" not in record.observation, record.observation
        return times
    try:
        return run_sync(timed())
    finally:
        env.close()


@contextmanager
def served(calls: int, output: Path) -> Iterator[str]:
    log = output / "serve.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "occubench", "serve", "--protocol", "openenv", "--suite",
                                    "executable", "--max-steps", str(calls + 10), "--port", "0", "--output-dir",
                                    str(output), "--run-name", f"bench-{time.monotonic_ns()}"],
                                   stdout=out, stderr=out)
    try:
        while not (found := re.search(r"OpenEnv server: (http://\S+)", log.read_text())):
            if process.poll() is not None:
                raise SystemExit(log.read_text())
            time.sleep(0.05)
        yield found[1]
    finally:
        process.kill()
        process.wait()


async def raw(url: str, task_id: Any, name: str, arguments: dict[str, Any], calls: int) -> list[float]:
    step = json.dumps({"type": "step", "data": {"type": "call_tool", "tool_name": name, "arguments": arguments}})
    async with aiohttp.ClientSession() as http, http.ws_connect(f"{url}/ws", max_msg_size=0) as socket:
        await socket.send_json({"type": "reset", "data": {"task_id": task_id}})
        await socket.receive_str()
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            await socket.send_str(step)
            answer = json.loads(await socket.receive_str())
            times.append(time.perf_counter() - start)
            assert answer["type"] == "observation" and "error" not in answer["data"]["observation"]["result"]["data"]
        await socket.send_json({"type": "step", "data": {"type": "call_tool", "tool_name": "submit",
                                                         "arguments": {"answer": "done"}}})
        await socket.receive_str()
        return times


def peer(venv: Path, url: str, task_id: Any, name: str, arguments: dict[str, Any], calls: int) -> list[float]:
    plan = {"url": url, "task_id": task_id, "tool": name, "arguments": arguments, "calls": calls}
    done = subprocess.run([str(venv / "bin" / "python"), "-c", PEER_CLIENT], input=json.dumps(plan),
                          capture_output=True, text=True, check=True)
    return list(json.loads(done.stdout))


def row(label: str, times: list[float], floor: float | None) -> str:
    times = sorted(times)
    p50, p90 = times[len(times) // 2], times[int(len(times) * 0.9)]
    added = f"{(p50 - floor) * 1000:+.3f} ms" if floor is not None else "—"
    mean = statistics.fmean(times)
    return f"| {label} | {p50 * 1000:.3f} ms | {p90 * 1000:.3f} ms | {mean * 1000:.3f} ms | {added} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--peer", type=Path, help="the openenv peer's virtualenv (bash .ci/peers/openenv.sh DIR)")
    args = parser.parse_args()
    factory, task, name, arguments = first_call(args.calls)
    print(f"call: {name}({json.dumps(arguments)}) of {task.task_id}, {args.calls} times each way\n")
    base = native(factory, task, name, arguments, args.calls)
    floor = sorted(base)[len(base) // 2]
    print("| Way | p50 | p90 | mean | added (p50) |\n|---|---|---|---|---|")
    print(row("native (make_call, this process)", base, None))
    with tempfile.TemporaryDirectory() as output:
        with served(args.calls, Path(output)) as url:
            print(row("OpenEnv, raw WebSocket client", asyncio.run(raw(url, task.task_id, name, arguments,
                                                                        args.calls)), floor))
        if args.peer:
            with served(args.calls, Path(output)) as url:
                print(row("OpenEnv, GenericEnvClient (peer)", peer(args.peer, url, task.task_id, name, arguments,
                                                                     args.calls), floor))


if __name__ == "__main__":
    main()
