"""What tracing costs the harness: CPU per model request of a run at 256 concurrent (the simulated suite against
a 50 ms loopback server, 256 episodes), with OpenTelemetry off and on (every span and metric exported over
OTLP/HTTP to a receiver in another process, so its CPU is not counted), interleaved, in one run; beside them, the
floor: what OpenTelemetry's SDK itself spends on the same spans and metrics per request (an agent request, a tool
call and the world's request answering it: three spans per two requests), made in a loop with nothing else.

    python benchmarks/bench_telemetry.py [--rounds 2] [--data-dir ../shared/occubench-data]

Goal: on costs at most 10 % more CPU per request than off. (Off imports nothing of OpenTelemetry: a test checks it,
tests/telemetry/test_spans.py.)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from bench_async import DATA, harness_cpu

from occubench import telemetry

#: An OTLP/HTTP receiver that accepts and drops everything: a collector's cost, outside this process.
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


def per_request(data_dir: Path, endpoint: str | None) -> float:
    """Harness CPU seconds per request of 256 episodes at 256 concurrent, traced to ``endpoint`` (None: off)."""
    if endpoint:
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
    else:
        os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    try:
        return harness_cpu(data_dir, 128, 2, 256, 0.05)
    finally:
        os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
        telemetry.configure(False)


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
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    args = parser.parse_args()
    receiver = subprocess.Popen([sys.executable, "-c", RECEIVER], stdout=subprocess.PIPE, text=True)
    assert receiver.stdout is not None
    endpoint = f"http://127.0.0.1:{receiver.stdout.readline().strip()}"
    try:
        figures: dict[str, list[float]] = {"off": [], "on": []}
        for _ in range(args.rounds):
            for mode in ("off", "on"):
                figures[mode].append(per_request(args.data_dir, endpoint if mode == "on" else None))
                print(f"{mode}: {1000 * figures[mode][-1]:.3f} ms CPU per request", flush=True)
        floor = sdk_floor(endpoint)
    finally:
        receiver.kill()
    off, on = min(figures["off"]), min(figures["on"])
    print(f"256 concurrent, 50 ms server: off {1000 * off:.3f} ms, on {1000 * on:.3f} ms CPU per request (best of "
          f"{args.rounds}); on / off = {on / off:.3f} (goal <= 1.10); tracing adds {1000 * (on - off):.3f} ms per "
          f"request, the SDK's own floor for its spans and metrics {1000 * floor:.3f} ms (off + floor = "
          f"{(off + floor) / off:.3f} x off)")


if __name__ == "__main__":
    main()
