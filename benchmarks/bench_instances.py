"""Executable worlds: create isolated instances and make one tool call on each, in this process and in sandbox
workers, side by side in one run.

Goals: in this process, 1,000 instances with one call each in at most 2 s and a call's p50 at most 1 ms; in a warm
bubblewrap worker, a call's overhead p50 at most 1 ms, a new instance at most 20 ms, and 1,000 instances with one
call each in at most 20 s on 2 cores.

    python benchmarks/bench_instances.py [--instances 1000] [--world insurance_claims]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable

from occubench.executable import ExecutableEnvironment, load_world
from occubench.executable.environment import WorldEnvironment
from occubench.executable.isolated import load_isolated
from occubench.executable.registry import _WORLDS
from occubench.sandbox import Provider, Unconfined, detect


def measure(label: str, instances: int, open_env: Callable[[], WorldEnvironment], tool: str,
            arguments: dict) -> dict[str, float]:
    opens, calls = [], []
    started = time.perf_counter()
    for _ in range(instances):
        before = time.perf_counter()
        env = open_env()
        opened = time.perf_counter()
        observation = env.call(tool, dict(arguments))
        calls.append(time.perf_counter() - opened)
        opens.append(opened - before)
        assert "error" not in observation, observation
        env.close()
    total = time.perf_counter() - started
    figures = {"total": total, "open_p50": statistics.median(opens), "call_p50": statistics.median(calls),
               "call_p99": statistics.quantiles(calls, n=100)[98]}
    print(f"{label:<34} total {total:7.3f} s | new instance p50 {1000 * figures['open_p50']:6.3f} ms | "
          f"call p50 {1000 * figures['call_p50']:6.3f} ms, p99 {1000 * figures['call_p99']:6.3f} ms")
    return figures


def isolated(provider: Provider, name: str) -> tuple[float, Callable[[], WorldEnvironment]]:
    """The world loaded by a worker of ``provider`` (cold start timed), and a way to open instances of it."""
    started = time.perf_counter()
    [world] = load_isolated(_WORLDS, [_WORLDS / name], provider)
    cold = time.perf_counter() - started
    return cold, world.environment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=1000)
    parser.add_argument("--world", default="insurance_claims")
    args = parser.parse_args()
    world = load_world(args.world)
    call = world.tasks[0].reference[0]  # a read call every task of the world starts from
    ExecutableEnvironment(world).close()  # build the template once, as a run does before its first task

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"world {args.world}: {args.instances} instances, one {call.tool} call each\n")
    here = measure("in this process", args.instances, lambda: ExecutableEnvironment(world), call.tool,
                   call.arguments)
    providers: list[Provider] = [p for p in (detect().provider,) if p is not None] + [Unconfined()]
    for provider in providers:
        cold, open_env = isolated(provider, args.world)
        print(f"{provider.name} worker: started and world loaded in {1000 * cold:.0f} ms")
        figures = measure(f"{provider.name} worker (warm, reused)", args.instances, open_env, call.tool,
                          call.arguments)
        print(f"  overhead over this process: call p50 +{1000 * (figures['call_p50'] - here['call_p50']):.3f} ms "
              f"(goal <= 1 ms); new instance p50 {1000 * figures['open_p50']:.3f} ms (goal <= 20 ms); "
              f"{args.instances} instances {figures['total']:.2f} s (goal <= 20 s for 1,000)\n")


if __name__ == "__main__":
    main()
