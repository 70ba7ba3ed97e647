"""Our runner beside Inspect AI (issue 33): the same OccuBench tasks, the same models, the same mock server, each
harness in its own process as a user runs it: ``occubench run`` and ``inspect eval occubench/occubench``.

    python benchmarks/bench_inspect.py [--only small,large] [--data-dir ../shared/occubench-data]

- **small**: the first 40 tasks, 8 concurrent, a 50 ms server: each process's CPU (user + system, imports
  included) per request the server received (ours includes its preflight probes, Inspect makes none), its peak
  RSS and wall time; goal: ours <= 0.2 x Inspect's CPU per request.
- **large**: all 382 tasks, 64 concurrent, a 200 ms server: the episodes phase (the server's first episode
  request to its last answer) and the process wall over the bound, max(longest chain, sum of chains / 64) x
  latency, each from its own run's chains (ours from results.jsonl, Inspect's from the model events of each
  sample in its log); goal: ours <= 1.1 x.

Inspect runs ``--max-samples N --max-connections N`` (N episodes at once, each one request at a time) with
``--display none``, against the mock through ``OPENAI_BASE_URL``, ``-M responses_api=false`` for chat completions.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_async import DATA, bound, measure, occubench, preamble, results_of, run_args
from bench_run import start_server, stop_server


def inspect_args(data_dir: Path, logs: str, tasks: int, concurrency: int) -> list[str]:
    chat = "{model: openai/world, model_args: {responses_api: false}}"
    return ["eval", "occubench/occubench", "--model", "openai/agent", "-M", "responses_api=false", "--model-role",
            f"world={chat}", "-T", f"data_dir={data_dir}", "--limit", str(tasks), "--max-samples", str(concurrency),
            "--max-connections", str(concurrency), "--display", "none", "--log-dir", logs]


def inspect_eval(args: list[str], base_url: str) -> dict[str, Any]:
    """``inspect eval`` in its own process, measured as bench_async measures ours."""
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "k"}
    # The console script, as a user runs it: ``python -m inspect_ai`` from the repository's root finds the
    # gitignored occubench.egg-info there before the editable install, and our tasks lose their namespace.
    return measure([str(Path(sys.executable).with_name("inspect")), *args], env)


def inspect_records(logs: str) -> tuple[list[dict[str, Any]], str]:
    """One record per sample as bound() reads them (its model events as its chain, verdict), and the log's status
    with its errors."""
    from inspect_ai.log import read_eval_log

    paths = list(Path(logs).glob("*.eval"))
    if len(paths) != 1:  # --display none prints nothing, not even why
        raise RuntimeError(f"Inspect wrote {len(paths)} logs: run its command with --display plain to see why")
    log = read_eval_log(str(paths[0]))
    records = [{"task_id": str(s.id), "is_correct": "verdict" in (s.scores or {}) and s.scores["verdict"].value == 1,
                "usage": {"all": {"calls": sum(e.event == "model" for e in s.events)}}} for s in log.samples or []]
    errors = sum(s.error is not None for s in log.samples or [])
    return records, f"{log.status}, {errors} sample errors" + (f", {log.error.message}" if log.error else "")


def both(data_dir: Path, tasks: int, concurrency: int, latency: float) -> dict[str, dict[str, Any]]:
    """Ours, then Inspect's, each against a fresh server: the process's figures, the server's, the records."""
    found = {}
    for name in ("ours", "inspect"):
        process, base_url = start_server("--latency", str(latency))
        try:
            with tempfile.TemporaryDirectory() as out:
                if name == "ours":
                    run = occubench(run_args(data_dir, base_url, out, concurrency, "--limit", str(tasks)))
                    records, status = results_of(out), f"exit {run['status']}"
                else:
                    run = inspect_eval(inspect_args(data_dir, out, tasks, concurrency), base_url)
                    records, status = inspect_records(out)
                    status = f"exit {run['status']}, log {status}"
        finally:
            stats = stop_server(process)
        floor, chained = bound(records, latency, concurrency)
        found[name] = {**run, "server": stats, "records": records, "bound": floor, "chained": chained}
        print(f"  {name}: {len(records)} results, {stats['requests']} requests at the server ({chained} in the "
              f"chains), at most {stats['max_in_flight']} in flight; {status}")
    verdicts = [{str(r["task_id"]): bool(r["is_correct"]) for r in found[n]["records"]} for n in ("ours", "inspect")]
    print(f"  same tasks: {verdicts[0].keys() == verdicts[1].keys()}; same verdicts: {verdicts[0] == verdicts[1]}")
    return found


def small(data_dir: Path) -> None:
    print("first 40 tasks, 8 concurrent, 50 ms server:")
    found = both(data_dir, 40, 8, 0.05)
    per = {}
    for name, run in found.items():
        per[name] = run["cpu"] / run["server"]["requests"]
        print(f"  {name}: CPU {run['cpu']:.2f} s = {1000 * per[name]:.2f} ms per request"
              f"{' (preflight included)' if name == 'ours' else ''}, peak RSS {run['rss_mb']:.0f} MB, "
              f"wall {run['wall']:.2f} s (episodes phase {run['server']['episodes_phase_s']:.2f} s)")
    print(f"  ours / Inspect CPU per request = {per['ours'] / per['inspect']:.3f} (goal <= 0.2)")


def large(data_dir: Path) -> None:
    print("all 382 tasks, 64 concurrent, 200 ms server:")
    found = both(data_dir, 382, 64, 0.2)
    for name, run in found.items():
        phase, floor = run["server"]["episodes_phase_s"], run["bound"]
        before, after = run["server"]["first_received"] - run["started"], run["ended"] - run["server"]["last_finished"]
        print(f"  {name}: episodes phase {phase:.2f} s / bound {floor:.2f} s = {phase / floor:.3f}"
              f"{' (goal <= 1.1)' if name == 'ours' else ''}; process wall {run['wall']:.2f} s = "
              f"{run['wall'] / floor:.3f} x the bound; {before:.2f} s before the first request, {after:.2f} s after "
              f"the last answer; CPU {run['cpu']:.1f} s, peak RSS {run['rss_mb']:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="small,large")
    parser.add_argument("--data-dir", type=Path, default=DATA)
    args = parser.parse_args()
    sections = preamble(args.data_dir, args.only)
    if "small" in sections:
        small(args.data_dir)
    if "large" in sections:
        large(args.data_dir)


if __name__ == "__main__":
    main()
