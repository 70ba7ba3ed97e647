"""What a synthesis leaves: the kept tasks in the OccuBench data layout (so ``occubench run --data-dir OUT`` runs
them and ``occubench data verify --dir OUT`` checks them against the folder's own manifest), their solution plans,
and the synthesis report — per stage, per task, and what it cost."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from occubench.core.tables import Table, percent
from occubench.engine.summary import summarize
from occubench.llm.types import Usage
from occubench.report.stats import Count
from occubench.store import load_results
from occubench.synth.simulated.calibrate import env_name, write_data
from occubench.synth.simulated.candidate import Candidate
from occubench.util.jsonl import write_atomic
from occubench.util.jsonsafe import dumps

if TYPE_CHECKING:
    from occubench.synth.session import Session
    from occubench.synth.simulated.config import SimulatedSynthConfig

STATUSES = ("kept", "trivial", "unsolvable", "invalid", "unfaithful", "incomplete")


@dataclass
class SynthesisReport:
    stages: dict[str, dict[str, Any]]
    tasks: list[dict[str, Any]]
    #: Tokens by role: ``synth:<stage>`` for the writing stages, agent/world/verifier for the calibration runs.
    usage: dict[str, Usage]
    #: USD, when prices were given; ``None`` otherwise.
    cost: float | None
    unpriced: list[str]

    @property
    def kept(self) -> int:
        return sum(task["status"] == "kept" for task in self.tasks)

    def counts(self) -> dict[str, int]:
        return {status: sum(task["status"] == status for task in self.tasks) for status in STATUSES}

    @classmethod
    def of(cls, session: Session, config: SimulatedSynthConfig, candidates: list[Candidate]) -> SynthesisReport:
        stages = {name: {"asked": s.asked, "first_try": s.first_try, "reasked": s.reasked, "failed": s.failed,
                         "reused": s.reused, "first_try_rate": s.first_try / s.asked if s.asked else None,
                         "usage": s.usage.to_dict()} for name, s in session.engine.stats.items()}
        calibration = [r for path in sorted((session.work / "calibration").glob("*/results.jsonl"))
                       for r in load_results(path)]
        summary = summarize(calibration, session.prices)
        usage = {f"synth:{name}": s.usage for name, s in session.engine.stats.items()} | dict(summary.usage)
        cost, unpriced = None, sorted(summary.unpriced_models)
        if session.prices is not None:
            cost = summary.cost_total
            for name, s in session.engine.stats.items():
                model = session.models["repair" if name == "repair" else "synth"].name
                if (price := session.prices.get(model)) is None:
                    unpriced.append(model)
                else:
                    cost += price.cost(s.usage)
        number = 0
        tasks = []
        for candidate in candidates:
            number += candidate.status == "kept"
            latest = candidate.calibrations[-1] if candidate.calibrations else None
            tasks.append({
                "task_id": number if candidate.status == "kept" else None, "candidate": candidate.number,
                "scenario": candidate.scenario.name, "subtopic": candidate.subtopic.get("name"),
                "status": candidate.status, "reason": candidate.reason,
                "difficulty_written": candidate.task.get("difficulty_level"), "difficulty": candidate.difficulty,
                "with_plan": _rates(latest.with_plan) if latest else {},
                "without_plan": _rates(latest.without_plan) if latest else {},
                "rounds": [c.to_dict() for c in candidate.calibrations], "repairs": candidate.repairs,
                "twin_agreement": candidate.agreement,
                "env_name": env_name(candidate.environment) if candidate.environment else None})
        return cls(stages, tasks, usage, cost, sorted(set(unpriced)))

    def to_dict(self) -> dict[str, Any]:
        total = Usage()
        for usage in self.usage.values():
            total.add(usage)
        tokens = total.tokens
        return {"counts": self.counts(), "stages": self.stages, "tasks": self.tasks,
                "usage": {role: usage.to_dict() for role, usage in self.usage.items()},
                "requests": total.calls, "tokens": tokens,
                "tokens_per_kept_task": tokens / self.kept if self.kept else None,
                "cost_usd": self.cost, "cost_per_kept_task_usd": self.cost / self.kept
                if self.cost is not None and self.kept else None, "unpriced_models": self.unpriced}

    def tables(self) -> list[Table]:
        stages = Table("Stages", ["Stage", "Asked", "First try", "Re-asked", "Failed", "Reused", "Tokens"], [])
        for name, s in self.stages.items():
            stages.rows.append([name, str(s["asked"]), percent(s["first_try_rate"]), str(s["reasked"]),
                                str(s["failed"]), str(s["reused"]), f"{Usage.from_dict(s['usage']).tokens:,}"])
        tasks = Table("Tasks", ["#", "Sub-topic", "Status", "With plan", "Without plan", "Difficulty", "Repairs"], [],
                      text_columns=3, note="pass rates per calibration agent, last round; difficulty written → "
                      "calibrated")
        for task in self.tasks:
            tasks.rows.append([str(task["candidate"]), f"{task['scenario']}: {task['subtopic']}", task["status"],
                               _shown(task["with_plan"]), _shown(task["without_plan"]),
                               f"{task['difficulty_written']} → {task['difficulty'] or '-'}",
                               str(len(task["repairs"]))])
        data = self.to_dict()
        totals = Table("Totals", ["", "Value"], [[status, str(count)] for status, count in self.counts().items()])
        totals.rows += [["requests", f"{data['requests']:,}"], ["tokens", f"{data['tokens']:,}"],
                        ["tokens per kept task", _number(data["tokens_per_kept_task"])]]
        if self.cost is not None:
            totals.rows += [["cost (USD)", f"{self.cost:.4f}" + (" *" if self.unpriced else "")],
                            ["cost per kept task (USD)", _number(data["cost_per_kept_task_usd"], 4)]]
            totals.note = f"* without the unpriced model(s) {', '.join(self.unpriced)}" if self.unpriced else ""
        return [stages, tasks, totals]

    def print(self, console: Console) -> None:
        for table in self.tables():
            console.print(table)
        for task in self.tasks:
            if task["status"] != "kept":
                console.print(f"#{task['candidate']} {task['status']}: {task['reason']}", highlight=False)
            for repair in task["repairs"]:
                console.print(f"#{task['candidate']} repaired ({repair['diagnosis']}): {repair['explanation']}",
                              highlight=False)


def _rates(rates: dict[str, Count]) -> dict[str, float | None]:
    return {agent: rate.rate for agent, rate in rates.items()}


def _shown(rates: dict[str, float | None]) -> str:
    return " / ".join(percent(rate) for rate in rates.values()) or "-"


def _number(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def write_output(out: Path, session: Session, candidates: list[Candidate], report: SynthesisReport) -> None:
    """The kept tasks as a data folder (numbered from 1 in candidate order), their plans, the report and a
    manifest; files of an earlier synthesis into ``out`` that are no longer kept are removed."""
    from occubench.simulated.data import build_manifest

    kept = [c for c in candidates if c.status == "kept"]
    lines = [{"task_id": number, "difficulty_level": c.difficulty, "task_scenario_name": c.scenario.name,
              "agent_instruction": c.task["agent_instruction"], "verification_plan": c.task["verification_plan"]}
             for number, c in enumerate(kept, start=1)]
    write_data(out, zip(kept, lines), plans=False)
    names = {f"{env_name(c.environment)}.json" for c in kept}
    for stale in (out / "world_model_configs").glob("env_*.json"):
        if stale.name not in names:
            stale.unlink()
    write_atomic(session.work / "plans.jsonl", "".join(
        dumps({"task_id": number, "solution_plan": c.task["solution_plan"]}) + "\n"
        for number, c in enumerate(kept, start=1)))
    write_atomic(session.work / "report.json", json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    files = ["eval_benchmark_solvable.jsonl", "task_scenario_all_pool.jsonl",
             *(f"world_model_configs/{name}" for name in sorted(names))]
    write_atomic(out / "data_manifest.json", json.dumps(build_manifest(out, files), indent=1))
