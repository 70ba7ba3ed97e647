"""The settings of ``occubench synth simulated``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field, field_validator, model_validator

from occubench.config import with_roles
from occubench.synth.config import SynthConfig

if TYPE_CHECKING:
    _SimulatedRoles = SynthConfig
else:
    _SimulatedRoles = with_roles(SynthConfig, ("agent", "world", "verifier", "repair"))


class SimulatedSynthConfig(_SimulatedRoles):
    """Where scenarios come from, how many tasks each gets, and how tasks are calibrated and repaired."""

    roles: ClassVar[tuple[str, ...]] = ("synth", "agent", "world", "verifier", "repair")

    # Scenarios: one given, a file of them, or made up for a category.
    scenario: str | None = None
    category: str | None = None
    domain: str | None = None
    scenarios_file: str | None = None
    generate_scenarios: int | None = Field(None, ge=1)
    tasks_per_scenario: int = Field(4, ge=1, le=16)
    # Calibration: the agents (strongest first: the last is the weakest), the simulator and the judge.
    agent_model: list[str] = Field(default_factory=list)
    world_model: str | None = None
    verifier_model: str | None = None
    repair_model: str | None = None
    #: Runs per task and calibration agent, with the plan and again without it.
    runs: int = Field(3, ge=1)
    #: Solvable: the best calibration agent's pass rate with the plan is at least this.
    solvable_threshold: float = Field(0.67, ge=0, le=1)
    #: Trivial (dropped): the weakest agent's pass rate without the plan is at least this.
    trivial_threshold: float = Field(1.0, gt=0, le=1)
    #: Difficulty from the mean pass rate without the plan: at least ``easy_threshold`` is 1, below
    #: ``hard_threshold`` is 3, 2 between.
    easy_threshold: float = Field(0.67, ge=0, le=1)
    hard_threshold: float = Field(0.34, ge=0, le=1)
    repair_rounds: int = Field(2, ge=0)
    #: A world made for a scenario that has an executable world (built-in, or of ``worlds_dir``) is kept only if it
    #: answers that world's reference calls as the world does at least this often (:mod:`.faithful`).
    min_agreement: float = Field(0.9, ge=0, le=1)
    worlds_dir: str | None = None
    trust_world_code: bool = False
    max_steps: int = Field(30, ge=1)
    num_votes: int = Field(3, ge=1)
    date: str | None = None

    @field_validator("agent_model", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return [part.strip() for v in value for part in v.split(",") if part.strip()]
        return value

    @model_validator(mode="after")
    def _sources(self) -> SimulatedSynthConfig:
        given = [name for name, value in (("--scenario", self.scenario), ("--scenarios-file", self.scenarios_file),
                                          ("--generate-scenarios", self.generate_scenarios)) if value is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of --scenario, --scenarios-file, --generate-scenarios (got "
                             f"{', '.join(given) or 'none'})")
        if (self.scenario or self.generate_scenarios) and not self.category:
            raise ValueError("--category is required with --scenario and --generate-scenarios")
        if self.hard_threshold > self.easy_threshold:
            raise ValueError("--hard-threshold must not exceed --easy-threshold")
        return self
