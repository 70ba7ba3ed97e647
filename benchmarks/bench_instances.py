"""Executable worlds: create isolated instances and make one tool call on each.

Goals: 1,000 instances with one call each in at most 2 s on 2 cores; a tool call's p50 at most 1 ms.

    python benchmarks/bench_instances.py [--instances 1000] [--world insurance_claims]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

from occubench.executable import ExecutableEnvironment, load_world


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=1000)
    parser.add_argument("--world", default="insurance_claims")
    args = parser.parse_args()
    world = load_world(args.world)
    call = world.tasks[0].reference[0]  # a read call every task of the world starts from
    ExecutableEnvironment(world).close()  # build the template once, as a run does before its first task

    calls: list[float] = []
    started = time.perf_counter()
    for _ in range(args.instances):
        env = ExecutableEnvironment(world)
        before = time.perf_counter()
        observation = env.call(call.tool, dict(call.arguments))
        calls.append(time.perf_counter() - before)
        assert "error" not in observation, observation
        env.close()
    total = time.perf_counter() - started

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"world {args.world}: {args.instances} instances, one {call.tool} call each")
    print(f"total {total:.3f} s (goal <= 2 s for 1,000), {1000 * total / args.instances:.3f} ms per instance")
    print(f"tool call p50 {1000 * statistics.median(calls):.3f} ms (goal <= 1 ms), "
          f"p99 {1000 * statistics.quantiles(calls, n=100)[98]:.3f} ms")


if __name__ == "__main__":
    main()
