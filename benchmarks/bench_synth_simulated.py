"""What ``occubench synth simulated`` spends per kept task, and how it grows with K (calibration runs per task), in
one run.

    python benchmarks/bench_synth_simulated.py [--runs 1 2 3 5] [--tasks 4]

One scenario × ``--tasks`` sub-topics against the loopback mock server playing every role, scripted so that one
task is trivial (dropped) and one unsolvable until one repair, as real syntheses go. For each K: requests and tokens
per kept task, split into the writing stages and the calibration runs, and the ratio to the smallest K.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from rich.console import Console

from occubench.core.tables import Table
from occubench.synth.simulated import SimulatedSynthConfig, synthesize
from occubench.testing import MockLLMServer
from occubench.testing.server import make_scripted_responder


def measure(runs: int, tasks: int) -> tuple[int, dict[str, tuple[int, int]]]:
    """(kept tasks, {"stages" | "calibration": (requests, tokens)})."""
    with tempfile.TemporaryDirectory() as tmp, \
            MockLLMServer(make_scripted_responder(synth={"trivial": [2], "unsolvable": [3]})) as server:
        report = synthesize(SimulatedSynthConfig.create({
            "scenario": "Pharmacy discharge reconciliation", "category": "Healthcare", "out": str(Path(tmp) / "o"),
            "synth_model": "s", "agent_model": ["a"], "world_model": "w", "base_url": server.base_url,
            "api_key": "k", "tasks_per_scenario": tasks, "runs": runs, "skip_preflight": True}),
            console=Console(quiet=True))
    parts: dict[str, tuple[int, int]] = {}
    for role, usage in report.usage.items():
        part = "stages" if role.startswith("synth:") else "calibration"
        requests, tokens = parts.get(part, (0, 0))
        parts[part] = (requests + usage.calls, tokens + usage.tokens)
    return report.kept, parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, nargs="+", default=[1, 2, 3, 5], help="values of K")
    parser.add_argument("--tasks", type=int, default=4, help="sub-topics of the scenario (default: 4)")
    args = parser.parse_args()
    table = Table(f"Per kept task, 1 scenario × {args.tasks} tasks (mock server)",
                  ["K", "Kept", "Stage requests", "Stage tokens", "Calibration requests", "Calibration tokens",
                   "All tokens", "× smallest K"], [])
    base = None
    for runs in args.runs:
        kept, parts = measure(runs, args.tasks)
        (stage_requests, stage_tokens), (cal_requests, cal_tokens) = parts["stages"], parts["calibration"]
        total = (stage_tokens + cal_tokens) / kept
        base = base or total
        table.rows.append([str(runs), str(kept), f"{stage_requests / kept:.1f}", f"{stage_tokens / kept:,.0f}",
                           f"{cal_requests / kept:.1f}", f"{cal_tokens / kept:,.0f}", f"{total:,.0f}",
                           f"{total / base:.2f}"])
    Console(highlight=False).print(table.to_rich())


if __name__ == "__main__":
    main()
