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
