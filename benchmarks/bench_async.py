"""The async executor at scale: how close a run comes to the latency floor, how many episodes one process holds in
flight, and what each request costs in CPU — every figure beside its bound or its floor, measured in the same run.

    python benchmarks/bench_async.py [--only latency,thousand,tenthousand,memory,cpu,exact] [--data-dir DIR]

- **latency**: every task (382) at ``--max-concurrency 64`` against a 200 ms server, as a user runs it (its own
  process, preflight included). Bound = max(longest task chain, sum of chains / 64) × latency; "episodes phase"
  is the server's first episode request to its last answer; "process wall" is the whole command.
- **thousand**: 1,024 episodes (256 tasks × 4 trials) at ``--max-concurrency 1024`` against a 2 s server: the
  same two ratios, the process's peak RSS and the most requests the server had in flight at once.
- **tenthousand**: 10,000 episodes (250 tasks × 40 trials) at ``--max-concurrency 10000`` against a 10 s server, and
  5,000 (125 × 40) the same way: the same figures, and the process's RSS while all its episodes are in flight (the
  most sampled before the first result), whose growth from 5,000 to 10,000 is the memory of an episode in flight.
- **memory**: peak RSS of 382 and of 1,528 episodes (4 trials) at ``--max-concurrency 256``: flat.
- **cpu**: CPU of the harness per request (the run, after imports, in this process) at 8 and at 256 concurrent
  against a 50 ms server, beside the ``openai`` SDK's own typed call (``AsyncOpenAI().chat.completions.create``,
  as many at once) and its raw call over aiohttp (the floor under ours).
- **exact**: a server capped at 4 concurrent that answers 429 with ``Retry-After: 1`` (ratio to the capacity bound,
  every verdict equal to the uncapped run's); a run killed with SIGKILL mid-way and resumed (every verdict equal);
  a replay from the response cache (byte-identical trajectories).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_run import start_server, stop_server

from occubench.store import read_results

DATA = Path(__file__).resolve().parents[2] / "shared" / "occubench-data"


def occubench(args: list[str], *, kill_after: float | None = None, tree: Path | None = None,
              until: Callable[[], bool] | None = None) -> dict[str, Any]:
    """``occubench run`` in its own process (of the source ``tree`` if given), measured by :func:`measure`."""
    env = {**os.environ, "PYTHONPATH": str(tree)} if tree else None
    # The installed entry point names `local` AsyncExecutor; an older tree has the thread executor under its name.
    command = ["-c", "import sys, occubench.engine.executor as e; e.AsyncExecutor = e.ThreadExecutor; "
               "from occubench.cli import main; sys.exit(main(sys.argv[1:]))"] if tree else ["-m", "occubench"]
    return measure([sys.executable, *command, "run", *args], env, kill_after=kill_after, until=until)


def measure(command: list[str], env: dict[str, str] | None = None, *, kill_after: float | None = None,
            until: Callable[[], bool] | None = None) -> dict[str, Any]:
    """``command`` in its own process: its wall time, CPU (user + system), peak RSS and exit status, and
    ``time.monotonic()`` at its start and end; with ``kill_after``, killed with SIGKILL that many seconds in; with
    ``until``, also the most RSS sampled (every 0.2 s) before ``until()`` holds."""
    started, clock, busy = time.perf_counter(), time.monotonic(), machine_busy()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    before: list[float] = [0.0]
    sampler = threading.Thread(target=sample_rss, args=(process.pid, until, before), daemon=True) if until else None
    if sampler:
        sampler.start()
    if kill_after is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(kill_after)
        process.send_signal(signal.SIGKILL)
    _, status, usage = os.wait4(process.pid, 0)
    if sampler:
        sampler.join()
    return {"wall": time.perf_counter() - started, "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mb": usage.ru_maxrss / 1024, "status": os.waitstatus_to_exitcode(status), "started": clock,
            "ended": time.monotonic(), "rss_before_mb": before[0], "machine_cpu": machine_busy() - busy}


def machine_busy() -> float:
    """CPU seconds every process of the machine has used since boot (Linux's /proc/stat; 0 elsewhere)."""
    try:
        fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:8]]
    except OSError:
        return 0.0
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")  # all but idle and waiting on I/O


def sample_rss(pid: int, until: Callable[[], bool], most: list[float]) -> None:
    """The most RSS of process ``pid`` into ``most[0]``, sampled every 0.2 s until ``until()`` or its end."""
    while not until():
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            most[0] = max(most[0], int(status.split("VmRSS:")[1].split()[0]) / 1024)
        except (OSError, IndexError):  # gone (or a zombie, without VmRSS)
            return
        time.sleep(0.2)


