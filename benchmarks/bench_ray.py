"""One process against Ray on this machine, each figure as a ratio measured in the same run.

    python benchmarks/bench_ray.py [--trials 10] [--tasks 382] [--data-dir ../shared/occubench-data]

- **Executable suite, reference agent** (no model: CPU-bound Python, SQLite): episodes per second, one process with
  8 threads against Ray with 2 worker processes × 4 episodes.
- **Simulated tasks against the loopback mock server at 200 ms per request** (scripted agent: 2 tool calls and an
  answer; world model: 2 calls; judge: 3 votes in one request): tasks per hour, one process × 64 workers against
  Ray 2 worker processes × 32, beside the endpoint bound — 64 requests in flight for 200 ms each, over the run's
  requests per task, or the longest task chain if that is longer.

The Ray instance is started once, before anything is timed (its start is printed apart); a run's wall time holds
everything else, the workers' start included. Machine CPU is the share of all cores busy during the run (from
``/proc/stat``), the mock server's process and Ray's included.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import ray
from bench_run import start_server, stop_server

from occubench.cli import run as evaluate
from occubench.store import read_results


def _busy() -> tuple[float, float]:
    """(busy, total) CPU time of the whole machine so far, in clock ticks."""
    fields = [float(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return sum(fields) - idle, sum(fields)


def timed(argv: list[str]) -> tuple[float, float, list[dict]]:
    """Run the ``occubench run`` flags ``argv`` quietly into a fresh directory: wall seconds, machine CPU share, the
    results."""
    with tempfile.TemporaryDirectory() as out:
        busy, total = _busy()
        wall = time.perf_counter()
        with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull), contextlib.redirect_stderr(devnull):
            code = evaluate.main([*argv, "--output-dir", out, "--run-name", "bench"])
        wall = time.perf_counter() - wall
        now_busy, now_total = _busy()
        records = read_results(Path(out) / "bench" / "results.jsonl")
    assert code == 0, f"run failed (exit {code}, {len(records)} results)"
    return wall, (now_busy - busy) / (now_total - total), records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=10, help="executable suite: episodes per task (30 tasks)")
    parser.add_argument("--tasks", type=int, default=382, help="simulated tasks")
    parser.add_argument("--data-dir", type=Path,
                        default=Path(__file__).resolve().parents[2] / "shared" / "occubench-data")
    args = parser.parse_args()
    lines = (args.data_dir / "eval_benchmark_solvable.jsonl").read_text().splitlines()[:args.tasks]
    task_ids = [str(json.loads(line)["task_id"]) for line in lines]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"ray {ray.__version__}, {platform.platform()}")
    started = time.perf_counter()
    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, logging_level="ERROR")
    print(f"Ray start (not counted below): {time.perf_counter() - started:.1f} s\n")

    executable = ["--suite", "executable", "--agent", "reference", "--trials", str(args.trials), "--max-workers", "8"]
    local_wall, local_cpu, local = timed(executable)
    ray_wall, ray_cpu, remote = timed([*executable, "--executor", "ray", "--ray-workers", "2"])
    same = {(r["task_id"], r["trial"], r["is_correct"]) for r in local} == \
        {(r["task_id"], r["trial"], r["is_correct"]) for r in remote}
    print(f"executable, reference agent, {len(local)} episodes: local 8 threads {len(local) / local_wall:.0f} "
          f"episodes/s (CPU {100 * local_cpu:.0f} %), Ray 2 x 4 {len(remote) / ray_wall:.0f} episodes/s (CPU "
          f"{100 * ray_cpu:.0f} %); Ray / local {local_wall / ray_wall:.2f}; same verdicts: {same}")

    process, base_url = start_server("--latency", "0.2")
    simulated = ["--agent-model", "agent", "--world-model", "world", "--base-url", base_url, "--data-dir",
                 str(args.data_dir), "--skip-preflight", "--max-workers", "64", "--task-ids", *task_ids]
    try:
        local_wall, local_cpu, local = timed(simulated)
        ray_wall, ray_cpu, remote = timed([*simulated, "--executor", "ray", "--ray-workers", "2"])
    finally:
        stats = stop_server(process)
    chains = [sum(u["calls"] for u in r["usage"].values()) * 0.2 for r in local]
    bound = max(max(chains), sum(chains) / 64)
    per_hour = {name: len(task_ids) / wall * 3600 for name, wall in
                (("bound", bound), ("local", local_wall), ("ray", ray_wall))}
    print(f"simulated, {len(task_ids)} tasks, 200 ms per request, {sum(chains) / 0.2:.0f} requests a run; "
          f"429s: {stats['responses_by_status'].get('429', 0)}")
    print(f"  endpoint bound (64 in flight, longest chain): {per_hour['bound']:,.0f} tasks/h ({bound:.1f} s)")
    for name, label, wall, cpu in (("local", "one process x 64", local_wall, local_cpu),
                                   ("ray", "Ray 2 x 32", ray_wall, ray_cpu)):
        print(f"  {label}: {per_hour[name]:,.0f} tasks/h ({wall:.1f} s), {per_hour[name] / per_hour['bound']:.2f} of "
              f"the bound, machine CPU {100 * cpu:.0f} %")
    print(f"  Ray / one process: {local_wall / ray_wall:.2f}")
    ray.shutdown()


if __name__ == "__main__":
    main()
