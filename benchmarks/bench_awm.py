"""AWM-format worlds in sandbox workers, side by side in one run with the built-in executable worlds: a worker's
start and its world's loading, a new instance, a tool call's overhead over the same call in this process, and 1,000
worlds with one instance and one call each.

The 1,000 worlds are the runnable scenarios of an AWM-format set (the published sample: two) copied under 1,000
names into a set of the same format, in a temporary folder, with the cache in a temporary folder too.

Goals on 2 cores: new instance p50 at most 20 ms, call overhead p50 at most 2 ms, 1,000 worlds x 1 instance x 1 call
in at most 120 s.

    python benchmarks/bench_awm.py --data-dir ../shared/awm-1k-sample [--worlds 1000] [--concurrency 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

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

        def one(world: Any) -> None:
            environment = world.environment()
            try:
                environment.call(next(t.name for t in environment.tools() if not t.parameters.get("required")), {})
            finally:
                environment.close()

        def many(label: str, some: list[Any]) -> None:
            started = time.perf_counter()
            with ThreadPoolExecutor(args.concurrency) as threads:
                list(threads.map(one, some))
            total = time.perf_counter() - started
            print(f"  {label}: {len(some)} worlds x 1 instance x 1 call, {args.concurrency} at a time: {total:.1f} s; "
                  f"for 1,000: {1000 * total / len(some):.1f} s (goal <= 120 s)")

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
