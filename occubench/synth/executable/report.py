"""The synthesis report, as Agent World Model tabulates its pipeline: per stage the first-attempt success rate and
the mean number of correction rounds; the worlds, tables, rows, tools and tasks kept; what was dropped and why; the
tokens and cost per 100 tasks kept."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from rich.console import Console

from occubench.core.tables import Table, percent
from occubench.llm.types import Usage
from occubench.util.jsonl import write_atomic
from occubench.util.jsonsafe import dumps
from occubench.util.text import markup

if TYPE_CHECKING:
    from occubench.synth.session import Session


class Outcome(NamedTuple):
    """How one item fared through a stage whose answers are executed, not only parsed: the correction rounds it
    took (a dropped item spent every round it had), and whether it was dropped."""

    rounds: int
    dropped: bool = False


def _figures(outcomes: list[Outcome]) -> dict[str, Any]:
    """A stage's items, those whose first answer ran without a problem, the correction rounds over all of them, the
    dropped ones, and the rates."""
    items = len(outcomes)
    first_try = sum(not o.rounds and not o.dropped for o in outcomes)
    corrections = sum(o.rounds for o in outcomes)
    return {"items": items, "first_try": first_try, "corrections": corrections,
            "dropped": sum(o.dropped for o in outcomes), "first_try_rate": first_try / items if items else None,
            "mean_corrections": corrections / items if items else None}


@dataclass
class SynthesisReport:
    #: Per stage: items, first_try, first_try_rate, corrections, mean_corrections, dropped, and from the engine
    #: format_reasks (answers asked again because they did not parse or match the schema) and usage.
    stages: dict[str, dict[str, Any]]
    #: The worlds written: name, scenario, folder, and their tables, rows, tools and tasks.
    worlds: list[dict[str, Any]]
    #: What was dropped (a world, a task as world/task, or a scenario), at which stage, and why.
    dropped: list[dict[str, str]]
    requested: int
    usage: Usage
    #: USD, when --prices names the synthesis model; None otherwise.
    cost: float | None

    @classmethod
    def of(cls, session: Session, outcomes: dict[str, list[Outcome]], worlds: list[dict[str, Any]],
           dropped: list[dict[str, str]], requested: int) -> SynthesisReport:
        price = (session.prices or {}).get(session.models["synth"].name)
        usage, stages = Usage(), {}
        for name, stage_outcomes in outcomes.items():
            engine = session.engine.stats.get(name)
            stage_usage = engine.usage if engine else Usage()
            usage.add(stage_usage)
            stages[name] = {**_figures(stage_outcomes),
                            "format_reasks": engine.reasked if engine else 0, "usage": stage_usage.to_dict(),
                            "cost": price.cost(stage_usage) if price else None}
        return cls(stages, sorted(worlds, key=lambda w: w["name"]), sorted(dropped, key=lambda d: d["item"]),
                   requested, usage, price.cost(usage) if price else None)

    @property
    def tasks(self) -> int:
        return sum(world["tasks"] for world in self.worlds)

    def per_100_tasks(self) -> tuple[float | None, float | None]:
        """Tokens and USD per 100 tasks kept (None without a task, or without a price)."""
        if not self.tasks:
            return None, None
        tokens = self.usage.tokens * 100 / self.tasks
        return tokens, None if self.cost is None else self.cost * 100 / self.tasks

    def to_dict(self) -> dict[str, Any]:
        tokens, cost = self.per_100_tasks()
        return {"stages": self.stages, "worlds": self.worlds, "dropped": self.dropped, "requested": self.requested,
                "kept": {key: sum(w[key] for w in self.worlds) for key in ("tables", "rows", "tools", "tasks")}
                | {"worlds": len(self.worlds)},
                "usage": self.usage.to_dict(), "cost": self.cost, "tokens_per_100_tasks": tokens,
                "cost_per_100_tasks": cost}

    def write(self, path: Path) -> None:
        write_atomic(path, dumps(self.to_dict(), indent=1) + "\n")

    def tables(self) -> list[Table]:
        def number(value: float | None, digits: int = 2) -> str:
            return "-" if value is None else f"{value:,.{digits}f}"
        rows = [[name, str(s["items"]), percent(s["first_try_rate"]), number(s["mean_corrections"]),
                 str(s["dropped"]), str(s["format_reasks"]),
                 f"{Usage.from_dict(s['usage']).tokens:,}", number(s["cost"], 4)]
                for name, s in self.stages.items()]
        stages = Table("Synthesis by stage (each answer executed; problems fed back up to 4 rounds)",
                       ["Stage", "Items", "First-try success", "Mean corrections", "Dropped", "Format re-asks",
                        "Tokens", "Cost (USD)"], rows)
        kept = self.to_dict()["kept"]
        tokens, cost = self.per_100_tasks()
        totals = Table(f"Kept: {len(self.worlds)} of {self.requested} world(s) requested",
                       ["Worlds", "Tables", "Rows", "Tools", "Tasks", "Tokens per 100 tasks",
                        "Cost per 100 tasks (USD)"],
                       [[str(kept[k]) for k in ("worlds", "tables", "rows", "tools", "tasks")]
                        + [number(tokens, 0), number(cost)]], text_columns=0)
        return [stages, totals]

    def print(self, console: Console) -> None:
        for table in self.tables():
            console.print(table)
        for item in self.dropped:
            console.print(f"[yellow]dropped {markup(item['item'])} at {item['stage']}: {markup(item['reason'])}"
                          "[/yellow]")