def run_args(data_dir: Path, base_url: str, out: str, concurrency: int, *extra: str) -> list[str]:
    return ["--agent-model", "agent", "--world-model", "world", "--base-url", base_url, "--data-dir", str(data_dir),
            "--output-dir", out, "--max-concurrency", str(concurrency), *extra]


def results_of(out: str) -> list[dict[str, Any]]:
    [path] = Path(out).glob("*/results.jsonl")
    return read_results(path)


def bound(records: list[dict[str, Any]], latency: float, concurrency: int) -> tuple[float, int]:
    """(critical-path bound in seconds, requests): max(longest chain, sum of chains / concurrency) × latency."""
    chains = [sum(u["calls"] for u in r["usage"].values()) for r in records]
    return max(max(chains), sum(chains) / concurrency) * latency, sum(chains)


def latency_section(data_dir: Path, tasks: int, concurrency: int, latency: float, trials: int = 1) -> dict[str, Any]:
    """A run of ``tasks`` × ``trials`` episodes as a user makes it; its figures printed, and returned."""
    process, base_url = start_server("--latency", str(latency))
    with tempfile.TemporaryDirectory() as out:
        run = occubench(run_args(data_dir, base_url, out, concurrency, "--limit", str(tasks), "--trials",
                                 str(trials)), until=lambda: any(Path(out).glob("*/results.jsonl")))
        stats = stop_server(process)
        records = results_of(out)
    floor, requests = bound(records, latency, concurrency)
    phase = stats["episodes_phase_s"]
    print(f"{tasks * trials} episodes, --max-concurrency {concurrency}, {latency * 1000:.0f} ms server: "
          f"{len(records)} results, {requests} requests (+ preflight), exit {run['status']}")
    print(f"  episodes phase {phase:.2f} s / bound {floor:.2f} s = {phase / floor:.3f}; process wall "
          f"{run['wall']:.2f} s = {run['wall'] / floor:.3f} x the bound")
    print(f"  before the first episode request {stats['first_received'] - run['started']:.2f} s (imports, tasks, "
          f"preflight); after the last answer {run['ended'] - stats['last_finished']:.2f} s (summary, report)")
    print(f"  peak RSS {run['rss_mb']:.0f} MB ({run['rss_before_mb']:.0f} MB before the first result); at most "
          f"{stats['max_in_flight']} requests in flight; process CPU {run['cpu']:.1f} s = "
          f"{1000 * run['cpu'] / requests:.2f} ms per request (imports included); the server's "
          f"{1000 * stats['process_cpu_s'] / requests:.2f} ms")
    others = max(0.0, run["machine_cpu"] - run["cpu"] - stats["process_cpu_s"])  # below 0: clock ticks' rounding
    print(f"  meanwhile other processes of the machine used {others / run['wall']:.2f} of its {os.cpu_count()} cores")
    return run


def tenthousand_section(data_dir: Path) -> None:
    """10,000 episodes in flight at once, and 5,000: what an episode in flight costs in memory is the difference
    of the RSS sampled while all are in flight, over the 5,000 more."""
    half = latency_section(data_dir, 125, 5000, 10.0, trials=40)
    full = latency_section(data_dir, 250, 10000, 10.0, trials=40)
    each = (full["rss_before_mb"] - half["rss_before_mb"]) * 1024 / 5000
    print(f"memory per episode in flight: ({full['rss_before_mb']:.0f} - {half['rss_before_mb']:.0f} MB) / 5,000 = "
          f"{each:.0f} kB")


