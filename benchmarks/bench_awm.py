"""AWM-format worlds in sandbox workers, side by side in one run with the built-in executable worlds: a worker's
start and its world's loading, a new instance, a tool call's overhead over the same call in this process, 64
episodes of one world started at once on a cold pool, and 1,000 worlds with one instance and one call each.

The 1,000 worlds are the runnable scenarios of an AWM-format set (the published sample: two) copied under 1,000
names into a set of the same format, in a temporary folder, with the cache in a temporary folder too.

Goals on 2 cores: new instance p50 at most 20 ms, call overhead p50 at most 2 ms, 64 starts at once within about 64 x
one start's CPU / cores, 1,000 worlds x 1 instance x 1 call in at most 120 s. Each timed section also prints how
many cores the machine's other processes used meanwhile: on a shared machine the figures follow them.

    python benchmarks/bench_awm.py --data-dir ../shared/awm-1k-sample [--worlds 1000] [--concurrency 2] [--at-once 64]
        [--busy 2]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench_async import machine_busy
from rich.console import Console


def copied_set(source: Path, out: Path, worlds: int) -> list[str]:
    """``source``'s runnable scenarios copied under ``worlds`` names into an AWM-format set at ``out``."""
    from occubench.awm.data import FILES, load_set

    runnable = [s.name for s in load_set(source).scenarios.values() if s.runnable]
    names = {name: [f"{name}_copy{i}" for i in range(n, worlds, len(runnable))] for n, name in enumerate(runnable)}
    out.mkdir(parents=True, exist_ok=True)
    for file in FILES.values():
        with (source / file).open() as lines, (out / file).open("w") as copy:
            for line in lines:
                row = json.loads(line)
                for name in names.get(row.get("scenario"), []):
                    copy.write(json.dumps({**row, "scenario": name}) + "\n")
    return [name for group in names.values() for name in group]


def read_call(world: Any) -> tuple[str, dict[str, Any]]:
    """A tool of the world that reads and needs no argument: the same call made in a worker and in this process."""
    environment = world.environment()
    try:
        tools = [t for t in environment.tools() if not t.writes and not t.parameters.get("required")]
    finally:
        environment.close()
    return tools[0].name, {}


def in_process_call(folder: Path, tool: str, rounds: int) -> float:
    """p50 of ``tool`` called on the application imported here (the benchmark trusts the data it copies)."""
    from occubench.awm.app import Application, build_database

    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "template.db"
        seed = folder / "seed.json"
        build_database(template, json.loads((folder / "schema.json").read_text()),
                       json.loads(seed.read_text()) if seed.is_file() else None)
        application = Application((folder / "app.py").read_text(), str(folder / "app.py"), template)
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            application.call(tool, {})
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def tree_cpu() -> float:
    """CPU seconds of this process and of every process below it alive now (a forked worker is the zygote's child,
    so its CPU is in no rusage of ours until it ends), with the children each has reaped."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text() if entry.isdigit() else ""
        except OSError:  # ended meanwhile
            continue
        if stat:
            fields = stat[stat.rindex(")") + 2:].split()
            parents[int(entry)] = int(fields[1])
            cpu[int(entry)] = sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    total, below = 0.0, [os.getpid()]
    while below:
        pid = below.pop()
        total += cpu.get(pid, 0.0)
        below += [child for child, parent in parents.items() if parent == pid]
    return total


def load(function: Callable[[], Any]) -> tuple[float, float, float]:
    """``function()``'s wall seconds, the CPU seconds it took (this process and those below it), and the cores the
    machine's other processes used meanwhile."""
    busy, cpu, started = machine_busy(), tree_cpu(), time.perf_counter()
    function()
    wall, used = time.perf_counter() - started, tree_cpu() - cpu
    return wall, used, max(0.0, machine_busy() - busy - used) / wall


@contextlib.contextmanager
def busy(processes: int) -> Iterator[None]:
    """``processes`` processes that spin meanwhile, in one session of their own: another program's CPU-bound job. Their
    parent leaves them at once, so that they are none of this process's (nor counted in its CPU)."""
    spin = f"import os\nfor _ in range({processes}):\n    if not os.fork():\n        while True:\n            pass\n"
    leader = subprocess.Popen([sys.executable, "-c", spin], start_new_session=True)
    leader.wait()
    try:
        yield
    finally:
        os.killpg(leader.pid, signal.SIGKILL)  # the group keeps its leader's number


def at_once(world: Any, count: int, beside: str = "") -> None:
    """``count`` episodes of ``world`` started at once on a cold pool (each until its instance is open): wall and CPU
    against one start's CPU x ``count`` / cores, the bound for starts that keep every core busy."""
    world.pool.close()
    _, one, _ = load(lambda: world.environment().close())
    world.pool.close()
    ready, opened = threading.Barrier(count), []

    def start(_: int) -> None:
        ready.wait()
        opened.append(world.environment())

    with ThreadPoolExecutor(count) as threads:
        wall, cpu, others = load(lambda: list(threads.map(start, range(count))))
    for environment in opened:
        environment.close()
    cores = os.cpu_count() or 1
    print(f"  {count} episodes started at once on a cold pool{beside}: {wall:.2f} s, {cpu:.2f} s of CPU "
          f"({cpu / wall:.2f} cores; {1000 * cpu / count:.0f} ms a start); one start alone {1000 * one:.0f} ms of "
          f"CPU, x {count} / {cores} cores = {one * count / cores:.2f} s; other processes meanwhile {others:.2f} cores")


