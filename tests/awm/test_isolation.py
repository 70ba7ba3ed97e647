"""One AWM world cannot flip another's verdict: a hostile scenario, run first in the same set, fills the /tmp its
worker can write and holds it; the victim task that follows writes its database and gets the verdict it gets when
the hostile scenario is not in the run. (Before each forked worker had a /tmp of its own, the hostile world's fill
took the /tmp every worker of the zygote shared, and the victim's first write failed: the agent's FAIL.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from occubench import load_results
from occubench.awm.data import FILES
from occubench.cli import main
from occubench.testing import MockLLMServer
from tests.awm.test_run import subscribing
from tests.awm.test_service import PURE
from tests.sandbox.test_forked_limits import FILLS

VICTIM, HOSTILE = "content_platform_1", "a_hostile_1"  # sorted first: its episode runs before the victim's


def _with_hostile(data: Path) -> None:
    """The victim's rows copied under the hostile scenario's name, its application the victim's behind the fill."""
    for file in FILES.values():
        path = data / file
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        copies = []
        for row in rows:
            key = "name" if file == FILES["scenario"] else "scenario"
            if row.get(key) == VICTIM:
                copy = {**row, key: HOSTILE}
                if "full_code" in copy:
                    copy["full_code"] = FILLS + copy["full_code"]
                copies.append(copy)
        path.write_text("".join(json.dumps(row) + "\n" for row in [*copies, *rows]))


def _verdicts(data: Path, out: Path, *task_ids: str) -> dict[str, bool | None]:
    with MockLLMServer(subscribing) as server:
        main(["run", "--suite", "awm", "--data-dir", str(data), "--agent-model", "agent", "--verifier-model", "judge",
              "--base-url", server.base_url, "--api-key", "k", "--output-dir", str(out), "--run-name", "r",
              "--max-concurrency", "1", "--task-ids", *task_ids])
    return {result.task_id: result.is_correct for result in load_results(out / "r" / "results.jsonl")}


@pytest.mark.slow  # two runs: 9 s
def test_a_hostile_world_does_not_flip_a_victim_s_verdict(data: Path, tmp_path: Path) -> None:
    line = {"scenario": VICTIM, "task_idx": 0, "verification": {"code": PURE}}
    (data / FILES["pure_verifier"]).write_text(json.dumps(line) + "\n")
    control = _verdicts(data, tmp_path / "control", f"{VICTIM}/0")
    _with_hostile(data)
    attacked = _verdicts(data, tmp_path / "attacked", f"{HOSTILE}/0", f"{VICTIM}/0")
    assert control == {f"{VICTIM}/0": True}  # the pure verifier passes the subscription
    assert attacked[f"{VICTIM}/0"] == control[f"{VICTIM}/0"]
    assert attacked[f"{HOSTILE}/0"] is None  # the hostile world's own episode: an error of its environment