def memory_section(data_dir: Path) -> None:
    """RSS with 256 episodes in flight, for 382 and for four times as many episodes, sampled from /proc while the
    episodes run and at the end: results go to the store as they finish and nothing of them is kept, so the
    episodes' RSS stays flat; the summary at the end reads the run's results back (``occubench.run`` returns them)."""
    process, base_url = start_server()
    for trials in (1, 4):
        with tempfile.TemporaryDirectory() as out:
            run = subprocess.Popen([sys.executable, "-m", "occubench", "run", *run_args(
                data_dir, base_url, out, 256, "--trials", str(trials), "--skip-preflight")],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"})
            samples, episodes = [], 0
            assert run.stderr is not None
            for line in run.stderr:  # one progress line per finished episode
                episodes += "] task " in line
                with contextlib.suppress(OSError, IndexError):
                    status = Path(f"/proc/{run.pid}/status").read_text()
                    samples.append((episodes, int(status.split("VmRSS:")[1].split()[0]) / 1024))
            peak = os.wait4(run.pid, 0)[2].ru_maxrss / 1024
            during = max(rss for done, rss in samples if done < 382 * trials)
            print(f"{len(results_of(out))} episodes at --max-concurrency 256: RSS while they run at most {during:.0f} "
                  f"MB; the process's peak, the summary's reading of the results included, {peak:.0f} MB")
    stop_server(process)


def harness_cpu(data_dir: Path, tasks: int, trials: int, concurrency: int, latency: float) -> float:
    """CPU seconds per request of a run in this process, in the steady state: after a first small run of other
    tasks has loaded what a run loads (the SDK, aiohttp, jsonschema: a fixed cost of startup, not of requests)."""
    from occubench.cli import run as evaluate

    process, base_url = start_server("--latency", str(latency))
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull), contextlib.redirect_stderr(devnull):
        last = json.loads((data_dir / "eval_benchmark_solvable.jsonl").read_text().splitlines()[-1])["task_id"]
        with tempfile.TemporaryDirectory() as out:  # the last task, outside those measured
            evaluate.main(run_args(data_dir, base_url, out, 2, "--task-ids", str(last), "--skip-preflight"))
        with tempfile.TemporaryDirectory() as out:
            cpu = time.process_time()
            code = evaluate.main(run_args(data_dir, base_url, out, concurrency, "--limit", str(tasks),
                                          "--skip-preflight", "--trials", str(trials)))
            cpu = time.process_time() - cpu
            records = results_of(out)
    stop_server(process)
    assert code == 0, f"run failed (exit {code})"
    return cpu / bound(records, latency, concurrency)[1]


def sdk_cpu(concurrency: int, latency: float, *, raw: bool, calls: int = 2000) -> float:
    """CPU seconds per call of the SDK by itself: its typed call on its default transport, or (``raw``) the raw
    response over its aiohttp transport, ``concurrency`` at once."""
    import openai

    process, base_url = start_server("--latency", str(latency))
    body = {"model": "m", "messages": [{"role": "user", "content": "x" * 4000}]}

    async def measure() -> float:
        http = openai.DefaultAioHttpClient() if raw else None
        client = openai.AsyncOpenAI(api_key="k", base_url=base_url, max_retries=0, http_client=http)
        gate = asyncio.Semaphore(concurrency)

        async def one() -> None:
            async with gate:
                if raw:
                    response = await client.chat.completions.with_raw_response.create(**body)
                    json.loads(response.http_response.content)
                else:
                    await client.chat.completions.create(**body)

        await asyncio.gather(*(one() for _ in range(2 * concurrency)))  # connections open, caches warm
        cpu = time.process_time()
        await asyncio.gather(*(one() for _ in range(calls)))
        cpu = time.process_time() - cpu
        await client.close()
        return cpu / calls

    try:
        return asyncio.run(measure())
    finally:
        stop_server(process)


def cpu_section(data_dir: Path) -> None:
    for concurrency in (8, 256):
        ours = harness_cpu(data_dir, 128, 2, concurrency, 0.05)  # the same 256 episodes at both
        typed = sdk_cpu(concurrency, 0.05, raw=False)
        raw = sdk_cpu(concurrency, 0.05, raw=True)
        print(f"{concurrency} concurrent, 50 ms server: harness {1000 * ours:.2f} ms CPU per request (goal <= 1.0); "
              f"the SDK's typed call alone {1000 * typed:.2f} ms; its raw call over aiohttp {1000 * raw:.2f} ms")


def verdicts(records: list[dict[str, Any]]) -> dict[tuple[Any, int], Any]:
    return {(r["task_id"], r.get("trial", 0)): r["is_correct"] for r in records}


