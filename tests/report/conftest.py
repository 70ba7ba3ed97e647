"""Hand-made run directories for the report tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from occubench.core.results import Result

HEALTH, TRANSPORT, TECH = "Healthcare & Life Sciences", "Transportation & Logistics", "Technology & IT"


def result(task_id: Any, ok: bool | None, **fields: Any) -> dict[str, Any]:
    """A result line: ``ok`` True/False is the verdict, None an error line (status error, is_correct null)."""
    record: dict[str, Any] = {
        "task_id": task_id, "task_scenario_name": f"Scenario {task_id}", "category": HEALTH, "domain": "Pharmacy",
        "difficulty_level": 1, "agent_model": "A", "world_model": "sim", "env_mode": "E0",
        "is_correct": ok, "status": "ok" if ok is not None else "error",
        "error": {"kind": "infrastructure", "message": "endpoint down"} if ok is None else None,
        "votes": [] if ok is None else [{"is_correct": ok, "feedback": "fine", "attempts": 1}] * 3,
        "usage": {}, "final_answer": "done", "steps": [], "fault_events": [],
    }
    record.update(fields)
    return record


def typed(task_id: Any, ok: bool | None, **fields: Any) -> Result:
    """The same result line as ``result``, read the way every reader gets it: as a :class:`Result`."""
    return Result.from_dict(result(task_id, ok, **fields))


def write_run(root: Path, name: str, records: list[dict[str, Any]]) -> Path:
    run = root / name
    run.mkdir(parents=True)
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return run
