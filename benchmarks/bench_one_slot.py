"""A one-slot server (the mock as llama-cpp-python's: serial, 200 ms a request): executable tasks run with the
llama.cpp profile's defaults, against the serial bound (the sum of the server's request times, its slot never idle).

Goal: 10 tasks finish within 1.2 × the serial bound (episodes phase: first request received to last answered).
For contrast, the same tasks with 8 workers and `--max-connections 1`: the same bound, but each request waits
behind the others in the harness; with `--max-seconds-per-task 2` (a task's own time is about 0.6 s) none may be
stopped for it: time spent waiting for a connection is not the task's own.

    python benchmarks/bench_one_slot.py [--tasks 10] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import tempfile
from pathlib import Path

from occubench.cli import main as cli
from occubench.testing import MockLLMServer

IDS = ["clinic_scheduling/book_urgent_cardiology", "insurance_claims/pay_water_claim",
       "insurance_claims/review_open_thefts"]


def measure(label: str, tasks: list[str], latency: float, *extra: str) -> float:
    from occubench.store import read_results

    quiet = io.StringIO()  # the run's own progress and tables
    with MockLLMServer(llama_cpp=True, latency_s=latency) as server, tempfile.TemporaryDirectory() as out, \
            contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        status = cli(["run", "--suite", "executable", "--agent-model", "local", "--base-url", server.base_url,
                      "--output-dir", out, "--skip-preflight", "--task-ids", *tasks, *extra])
        assert status == 0, status
        timeline = server.stats.timeline
        stopped = sum(r["stop_reason"] == "max_seconds_per_task" for path in Path(out).glob("*/results.jsonl")
                      for r in read_results(path))
    bound = sum(t.finished - t.started for t in timeline)
    phase = max(t.finished for t in timeline) - min(t.received for t in timeline)
    waits = sorted(t.started - t.received for t in timeline)
    print(f"{label:<24} {len(timeline):4d} requests | episodes phase {phase:6.2f} s | serial bound {bound:6.2f} s | "
          f"ratio {phase / bound:5.3f} | queue wait p50 {waits[len(waits) // 2]:5.2f} s, max {waits[-1]:5.2f} s | "
          f"stopped by the time limit: {stopped}")
    return phase / bound


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    from occubench.executable.registry import worlds_of

    every = [f"{world.name}/{task.id}" for world in worlds_of(None) for task in world.tasks]
    tasks = (IDS + [t for t in every if t not in IDS])[:args.tasks]
    print(f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; {len(tasks)} tasks, "
          f"{args.latency * 1000:.0f} ms a request")
    ratio = measure("llama.cpp profile", tasks, args.latency)
    measure("8 workers, 1 connection", tasks, args.latency, "--server", "generic", "--max-connections", "1",
            "--max-seconds-per-task", "2")
    print(f"goal: ratio ≤ 1.2 with the profile: {'met' if ratio <= 1.2 else 'NOT met'}")


if __name__ == "__main__":
    main()
