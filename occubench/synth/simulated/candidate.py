"""What the pipeline carries from stage to stage: the scenarios, each sub-topic's candidate task, and the outcome of
each calibration round. Defined apart from the pipeline so that calibration and the output, which it drives, need not
import it back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from occubench.report.stats import Count


@dataclass(frozen=True)
class Scenario:
    name: str
    category: str
    domain: str

    def line(self) -> dict[str, str]:
        """As ``task_scenario_all_pool.jsonl`` holds it."""
        return {"category": self.category, "domain": self.domain, "task_scenario_name": self.name}


@dataclass
class Calibration:
    """One round's runs of one candidate: per calibration agent, with the plan and without it."""

    with_plan: dict[str, Count] = field(default_factory=dict)
    without_plan: dict[str, Count] = field(default_factory=dict)
    #: Failed runs with the plan, for the repair role: trajectory and the judge's feedback.
    failures: list[dict[str, Any]] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(r.errors for rates in (self.with_plan, self.without_plan) for r in rates.values())

    def to_dict(self) -> dict[str, Any]:
        return {"with_plan": {agent: vars(r) for agent, r in self.with_plan.items()},
                "without_plan": {agent: vars(r) for agent, r in self.without_plan.items()}}


@dataclass
class Candidate:
    """One sub-topic's task on its way through the pipeline."""

    number: int
    scenario: Scenario
    subtopic: dict[str, Any]
    environment: dict[str, Any] = field(default_factory=dict)
    task: dict[str, Any] = field(default_factory=dict)
    calibrations: list[Calibration] = field(default_factory=list)
    repairs: list[dict[str, str]] = field(default_factory=list)
    #: kept, trivial, unsolvable, invalid (a stage never gave a usable answer), unfaithful (it answers unlike its
    #: scenario's executable world) or incomplete (calibration errors).
    status: str = "pending"
    reason: str = ""
    difficulty: int | None = None
    #: How it answered its scenario's executable world's reference calls, if the scenario has one (:mod:`.faithful`).
    agreement: dict[str, Any] | None = None
