"""``occubench synth executable`` against a loopback server: wall time, sandbox cost, the synthesis report's figures,
and a resumed run.

The mock server runs in its own process with a fixed latency per request and plays every stage, with one scripted
fault in each stage after the first (so every world needs one correction round per stage). Figures printed:

- wall time of a fresh synthesis of N worlds, and of running the same command again (everything stored: no
  request may be sent; the sandbox still executes every stage to rebuild the worlds);
- the cost of one sandboxed execution (a fresh worker in the machine's sandbox: namespaces, limits, filters, the
  probe's imports, one request), median of 5;
- the synthesis report: per stage first-attempt success and mean correction rounds; worlds, tables, rows, tools
  and tasks kept; tokens and cost per 100 tasks (priced at USD 1.25 / 10 per 1M input / output tokens).

    python benchmarks/bench_synth_executable.py [--worlds 4] [--latency 0.05] [--workers 4]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_run import start_server, stop_server
from rich.console import Console

from occubench.executable.isolated import provider_for
from occubench.sandbox import Worker
from occubench.synth.executable import ExecutableSynthConfig, synthesize
from occubench.synth.executable.pipeline import LIMITS, PROBE, PROBE_SECONDS

FAULTS = {"invalid_ddl": True, "failing_inserts": True, "raising_tool": True, "passes_initially": [1],
          "wrong_passes": [2]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=4, help="scenarios, one world each (default: 4)")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per request (default: 0.05)")
    parser.add_argument("--workers", type=int, default=4, help="worlds made at once (default: 4)")
    args = parser.parse_args()

    provider = provider_for(False, "this benchmark")
    probes = []
    for _ in range(5):
        with tempfile.TemporaryDirectory() as scratch:
            started = time.perf_counter()
            worker = Worker(provider, PROBE, [Path(scratch)], LIMITS)
            worker.request("run", {"kind": "schema", "tables": []}, PROBE_SECONDS)
            worker.kill()
            probes.append(time.perf_counter() - started)

    with tempfile.TemporaryDirectory() as tmp:
        script, prices, out = Path(tmp) / "script.json", Path(tmp) / "prices.json", Path(tmp) / "out"
        script.write_text(json.dumps(FAULTS))
        prices.write_text(json.dumps({"synth-m": {"input": 1.25, "output": 10.0}}))
        process, url = start_server("--latency", str(args.latency), "--synth-script", str(script))
        try:
            config = ExecutableSynthConfig.create({
                "scenario": [f"Scenario {i} operations desk" for i in range(1, args.worlds + 1)], "out": str(out),
                "synth_model": "synth-m", "base_url": url, "api_key": "k", "max_workers": args.workers,
                "prices": str(prices), "skip_preflight": True})
            started = time.perf_counter()
            report = synthesize(config, Console(quiet=True))
            fresh = time.perf_counter() - started
            before = stop_server(process)["requests"]
            process, url = start_server("--latency", str(args.latency), "--synth-script", str(script))
            started = time.perf_counter()
            synthesize(config.model_copy(update={"base_url": url}), Console(quiet=True))
            resumed = time.perf_counter() - started
        finally:
            again = stop_server(process)["requests"]

    console = Console(highlight=False, width=140)
    console.print(f"{args.worlds} world(s), {args.workers} worker(s), {args.latency * 1000:.0f} ms per request, "
                  f"Python {sys.version.split()[0]}")
    console.print(f"fresh synthesis: {fresh:.2f} s, {before} requests; same command again: {resumed:.2f} s, "
                  f"{again} requests")
    console.print(f"one sandboxed execution ({provider.describe()}): median "
                  f"{statistics.median(probes) * 1000:.0f} ms of 5")
    report.print(console)


if __name__ == "__main__":
    main()
