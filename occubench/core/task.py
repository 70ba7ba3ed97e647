"""A task: what the agent is asked to do, in which world, and how success is judged."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: OccuBench's ten industry categories and the short names reports use.
CATEGORY_ABBREVIATIONS: dict[str, str] = {
    "Agriculture & Environment": "Agri",
    "Business & Enterprise": "Biz",
    "Commerce & Consumer": "Comm",
    "Education & Culture": "Edu",
    "Healthcare & Life Sciences": "Hlth",
    "Industrial & Engineering": "Ind",
    "Public Service & Governance": "Pub",
    "Science & Research": "Sci",
    "Technology & IT": "Tech",
    "Transportation & Logistics": "Trans",
}


def category_named(name: str) -> str:
    """The category ``name`` stands for: its name or its short name, in any case; ValueError naming the choices."""
    lookup = {full.lower(): full for full in CATEGORY_ABBREVIATIONS}
    lookup.update({short.lower(): full for full, short in CATEGORY_ABBREVIATIONS.items()})
    if name.strip().lower() not in lookup:
        raise ValueError(f"unknown category {name!r}; choose from "
                         f"{', '.join(f'{n} ({a})' for n, a in CATEGORY_ABBREVIATIONS.items())}")
    return lookup[name.strip().lower()]


@dataclass(frozen=True)
class Task:
    """One evaluation instance. ``task_id`` is unique within its suite."""

    task_id: int | str
    instruction: str
    scenario: str
    category: str
    domain: str
    difficulty: int
    env_name: str
    verification_plan: str = ""
    solution_plan: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict, compare=False)
