"""Completion rate over a run directory's results: overall, per category, and the errors left to retry; tokens and
cost per role."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from occubench.core.faults import Recovery, recovery
from occubench.core.results import Result, agent_model_of
from occubench.core.task import CATEGORY_ABBREVIATIONS
from occubench.errors import ConfigError
from occubench.llm import Usage
from occubench.util.jsonl import read_json
from occubench.util.text import markup, terminal

ROLE_ORDER = ("agent", "world", "verifier")

#: What to do about each kind of error: which ones a re-run can fix, and which need a change first.
ERROR_ADVICE = {
    "infrastructure": "an endpoint stayed unavailable; run the same command again to retry them",
    "cache_miss": "--replay found no cached answer; replay with the cache and --date of the original run",
    "request_rejected": "the endpoint refused the request as sent; a re-run will not help: fix the flag, model or "
                        "endpoint the message names",
    "context_length": "the task did not fit the model's context window; use a model with a longer context",
    "environment": "the world gave no usable observation (a simulator that kept answering unreadably, or world code "
                   "that crashed or overran its limits: each result's error says which); a re-run retries them, a "
                   "stronger --world-model fixes a simulator for good",
    "verifier": "the judge reached no verdict (unreadable or evenly split votes); a re-run retries them, another "
                "--verifier-model or an odd --num-votes fixes it for good",
    "agent": "the outside agent left before answering (its MCP session ended or went quiet, or its program exited "
             "without an answer: each result's agent_output and error say which); a re-run retries them",
    "internal": "occubench itself failed (the log above has the traceback); a re-run retries them — please report it",
}


def ordered_roles(usage: Mapping[str, Usage]) -> list[str]:
    """The roles of ``usage``: agent, world, verifier first, then any other (npc, ...) by name."""
    return sorted(usage, key=lambda r: (ROLE_ORDER.index(r) if r in ROLE_ORDER else len(ROLE_ORDER), r))


@dataclass
class Tally:
    passed: int = 0
    evaluated: int = 0

    @property
    def rate(self) -> float | None:
        return self.passed / self.evaluated if self.evaluated else None


@dataclass(frozen=True)
class Price:
    """USD per 1M tokens; prompt tokens a provider served from its prompt cache cost ``cached_input`` (the input
    price when none is given)."""

    input: float
    output: float
    cached_input: float | None = None

    def cost(self, usage: Usage) -> float:
        cached = min(usage.cached_tokens, usage.prompt_tokens)
        cached_price = self.input if self.cached_input is None else self.cached_input
        return ((usage.prompt_tokens - cached) * self.input + cached * cached_price
                + usage.completion_tokens * self.output) / 1_000_000


@dataclass
class Summary:
    overall: Tally = field(default_factory=Tally)
    by_category: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    errors: list[Result] = field(default_factory=list)
    usage: dict[str, Usage] = field(default_factory=lambda: defaultdict(Usage))
    priced: bool = False
    cost_by_role: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    unpriced_by_role: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    recovery: Recovery = field(default_factory=Recovery)

    @property
    def cost_total(self) -> float:
        """The cost of the priced models only; see ``unpriced_models``."""
        return sum(self.cost_by_role.values())

    @property
    def unpriced_models(self) -> set[str]:
        """Models with usage but no price: the costs leave their tokens out."""
        return {model for models in self.unpriced_by_role.values() for model in models}

    @property
    def errors_by_kind(self) -> dict[str, list[Result]]:
        """The errors by kind, in kind order; a record without its error is an internal one."""
        by_kind: dict[str, list[Result]] = defaultdict(list)
        for result in self.errors:
            by_kind[result.error.kind if result.error else "internal"].append(result)
        return dict(sorted(by_kind.items()))


def load_prices(path: Path) -> dict[str, Price]:
    """``{"<model>": {"input": <USD per 1M prompt tokens>, "output": <USD per 1M completion tokens>,
    "cached_input": <USD per 1M cached prompt tokens, optional>}, ...}``."""
    data = read_json(path.resolve(), "price file")  # the user's own file: a link of theirs is followed
    if not isinstance(data, dict):
        raise ConfigError(f'{path}: expected a JSON object {{"<model>": {{"input": ..., "output": ...}}}}')
    prices: dict[str, Price] = {}
    for model, entry in data.items():
        if not isinstance(entry, dict) or not {"input", "output"} <= set(entry) <= {"input", "output", "cached_input"}:
            raise ConfigError(f'{path}: model {model!r}: expected {{"input": ..., "output": ...}} (and optionally '
                              f'"cached_input") in USD per 1M tokens, got {json.dumps(entry)}')
        for key, value in entry.items():
            # json accepts NaN and Infinity, and True is an int to Python; neither is a price.
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ConfigError(f"{path}: model {model!r}: {key!r} must be a number (USD per 1M tokens), "
                                  f"got {json.dumps(value)}")
            if value < 0:
                raise ConfigError(f"{path}: model {model!r}: {key!r} must not be negative, got {value}")
        prices[model] = Price(input=float(entry["input"]), output=float(entry["output"]),
                              cached_input=float(entry["cached_input"]) if "cached_input" in entry else None)
    return prices


def _role_model(result: Result, role: str) -> str | None:
    # The verifier defaults to the world model; results written before verifier_model existed lack the field.
    models = {"agent": agent_model_of(result), "world": result.world_model,
              "verifier": result.verifier_model or result.world_model, "npc": result.npc_model}
    return models.get(role) or result.lookup(f"{role}_model")


def summarize(results: Iterable[Result], prices: Mapping[str, Price] | None = None) -> Summary:
    """Completion rate = passed / evaluated; tasks with ``status: "error"`` are counted apart, not as failures.

    Usage and cost count every record, errors included, and the earlier attempts each record replaced: their tokens
    were spent all the same.
    """
    results = list(results)
    summary = Summary(priced=prices is not None, recovery=recovery([r for r in results if r.ok]))
    for result in results:
        for role, usage in [*result.usage.items(), *result.earlier_usage.items()]:
            summary.usage[role].add(usage)
            if prices is not None:
                model = _role_model(result, role) or f"(no {role} model recorded)"
                price = prices.get(model)
                summary.cost_by_role[role] += 0.0 if price is None else price.cost(usage)
                if price is None:
                    summary.unpriced_by_role[role].add(model)
        if not result.ok:
            summary.errors.append(result)
            continue
        for tally in (summary.overall, summary.by_category[result.category or "?"]):
            tally.evaluated += 1
            tally.passed += result.passed
    return summary


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "0/0"


def _percent(tally: Tally) -> str:
    return "-" if tally.rate is None else f"{100 * tally.rate:.1f}%"


#: The usage tables' columns after the role (a cost column follows when prices are given).
USAGE_COLUMNS = ["Requests", "Prompt tokens", "of which cached", "Completion tokens", "Retries"]


def usage_row(name: str, usage: Usage, cost: float | None, partial: bool) -> list[str]:
    retries = ", ".join(f"{count} {cause.replace('_', ' ')}" for cause, count in sorted(usage.retries.items())
                        if count) or "0"
    cells = [name, f"{usage.calls:,}", f"{usage.prompt_tokens:,}", f"{usage.cached_tokens:,}",
             f"{usage.completion_tokens:,}", retries]
    # A cost that leaves out unpriced tokens is marked, so it is not read as the whole cost.
    return cells if cost is None else [*cells, f"{cost:,.4f}" + (" *" if partial else "")]


def _usage_table(summary: Summary) -> Table:
    table = Table(title="Usage")
    table.add_column("Role")
    for column in USAGE_COLUMNS + (["Cost (USD)"] if summary.priced else []):
        table.add_column(column, justify="right")
    roles = ordered_roles(summary.usage)
    total = Usage()
    for role in roles:
        total.add(summary.usage[role])
        name, *cells = usage_row(role, summary.usage[role], summary.cost_by_role[role] if summary.priced else None,
                                 role in summary.unpriced_by_role)
        table.add_row(markup(name, newlines=False), *cells)  # a role named in a results file
    table.add_section()
    table.add_row(*usage_row("All", total, summary.cost_total if summary.priced else None,
                              bool(summary.unpriced_by_role)), style="bold")
    return table


def print_summary(summary: Summary, console: Console, title: str) -> None:
    table = Table(title=Text(terminal(title, newlines=False), style="table.title"))
    table.add_column("Category")
    table.add_column("Passed", justify="right")
    table.add_column("Evaluated", justify="right")
    table.add_column("Completion", justify="right")
    for category in sorted(summary.by_category):
        tally = summary.by_category[category]
        name = f"{category} ({CATEGORY_ABBREVIATIONS[category]})" if category in CATEGORY_ABBREVIATIONS else category
        table.add_row(markup(name, newlines=False), str(tally.passed), str(tally.evaluated), _percent(tally))
    table.add_section()
    table.add_row("All", str(summary.overall.passed), str(summary.overall.evaluated), _percent(summary.overall),
                  style="bold")
    console.print(table)
    if any(usage.calls for usage in summary.usage.values()):
        console.print(_usage_table(summary))
    if summary.recovery.explicit or summary.recovery.implicit:
        explicit = _share(summary.recovery.explicit_retried, summary.recovery.explicit)
        console.print(f"Recovery from harness faults: {explicit} of explicitly faulted calls retried within 3 calls; "
                      f"{_share(summary.recovery.implicit_requeried, summary.recovery.implicit)} of silently degraded "
                      "calls followed by the same tool again within 3 calls")
    if summary.unpriced_models:
        models = markup(", ".join(sorted(summary.unpriced_models)), newlines=False)
        console.print(f"[yellow]* No price for model(s) {models} in the price file: their tokens are left out of the "
                      "costs marked *.[/yellow]")
    for kind, results in summary.errors_by_kind.items():
        results.sort(key=lambda r: (isinstance(r.task_id, str), r.task_id if isinstance(r.task_id, int) else 0,
                                    str(r.task_id)))
        ids = (markup(", ".join(str(r.task_id) for r in results[:10]), newlines=False)
               + (f" and {len(results) - 10} more" if len(results) > 10 else ""))
        console.print(f"[yellow]{len(results)} task(s) not scored, {markup(kind, newlines=False)} error ({ids}): "
                      f"{markup(ERROR_ADVICE.get(kind, ERROR_ADVICE['internal']))}[/yellow]")
