"""The OpenEnv guide's TRL environment class, as the guide prints it, played with OpenEnv's own client (the openenv
peer) the way TRL's ``environment_factory`` plays it: made with no argument, reset with a dataset row's columns,
its tool methods called, its reward read by the guide's reward function. TRL itself (and torch) is not needed for
that side."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.openenv.test_peer import in_peer, records, serving

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "openenv.md"
MARKER = "<!-- the environment class below is played by tests/openenv/test_guide.py with OpenEnv's own client -->"

#: What TRL does with the class, for two episodes: one solved with the reference's calls, one answered at once.
DRIVER = """
import importlib.util, inspect, json, sys
spec = importlib.util.spec_from_file_location("guide_environment", sys.argv[1])
guide = importlib.util.module_from_spec(spec)
spec.loader.exec_module(guide)
solved, unsolved = guide.InsuranceClaims(), guide.InsuranceClaims()
seen = {"tools": sorted(name for name, _ in inspect.getmembers(solved, inspect.ismethod)
                        if not name.startswith("_") and name != "reset"),
        "instruction": solved.reset(task_id="insurance_claims/pay_water_claim", prompt=[])}
seen["claim"] = json.loads(solved.get_claim(claim_id="CLM-1004"))
solved.get_policy(policy_id="POL-2005")
solved.approve_claim(claim_id="CLM-1004", amount=7850, reason="covered water damage")
solved.issue_payment(claim_id="CLM-1004")
seen["answer"] = json.loads(solved.submit(answer="CLM-1004 was approved and paid: $7,850."))
unsolved.reset(task_id="insurance_claims/review_open_thefts")
seen["before"] = guide.reward_from_occubench([unsolved])
unsolved.submit(answer="I decided nothing.")
try:
    unsolved.get_claim(claim_id="CLM-1008")
except ValueError as exc:
    seen["after"] = str(exc)
seen["rewards"] = guide.reward_from_occubench([solved, unsolved])
json.dump(seen, sys.stdout)
"""


@pytest.mark.slow
def test_the_guides_trl_environment_class_plays_the_world_and_reads_the_verdict(tmp_path: Path) -> None:
    text = GUIDE.read_text(encoding="utf-8")
    code = re.search(re.escape(MARKER) + r"\n```python\n(.*?)\n```", text, re.S)
    assert code is not None, "the guide's environment class is not where the marker says"
    (tmp_path / "guide_environment.py").write_text(code[1])
    (tmp_path / "driver.py").write_text(DRIVER)
    tasks = ["insurance_claims/pay_water_claim", "insurance_claims/review_open_thefts"]
    with serving(["--suite", "executable", "--task-ids", *tasks, "--output-dir", str(tmp_path / "runs"),
                  "--run-name", "trl"], tmp_path / "serve.log", token=None) as (url, process):
        seen = in_peer([str(tmp_path / "driver.py"), str(tmp_path / "guide_environment.py")], "",
                       OCCUBENCH_OPENENV_URL=url)
        assert process.wait(timeout=120) == 0
    served = records(tmp_path / "runs" / "trl")
    # Every tool of the world is a method, and nothing else is.
    assert seen["tools"] == sorted([*_tools(tmp_path), "submit"])
    assert "CLM-1004" in seen["instruction"] and seen["claim"]["claim_id"] == "CLM-1004"
    assert seen["answer"]["reward"] == 1.0 and seen["before"] == [0.0] and seen["after"] == "The task is over."
    assert seen["rewards"] == [1.0, 0.0]
    assert [served[(task, 0)]["is_correct"] for task in tasks] == [True, False]


def _tools(tmp_path: Path) -> list[str]:
    """The world's tools as the run recorded them (those its episodes were shown)."""
    run = tmp_path / "runs" / "trl"
    context = {line["id"]: line["value"] for line in map(json.loads, (run / "context.jsonl").read_text().splitlines())}
    record = records(run)[("insurance_claims/pay_water_claim", 0)]
    return [tool["function"]["name"] for tool in context[record["context"]["tools"]]]
