"""examples/grpo_tiny.py trains on a dataset made end to end: a run with --record-tokens against the mock server,
exported by ``occubench export``."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from occubench import RunConfig, run
from occubench.cli import main
from occubench.testing import MockLLMServer, scripted_responder
from tests.conftest import write_small_data

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "grpo_tiny.py"


def _data(root: Path) -> Path:
    """The small dataset, each task judged by a rubric the mock judge applies: pass exactly when the agent calls
    the first tool of its world (which the scripted agent calls first)."""
    data = write_small_data(root)
    worlds = data / "world_model_configs"
    tasks = [json.loads(line) for line in (data / "eval_benchmark_solvable.jsonl").read_text().splitlines()]
    for task in tasks:
        first = json.loads((worlds / f"{task['env_name']}.json").read_text())["action_set_definitions"][0]["name"]
        task["verification_plan"] = f"The agent must call `{first}`."
    (data / "eval_benchmark_solvable.jsonl").write_text("".join(json.dumps(task) + "\n" for task in tasks))
    return data


def _dataset(tmp_path: Path) -> Path:
    """Two trials of each task, one of which gives up at once (every other episode, in the order they start), so
    each task's group holds a pass and a fail: advantages that are not all zero."""
    started = itertools.count()

    def responder(request: dict, index: int) -> str | dict:
        messages = request["messages"]
        if request.get("tools") and not any(m.get("role") == "tool" for m in messages) and next(started) % 2:
            return "I give up."
        return scripted_responder(request, index)

    with MockLLMServer(responder) as server:
        summary = run(RunConfig(agent_model="agent-m", world_model="world-m", base_url=server.base_url,
                                data_dir=str(_data(tmp_path / "data")), output_dir=str(tmp_path / "runs"),
                                record_tokens=True, trials=2, max_concurrency=1, skip_preflight=True),
                      console=Console(quiet=True))
    assert sorted(r.is_correct for r in summary.results) == [False] * 3 + [True] * 3
    out = tmp_path / "rollouts.jsonl"
    assert main(["export", str(summary.run_dir), "--out", str(out)]) == 0
    return out


def test_one_epoch_on_an_exported_run_changes_the_policy(tmp_path: Path) -> None:
    dataset = _dataset(tmp_path)
    rows = [json.loads(line) for line in dataset.read_text().splitlines()]
    done = subprocess.run([sys.executable, str(EXAMPLE), str(dataset)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    read = re.search(r"rows (\d+), tasks (\d+), trained tokens (\d+), mean reward ([\d.]+)", done.stdout)
    assert read is not None, done.stdout
    assert (int(read[1]), int(read[2]), float(read[4])) == (len(rows), 3, 0.5)
    assert int(read[3]) == sum(sum(row["mask"]) for row in rows)  # the model's own tokens, no others
    before, after = (re.search(rf"{when}: loss (-?[\d.]+), likelihood-weighted reward ([\d.]+)", done.stdout)
                     for when in ("before", "after"))
    assert before is not None and after is not None, done.stdout
    assert float(after[1]) < float(before[1])  # the step lowered the surrogate loss
    assert float(after[2]) > float(before[2])  # and moved probability towards the passing episodes


def test_the_example_says_how_to_call_it() -> None:
    done = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "usage" in done.stderr
