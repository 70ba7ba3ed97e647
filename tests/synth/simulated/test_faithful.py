"""The twin gate of ``occubench synth simulated``: a world synthesized for a scenario that an executable world also
has is kept only if it answers that world's reference calls as the world does, at least ``--min-agreement`` of
the time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from occubench.synth.simulated.config import SimulatedSynthConfig
from occubench.synth.simulated.pipeline import synthesize
from occubench.testing import MockLLMServer
from occubench.testing.server import make_scripted_responder


def synthesized(tmp_path: Path, share: float, scenario: str, **extra: Any) -> list[dict[str, Any]]:
    # share: the simulator's wrong answers (the mock's twin mode); the environment stage writes the world's twin.
    with MockLLMServer(make_scripted_responder(twin=share)) as server:
        report = synthesize(SimulatedSynthConfig.create({
            "scenario": scenario, "category": "Business", "out": str(tmp_path / "out"), "synth_model": "synth-m",
            "agent_model": ["agent-m"], "world_model": "world-m", "base_url": server.base_url, "api_key": "k",
            "tasks_per_scenario": 2, "runs": 1, "repair_rounds": 0, "date": "2026-11-23", **extra}),
            console=Console(quiet=True))
    return report.tasks


def test_a_faithful_twin_passes_the_gate_and_an_unfaithful_one_is_dropped_with_its_agreement(tmp_path: Path) -> None:
    faithful = synthesized(tmp_path / "a", 0.0, "Insurance Claims Adjudication")
    assert all(task["status"] != "unfaithful" and task["twin_agreement"]["rate"] == 1.0 for task in faithful)
    assert {task["twin_agreement"]["world"] for task in faithful} == {"insurance_claims"}
    unfaithful = synthesized(tmp_path / "b", 0.5, "Insurance Claims Adjudication")
    for task in unfaithful:
        agreement = task["twin_agreement"]
        assert task["status"] == "unfaithful" and agreement["rate"] < 0.9
        assert f"{agreement['rate']:.0%}" in task["reason"] and "--min-agreement 90%" in task["reason"]
        assert agreement["decided"] == agreement["calls"] > 0 and sum(agreement["kinds"].values()) > 0
    # The user's threshold decides.
    lenient = synthesized(tmp_path / "c", 0.5, "Insurance Claims Adjudication", min_agreement=0.0)
    assert all(task["status"] != "unfaithful" for task in lenient)


@pytest.mark.parametrize("scenario", ["Pharmacy discharge reconciliation"])
def test_a_scenario_without_an_executable_world_is_not_measured(scenario: str, tmp_path: Path) -> None:
    tasks = synthesized(tmp_path, 0.5, scenario)
    assert tasks and all(task["twin_agreement"] is None and task["status"] != "unfaithful" for task in tasks)
