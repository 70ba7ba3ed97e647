"""What tracing costs the harness: CPU per model request of a run at 256 concurrent (the simulated suite against
a 50 ms loopback server, 764 episodes), measured in one run, interleaved (each mode first in its turn), each in a
process of its own:

- **before**: the tree of a commit before tracing existed (``--before REV``, extracted with ``git archive``);
- **off**: this tree, tracing off (the default);
- **on**: this tree, every span and metric exported over OTLP/HTTP to a receiver in another process (so the
  receiver's CPU is not counted);
- **floor**: what OpenTelemetry's SDK itself spends on the same spans and metrics per request (an agent request,
  a tool call and the world's request answering it: three spans per two requests), made in a loop with nothing
  else.

    python benchmarks/bench_telemetry.py [--rounds 3] [--before 102bcf4] [--data-dir ../shared/occubench-data]

Goals: off costs what before did (0 %); on at most 10 % more than off.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from bench_async import DATA

HERE = Path(__file__).resolve().parent
#: An OTLP/HTTP receiver that accepts and drops everything: a collector's cost, outside the measured process.
RECEIVER = """
import http.server, sys
class Sink(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *args): pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
print(server.server_address[1], flush=True)
server.serve_forever()
"""
#: One measurement in a fresh process: harness CPU per request, of whichever occubench is first on the path.
MEASURE = """
import sys
from bench_async import harness_cpu
print(harness_cpu(__import__("pathlib").Path(sys.argv[1]), 382, 2, 256, 0.05))
"""


def per_request(tree: Path, data_dir: Path, endpoint: str | None) -> float:
    """Harness CPU seconds per request of 764 episodes at 256 concurrent, occubench from ``tree``, traced to
    ``endpoint`` (None: off)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("OTEL_")}
    env["PYTHONPATH"] = f"{tree}{os.pathsep}{HERE}"
    if endpoint:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
    done = subprocess.run([sys.executable, "-c", MEASURE, str(data_dir)], env=env, capture_output=True, text=True,
                          check=True)
    return float(done.stdout.strip().splitlines()[-1])


def sdk_floor(endpoint: str, requests: int = 20_000) -> float:
    """CPU seconds per request that the SDK spends on our spans and metrics alone, exported to ``endpoint``."""
    from occubench.llm.types import Completion, Reply, Usage
    from occubench.telemetry.sdk import Telemetry

    class Task:
        task_id, env_name, scenario = "t", "w", "s"

    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
    traced = Telemetry()
    answer = Completion([Reply("done", finish_reason="stop")], Usage(900, 60, 1), model="m")
    cpu = time.process_time()
    with traced.episode(Task, 0, "r", None):
        for _ in range(requests // 2):
            with traced.chat("agent", "agent", [], 1) as chat:
                chat.done(answer, "http://127.0.0.1:8000/v1")
            with traced.tool("lookup", {}) as tool:
                with traced.chat("world", "world", [], 1) as chat:
                    chat.done(answer, "http://127.0.0.1:8000/v1")
                tool.done({"found": 1}, [])
    traced.shutdown()  # everything exported
    os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT")
    return (time.process_time() - cpu) / requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", default="102bcf4", help="a commit before tracing (default: the last one)")
    parser.add_argument("--data-dir", type=Path, default=DATA)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as before:
        archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", args.before, "occubench"], check=True,
                                 capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(before, filter="data")
        receiver = subprocess.Popen([sys.executable, "-c", RECEIVER], stdout=subprocess.PIPE, text=True)
        assert receiver.stdout is not None
        endpoint = f"http://127.0.0.1:{receiver.stdout.readline().strip()}"
        trees = {"before": Path(before), "off": HERE.parent, "on": HERE.parent}
        figures: dict[str, list[float]] = {mode: [] for mode in trees}
        try:
            order = list(trees)
            for round_ in range(args.rounds):
                for mode in order[round_ % 3:] + order[:round_ % 3]:  # each mode first in turn: no order's bias
                    tree = trees[mode]
                    figures[mode].append(per_request(tree, args.data_dir, endpoint if mode == "on" else None))
                    print(f"{mode}: {1000 * figures[mode][-1]:.3f} ms CPU per request", flush=True)
            floor = sdk_floor(endpoint)
        finally:
            receiver.kill()
    best = {mode: statistics.median(values) for mode, values in figures.items()}
    print(f"256 concurrent, 50 ms server, median of {args.rounds}: before {1000 * best['before']:.3f} ms, off "
          f"{1000 * best['off']:.3f} ms, on {1000 * best['on']:.3f} ms CPU per request; off / before = "
          f"{best['off'] / best['before']:.3f} (goal 1.00), on / off = {best['on'] / best['off']:.3f} (goal <= 1.10)")
    print(f"tracing adds {1000 * (best['on'] - best['off']):.3f} ms per request; the SDK's own floor for the same "
          f"spans and metrics is {1000 * floor:.3f} ms ({(best['off'] + floor) / best['off']:.3f} x off)")


if __name__ == "__main__":
    main()
