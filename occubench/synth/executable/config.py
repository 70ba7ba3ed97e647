"""What ``occubench synth executable`` is told: the scenarios, and how many worlds and tasks to make of each."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from occubench.core.task import category_named
from occubench.synth.config import SynthConfig


class ExecutableSynthConfig(SynthConfig):
    #: One line each: what the world is about ("Insurance claims adjudication").
    scenario: list[str]
    #: One of OccuBench's ten categories (name or abbreviation) for every world; by default the model picks.
    category: str | None = None
    domain: str | None = None
    #: Worlds made of each scenario (different variants of it).
    worlds: int = Field(1, ge=1, le=100)
    #: Tasks per world; a world needs three that pass validation, covering difficulties 1, 2 and 3.
    tasks: int = Field(3, ge=3, le=30)
    #: Where the machine has no sandbox, execute the generated code as a plain process anyway.
    trust_world_code: bool = False

    @field_validator("scenario", mode="before")
    @classmethod
    def _scenarios(cls, value: Any) -> Any:
        values = [value] if isinstance(value, str) else value
        if isinstance(values, list) and all(isinstance(v, str) for v in values):
            values = [" ".join(v.split()) for v in values]
            if not values or not all(values):
                raise ValueError("give at least one scenario, each a line of text")
            if any(len(v) > 500 for v in values):
                raise ValueError("a scenario is one line of at most 500 characters")
        return values

    @field_validator("category")
    @classmethod
    def _category(cls, value: str | None) -> str | None:
        return None if value is None else category_named(value)
