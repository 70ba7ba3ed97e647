"""Harness speed and cost against a loopback OpenAI-compatible server.

The mock server runs in its own process (so its CPU is not counted as ours) with a fixed latency per request;
the harness runs in this process on the first N real OccuBench tasks. Figures printed:

- wall time against the critical-path bound: max(longest task chain, total chain time / workers), where a
  task's chain is its sequential requests × latency;
- CPU time of this process per LLM call (goal: at most 1 ms), next to the floors under it: the openai SDK alone
  with as many concurrent callers, and the SDK over a bare http.client transport;
- wall time when the server answers 429 beyond 4 concurrent requests, against the capacity bound
  (successful requests × latency / 4; goal: at most 1.25 ×);
- verifier prompt tokens per task with the votes in one request (``n``) and with a server that refuses ``n``.

    python benchmarks/bench_run.py [--tasks 64] [--latency 0.05] [--workers 8] [--data-dir ../shared/occubench-data]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openai

try:  # the SDK's HTTP library: httpx2 from openai 3 on, httpx before
    import httpx2 as httpx
except ImportError:
    import httpx  # type: ignore[no-redef]

from occubench.cli import run as evaluate
from occubench.store import read_results


def start_server(*flags: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([sys.executable, "-m", "occubench.testing.server", "--port", "0", *flags],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def stop_server(process: subprocess.Popen[str]) -> dict:
    process.terminate()
    out, _ = process.communicate(timeout=30)
    return json.loads(out.strip().splitlines()[-1])


class _BareTransport(httpx.BaseTransport):
    """The least an HTTP transport can do: one kept-alive ``http.client`` connection per thread, nothing else.

    Measurement only: it shows how much of a call's CPU is the SDK's own request path, whatever carries it.
    """

    def __init__(self) -> None:
        self._local = threading.local()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if (connection := getattr(self._local, "connection", None)) is None:
            connection = self._local.connection = http.client.HTTPConnection(request.url.host, request.url.port)
        connection.request(request.method, request.url.raw_path.decode(), body=request.read(),
                           headers=dict(request.headers))
        response = connection.getresponse()
        return httpx.Response(response.status, headers=response.getheaders(), content=response.read(),
                               request=request)


def sdk_alone(latency: float, workers: int, *, bare: bool = False, calls: int = 400) -> float:
    """CPU per call of the openai SDK by itself (``bare``: over a bare transport), with as many concurrent
    callers as the harness has workers, against the same server: the floor under the harness's figure."""
    process, base_url = start_server("--latency", str(latency))
    client = openai.OpenAI(api_key="k", base_url=base_url, max_retries=0,
                           http_client=httpx.Client(transport=_BareTransport()) if bare else None)
    body = {"model": "m", "messages": [{"role": "user", "content": "x" * 4000}]}
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda _: client.post("/chat/completions", cast_to=object, body=body), range(2 * workers)))
        cpu = time.process_time()
        list(pool.map(lambda _: client.post("/chat/completions", cast_to=object, body=body), range(calls)))
        cpu = time.process_time() - cpu
    stop_server(process)
    return cpu / calls


def run(data_dir: Path, task_ids: list[str], workers: int, server_flags: list[str]) -> dict:
    process, base_url = start_server(*server_flags)
    with tempfile.TemporaryDirectory() as out:
        argv = ["--agent-model", "agent", "--world-model", "world", "--base-url", base_url, "--data-dir",
                str(data_dir), "--output-dir", out, "--max-workers", str(workers), "--skip-preflight",
                "--task-ids", *task_ids]
        cpu, wall = time.process_time(), time.perf_counter()
        with open(os.devnull, "w") as devnull:
            stdout, stderr = sys.stdout, sys.stderr
            sys.stdout = sys.stderr = devnull
            try:
                code = evaluate.main(argv)
            finally:
                sys.stdout, sys.stderr = stdout, stderr
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        [results] = Path(out).glob("*/results.jsonl")  # the run's folder name ends in its identity hash
        records = read_results(results)
    stats = stop_server(process)
    assert code == 0 and len(records) == len(task_ids), f"run failed (exit {code}, {len(records)} results)"
    chains = [sum(u["calls"] for u in r["usage"].values()) for r in records]
    world = [r["usage"]["world"] for r in records]
    return {"wall": wall, "cpu": cpu, "calls": sum(chains), "chains": chains, "stats": stats,
            "verifier_prompt": sum(r["usage"]["verifier"]["prompt_tokens"] for r in records) / len(records),
            "verdicts": {r["task_id"]: r["is_correct"] for r in records},
            "world_prompt": sum(u["prompt_tokens"] for u in world),
            "world_cached": sum(u.get("cached_tokens", 0) for u in world)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--data-dir", type=Path,
                        default=Path(__file__).resolve().parents[2] / "shared" / "occubench-data")
    args = parser.parse_args()
    tasks_file = args.data_dir / "eval_benchmark_solvable.jsonl"
    if not tasks_file.is_file():
        sys.exit(f"no OccuBench data at {args.data_dir}: pass --data-dir or run `occubench data download`")
    task_ids = [str(json.loads(line)["task_id"]) for line in tasks_file.read_text().splitlines()[:args.tasks]]
    latency = ["--latency", str(args.latency)]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.platform()}")
    print(f"{len(task_ids)} tasks, {args.workers} workers, {args.latency * 1000:.0f} ms per request\n")

    clean = run(args.data_dir, task_ids, args.workers, latency)
    chain = [c * args.latency for c in clean["chains"]]
    bound = max(max(chain), sum(chain) / args.workers)
    print(f"clean:     wall {clean['wall']:.2f} s, critical-path bound {bound:.2f} s, "
          f"ratio {clean['wall'] / bound:.2f}")
    print(f"           CPU {clean['cpu']:.2f} s for {clean['calls']} LLM calls = "
          f"{1000 * clean['cpu'] / clean['calls']:.2f} ms per call (goal <= 1 ms)")
    print(f"           the openai SDK alone, {args.workers} callers, same server: "
          f"{1000 * sdk_alone(args.latency, args.workers):.2f} ms per call; over a bare http.client transport: "
          f"{1000 * sdk_alone(args.latency, args.workers, bare=True):.2f} ms")
    fast = run(args.data_dir, task_ids, args.workers, ["--latency", "0"])
    print(f"no-latency server: harness CPU {1000 * fast['cpu'] / fast['calls']:.2f} ms per call")

    capped = run(args.data_dir, task_ids, args.workers, [*latency, "--max-concurrent", "4"])
    capacity = max(bound, capped["calls"] * args.latency / 4)
    refused = capped["stats"]["responses_by_status"].get("429", 0)
    print(f"4-cap 429: wall {capped['wall']:.2f} s, capacity bound {capacity:.2f} s, "
          f"ratio {capped['wall'] / capacity:.2f} (goal <= 1.25); {refused} requests refused with 429")

    no_n = run(args.data_dir, task_ids, args.workers, [*latency, "--no-n"])
    print(f"verifier:  {clean['verifier_prompt']:.0f} prompt tokens per task with n, "
          f"{no_n['verifier_prompt']:.0f} with separate requests "
          f"({no_n['verifier_prompt'] / clean['verifier_prompt']:.2f} x)")


if __name__ == "__main__":
    main()