def exact_section(data_dir: Path, tasks: int) -> None:
    latency = 0.05
    cached = tempfile.TemporaryDirectory()
    cache = str(Path(cached.name) / "cache.sqlite")
    process, recorded_at = start_server("--latency", str(latency))
    with tempfile.TemporaryDirectory() as out:
        clean = occubench(run_args(data_dir, recorded_at, out, 8, "--limit", str(tasks), "--cache", cache))
        reference = results_of(out)
    stop_server(process)
    expected = verdicts(reference)
    print(f"clean run: {len(reference)} results, exit {clean['status']}")

    process, base_url = start_server("--latency", str(latency), "--max-concurrent", "4", "--retry-after", "1")
    with tempfile.TemporaryDirectory() as out:
        occubench(run_args(data_dir, base_url, out, 8, "--limit", str(tasks)))
        records = results_of(out)
    stats = stop_server(process)
    floor, requests = bound(records, latency, 8)
    capacity = max(floor, requests * latency / 4)
    print(f"4-cap, Retry-After 1: episodes phase {stats['episodes_phase_s']:.2f} s / capacity bound {capacity:.2f} s "
          f"= {stats['episodes_phase_s'] / capacity:.3f} (goal <= 1.2); {stats['responses_by_status'].get('429', 0)} "
          f"429s; every verdict exact: {verdicts(records) == expected}")

    process, base_url = start_server("--latency", str(latency))
    with tempfile.TemporaryDirectory() as out:
        args = run_args(data_dir, base_url, out, 8, "--limit", str(tasks))
        killed = occubench(args, kill_after=clean["wall"] / 2)
        partial = len(results_of(out))
        resumed = occubench(args)
        records = results_of(out)
    stop_server(process)
    print(f"kill -9 at half time: {partial} results kept (exit {killed['status']}); resumed to {len(records)} "
          f"(exit {resumed['status']}), every verdict exact: {verdicts(records) == expected}, each task once: "
          f"{len(records) == len(expected)}")

    with tempfile.TemporaryDirectory() as out, cached:  # the endpoint the answers were recorded from, now gone
        replayed = occubench(run_args(data_dir, recorded_at, out, 8, "--limit", str(tasks), "--cache", cache,
                                      "--replay"))
        records = results_of(out)
    same = all(a["trajectory"] == b["trajectory"] and a["is_correct"] == b["is_correct"]
               for a, b in zip(sorted(records, key=lambda r: str(r["task_id"])),
                               sorted(reference, key=lambda r: str(r["task_id"]))))
    print(f"replay from the cache (no server): {len(records)} results (exit {replayed['status']}), every "
          f"trajectory and verdict identical: {same and len(records) == len(reference)}")


def verdicts_section(data_dir: Path, tree: Path) -> None:
    """Every verdict of the whole benchmark against the mock, from this executor and from the thread executor of
    ``tree`` (a checkout of the commit before it, as ``git worktree add`` makes one)."""
    process, base_url = start_server()
    found = {}
    for name, source in (("async", None), ("threads", tree)):
        with tempfile.TemporaryDirectory() as out:
            flag = "--max-workers"  # the name both commits read
            args = run_args(data_dir, base_url, out, 64, "--skip-preflight")
            args[args.index("--max-concurrency")] = flag
            run = occubench(args, tree=source)
            found[name] = verdicts(results_of(out))
        print(f"{name}: {len(found[name])} verdicts, {sum(v is True for v in found[name].values())} pass, "
              f"exit {run['status']}, CPU {run['cpu']:.1f} s, wall {run['wall']:.1f} s")
    stop_server(process)
    differ = [key for key in found["async"] if found["async"][key] != found["threads"].get(key)]
    print(f"verdicts equal to the thread executor's: {not differ and found['async'].keys() == found['threads'].keys()}"
          f" ({len(differ)} differ)")


def preamble(data_dir: Path, only: str) -> list[str]:
    """Stop without the data; print the machine; the sections asked for."""
    if not (data_dir / "eval_benchmark_solvable.jsonl").is_file():
        sys.exit(f"no OccuBench data at {data_dir}: pass --data-dir or run `occubench data download`")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.platform()}\n")
    return only.split(",")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="latency,thousand,tenthousand,memory,cpu,exact")
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--thread-tree", type=Path,
                        help="a checkout of the commit with the thread executor (bcc63d6): compare every verdict")
    args = parser.parse_args()
    sections = preamble(args.data_dir, args.only)
    if "latency" in sections:
        latency_section(args.data_dir, 382, 64, 0.2)
    if "thousand" in sections:
        latency_section(args.data_dir, 256, 1024, 2.0, trials=4)
    if "tenthousand" in sections:
        tenthousand_section(args.data_dir)
    if "memory" in sections:
        memory_section(args.data_dir)
    if "cpu" in sections:
        cpu_section(args.data_dir)
    if "exact" in sections:
        exact_section(args.data_dir, 64)
    if args.thread_tree:
        verdicts_section(args.data_dir, args.thread_tree)


if __name__ == "__main__":
    main()