def timed(function: Callable[[], Any]) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def instances(open_env: Callable[[], Any], tool: str, arguments: dict[str, Any],
              rounds: int) -> tuple[float, float, float]:
    """p50 of a new instance, of the first call on it (over ``rounds`` instances of a warm worker), and of a call
    on an instance that has served calls already."""
    opens, firsts = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        environment = open_env()
        opened = time.perf_counter()
        environment.call(tool, dict(arguments))
        firsts.append(time.perf_counter() - opened)
        opens.append(opened - started)
        environment.close()
    environment = open_env()
    try:
        calls = [timed(lambda: environment.call(tool, dict(arguments))) for _ in range(rounds)]
    finally:
        environment.close()
    return statistics.median(opens), statistics.median(firsts), statistics.median(calls)


def awm(args: argparse.Namespace, provider: Any) -> None:
    from occubench.awm.data import load_set
    from occubench.awm.plugin import runnable_worlds
    from occubench.awm.world import AwmWorld

    with tempfile.TemporaryDirectory() as tmp:
        names = copied_set(Path(args.data_dir), Path(tmp) / "set", args.worlds)
        started = time.perf_counter()
        awm_set = load_set(Path(tmp) / "set")
        worlds = runnable_worlds(awm_set, provider, Console(quiet=True))
        print(f"AWM: {len(names)} worlds read and written to the cache in {time.perf_counter() - started:.1f} s")
        first = worlds[0]
        cold = timed(lambda: first.environment().close())  # the zygote's start, the worker's, the world's loading
        starts = [timed(lambda w=world: w.environment().close()) for world in worlds[1:11]]
        tool, arguments = read_call(first)
        here = in_process_call(first.folder, tool, args.rounds)
        opened, first_call, called = instances(first.environment, tool, arguments, args.rounds)
        provider_name = worlds[0].pool.provider.name
        print(f"AWM {provider_name} worker: first start {1000 * cold:.0f} ms (with the zygote's, if any); worker "
              f"start + world load p50 {1000 * statistics.median(starts):.0f} ms over 10 worlds")
        print(f"  new instance p50 {1000 * opened:.2f} ms (goal <= 20 ms); its first {tool} p50 "
              f"{1000 * first_call:.2f} ms; later calls p50 {1000 * called:.2f} ms, in this process "
              f"{1000 * here:.2f} ms: overhead +{1000 * (called - here):.2f} ms (goal <= 2 ms)")
        at_once(content := next((w for w in worlds if w.name.startswith("content_platform_1")), first), args.at_once)
        if args.busy:
            with busy(args.busy):
                at_once(content, args.at_once, f", beside {args.busy} busy processes of another session")

        def one(world: Any) -> None:
            environment = world.environment()
            try:
                environment.call(next(t.name for t in environment.tools() if not t.parameters.get("required")), {})
            finally:
                environment.close()

        def many(label: str, some: list[Any]) -> None:
            if not some:
                return
            with ThreadPoolExecutor(args.concurrency) as threads:
                total, cpu, others = load(lambda: list(threads.map(one, some)))
            print(f"  {label}: {len(some)} worlds x 1 instance x 1 call, {args.concurrency} at a time: {total:.1f} s; "
                  f"for 1,000: {1000 * total / len(some):.1f} s (goal <= 120 s); {1000 * cpu / len(some):.0f} ms of "
                  f"CPU a world ({cpu / total:.2f} cores); other processes meanwhile {others:.2f} cores")

        many("forked workers", worlds[11:])
        # The same worlds, each in a sandbox of its own (what kernels without Landlock ABI 6 get).
        own = [AwmWorld(world.scenario, world.folder, provider) for world in worlds[11:11 + args.own_sandbox]]
        many(f"{provider.name} per world", own)


def executable(provider: Any, rounds: int) -> None:
    from occubench.executable import load_world
    from occubench.executable.isolated import SERVICE, load_isolated
    from occubench.executable.registry import _WORLDS
    from occubench.sandbox import pool

    names = sorted(p.name for p in _WORLDS.iterdir() if (p / "__init__.py").is_file())
    starts = []
    for name in names:
        pool(provider, SERVICE, [_WORLDS]).close()  # a cold worker: the executable worlds share one per folder
        started = time.perf_counter()
        [world] = load_isolated(_WORLDS, [_WORLDS / name], provider)
        world.environment().close()
        starts.append(time.perf_counter() - started)
    name = "insurance_claims" if "insurance_claims" in names else names[0]
    [world] = load_isolated(_WORLDS, [_WORLDS / name], provider)
    call = load_world(name).tasks[0].reference[0]
    opened, first_call, called = instances(world.environment, call.tool, call.arguments, rounds)
    print(f"executable {provider.name} worker: worker start + world load p50 {1000 * statistics.median(starts):.0f} "
          f"ms over {len(names)} worlds; new instance p50 {1000 * opened:.2f} ms; its first {call.tool} p50 "
          f"{1000 * first_call:.2f} ms; later calls p50 {1000 * called:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", required=True, help="an AWM-format set (the published sample will do)")
    parser.add_argument("--worlds", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--at-once", type=int, default=64, help="episodes started at once on a cold pool")
    parser.add_argument("--busy", type=int, default=2,
                        help="the same beside as many busy processes of one other session (0: not)")
    parser.add_argument("--own-sandbox", type=int, default=100,
                        help="worlds also run with a sandbox each, without the zygote (default: 100)")
    args = parser.parse_args()
    from occubench.sandbox import detect

    provider = detect().provider
    if provider is None:
        raise SystemExit("no sandbox here: the figures are the sandbox's")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["OCCUBENCH_CACHE_DIR"] = cache
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}\n")
        executable(provider, args.rounds)
        awm(args, provider)


if __name__ == "__main__":
    main()
