"""Throughput under real rate limits and at high concurrency, and how much of the simulator's prompts a provider's
prompt cache can serve — each figure printed as a ratio to its bound, measured in the same run.

    python benchmarks/bench_throughput.py [--tasks 382] [--data-dir ../shared/occubench-data]

- **4-concurrent cap**: the loopback server answers 429 beyond 4 requests in flight, with ``Retry-After: 1``
  (as OpenAI, Azure and most gateways send) and with ``Retry-After: 0``; bound = successful requests × latency / 4
  (or the critical path, if longer). Every verdict must equal the clean run's.
- **64 workers against a 200 ms server**: bound = max(longest task chain, sum of chains / 64); CPU per request at
  8 and at 64 workers (it should stay flat).
- **Prefix share**: with the server's provider-style prompt cache on, the share of the simulator's prompt tokens
  it could serve from earlier requests — which needs every simulator request to extend the previous one unchanged.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
from pathlib import Path

from bench_run import run

from occubench.cli import run as evaluate
from occubench.store import read_results
from occubench.testing import MockLLMServer


def bound_of(result: dict, latency: float, workers: int, cap: int | None = None) -> float:
    chains = [c * latency for c in result["chains"]]
    bound = max(max(chains), sum(chains) / workers)
    return max(bound, result["calls"] * latency / cap) if cap else bound


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=382)
    parser.add_argument("--data-dir", type=Path,
                        default=Path(__file__).resolve().parents[2] / "shared" / "occubench-data")
    args = parser.parse_args()
    lines = (args.data_dir / "eval_benchmark_solvable.jsonl").read_text().splitlines()[:args.tasks]
    task_ids = [str(json.loads(line)["task_id"]) for line in lines]
    print(f"{len(task_ids)} tasks")

    clean = run(args.data_dir, task_ids, 8, ["--latency", "0.05"])
    for retry_after in ("1", "0"):
        capped = run(args.data_dir, task_ids, 8, ["--latency", "0.05", "--max-concurrent", "4",
                                                  "--retry-after", retry_after])
        bound = bound_of(capped, 0.05, 8, cap=4)
        refused = capped["stats"]["responses_by_status"].get("429", 0)
        exact = capped["verdicts"] == clean["verdicts"]
        print(f"4-cap, Retry-After {retry_after}: wall {capped['wall']:.1f} s, capacity bound {bound:.1f} s, "
              f"ratio {capped['wall'] / bound:.2f} (goal <= 1.25); {refused} 429s; every verdict exact: {exact}")

    for workers in (8, 64):
        scaled = run(args.data_dir, task_ids[:128] if workers == 8 else task_ids, workers, ["--latency", "0.2"])
        bound = bound_of(scaled, 0.2, workers)
        print(f"{workers} workers, 200 ms: wall {scaled['wall']:.1f} s, bound {bound:.1f} s, "
              f"ratio {scaled['wall'] / bound:.2f}{' (goal <= 1.2)' if workers == 64 else ''}; "
              f"CPU {1000 * scaled['cpu'] / scaled['calls']:.2f} ms per request")

    repeated, total, overall = prefix_share(args.data_dir, task_ids)
    print(f"prefix share: {100 * repeated:.1f} % of the tokens of each simulator request after an episode's first "
          f"repeat the previous request byte for byte (goal >= 95 %); {100 * overall:.1f} % of all simulator prompt "
          f"tokens ({total:,}) could come from a provider's prompt cache")


def prefix_share(data_dir: Path, task_ids: list[str]) -> tuple[float, int, float]:
    """(share of each later simulator request that is the previous request of its episode, unchanged; all
    simulator prompt tokens; share of them any earlier request shares as a prefix)."""
    with MockLLMServer(prompt_cache=True) as server, tempfile.TemporaryDirectory() as out:
        with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull), contextlib.redirect_stderr(devnull):
            evaluate.main(["--agent-model", "a", "--world-model", "w", "--base-url", server.base_url, "--data-dir",
                           str(data_dir), "--output-dir", out, "--skip-preflight", "--task-ids", *task_ids])
        usage = [r["usage"]["world"] for r in read_results(next(Path(out).glob("*/results.jsonl")))]
        simulator = [r["messages"] for r in server.requests if "<predicted_observation>" in r["messages"][0]["content"]]
    sent = {json.dumps(messages) for messages in simulator}
    later = [m for m in simulator if len(m) > 2]
    repeated = sum(len(json.dumps(m[:-2])) for m in later if json.dumps(m[:-2]) in sent)  # characters, ~tokens
    prompt = sum(u["prompt_tokens"] for u in usage)
    return repeated / sum(len(json.dumps(m)) for m in later), prompt, sum(u["cached_tokens"] for u in usage) / prompt

if __name__ == "__main__":
    main()
