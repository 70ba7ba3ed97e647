"""Shared fixtures: a loopback OpenAI-compatible server, the project's small dataset, the real OccuBench data."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from occubench.testing import MockLLMServer

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "occubench-data"

_POOL = [
    {"category": "Healthcare & Life Sciences", "domain": "Pharmacy",
     "task_scenario_name": "Prescription Refill Review"},
    {"category": "Transportation & Logistics", "domain": "Warehousing",
     "task_scenario_name": "Inventory Reconciliation"},
]
_TASKS = [
    {"task_id": 1, "difficulty_level": 1, "task_scenario_name": "Prescription Refill Review",
     "agent_instruction": "Check whether patient P-7 can refill prescription RX-100 today; report the refills left.",
     "env_name": "env_fixture_pharmacy",
     "verification_plan": "The agent must call get_prescription for RX-100 and state that 2 refills remain.",
     "solution_plan": "1. Call get_prescription with RX-100. 2. Report refills_left."},
    {"task_id": 2, "difficulty_level": 2, "task_scenario_name": "Prescription Refill Review",
     "agent_instruction": "Record a refill of RX-100 for patient P-7 and confirm the new refill count.",
     "env_name": "env_fixture_pharmacy",
     "verification_plan": "The agent must call record_refill for RX-100 and report 1 refill left."},
    {"task_id": 3, "difficulty_level": 3, "task_scenario_name": "Inventory Reconciliation",
     "agent_instruction": "Count bin B-12 and reconcile it against the system quantity for SKU S-55.",
     "env_name": "env_fixture_warehouse",
     "verification_plan": "The agent must read the bin count and the system quantity and report 3 units missing."},
]


def _tool(name: str, description: str, **params: str) -> dict:
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": {p: {"type": t} for p, t in params.items()},
                           "required": list(params)}}


_CONFIGS = {
    "env_fixture_pharmacy": (
        [_tool("get_prescription", "Look up a prescription.", rx_id="string"),
         _tool("record_refill", "Record one refill.", rx_id="string", patient_id="string")],
        {"prescriptions": [{"rx_id": "RX-100", "patient_id": "P-7", "refills_left": 2}]},
        {"prescriptions": "Active prescriptions with the refills left."},
    ),
    "env_fixture_warehouse": (
        [_tool("count_bin", "Physical count of a bin.", bin_id="string"),
         _tool("get_system_quantity", "Quantity on record for a SKU.", sku="string"),
         _tool("post_adjustment", "Post an inventory adjustment.", sku="string", delta="integer")],
        {"bins": {"B-12": {"sku": "S-55", "count": 17}}, "system": {"S-55": 20}},
        {"bins": "Physical bin contents.", "system": "Quantities on record."},
    ),
}


def write_small_data(root: Path, copies: int = 1) -> Path:
    """An OccuBench-format dataset of 3 × ``copies`` tasks over two environments under ``root``."""
    configs = root / "world_model_configs"
    configs.mkdir(parents=True, exist_ok=True)
    (root / "task_scenario_all_pool.jsonl").write_text("".join(json.dumps(p) + "\n" for p in _POOL))
    tasks = [{**task, "task_id": task["task_id"] + 10 * copy} for copy in range(copies) for task in _TASKS]
    (root / "eval_benchmark_solvable.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    for name, (actions, state, description) in _CONFIGS.items():
        (configs / f"{name}.json").write_text(json.dumps({
            "environment_name": name,
            "world_model_system_prompt": f"You simulate the {name} system. Initial state: {json.dumps(state)}",
            "action_set_definitions": actions, "state_description": description, "task_initial_state": state,
        }, indent=1))
    return root


def run_folder(root: Path, prefix: str) -> Path:
    """The one run directory of ``root`` named by default as ``prefix`` and the short hash of its identity."""
    found = [p for p in Path(root).glob(f"{prefix}__*") if re.fullmatch(re.escape(prefix) + "__[0-9a-f]{8}", p.name)]
    assert len(found) == 1, f"expected one {prefix}__<hash> in {root}: {sorted(p.name for p in Path(root).iterdir())}"
    return found[0]


def agent_requests(server: MockLLMServer) -> list[dict]:
    """The agent's requests of the episodes: they carry tools and start with its system prompt (the preflight's
    tool probe has neither)."""
    return [r for r in server.requests if r.get("tools") and r["messages"][0]["role"] == "system"]


@pytest.fixture
def small_data(tmp_path: Path) -> Path:
    return write_small_data(tmp_path / "data")


@pytest.fixture
def shared_data() -> Path:
    if not (SHARED_DATA / "eval_benchmark_solvable.jsonl").is_file():
        pytest.skip(f"the OccuBench data is not at {SHARED_DATA} (fetch it with `occubench data download`)")
    return SHARED_DATA


@pytest.fixture
def server() -> Iterator[MockLLMServer]:
    """The scripted mock server: plays agent, world model and verifier deterministically."""
    with MockLLMServer() as mock:
        yield mock


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # A developer's real endpoint or key must never be used by a test.
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OCCUBENCH_DATA"):
        monkeypatch.delenv(name, raising=False)
