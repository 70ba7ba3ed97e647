"""The report's tables as plain rows of text, rendered to Markdown, CSV, JSON or HTML by the same builders."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict
from typing import Any

from occubench.config import FAULT_LEVELS
from occubench.core.results import Result
from occubench.core.suite import SuiteDefinition
from occubench.core.tables import Chart, Table, percent
from occubench.core.task import CATEGORY_ABBREVIATIONS
from occubench.engine.registry import load_suite
from occubench.engine.summary import USAGE_COLUMNS, ordered_roles, usage_row
from occubench.errors import ConfigError
from occubench.hub.worlds import cited
from occubench.llm.types import Usage
from occubench.report.compare import PairAgreement
from occubench.report.paired import PairedComparison
from occubench.report.robustness import RobustnessRow, r_formula, robustness_warnings
from occubench.report.runs import Run
from occubench.report.stats import Group, RunStats


def ci_text(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"{100 * low:.1f}–{100 * high:.1f}%"


def category_label(category: str) -> str:
    return CATEGORY_ABBREVIATIONS.get(category, category)


COUNT_COLUMNS = ["Passed", "Evaluated", "Errors", "Completion", "95% CI"]


def _count_rows(counts: dict[str, Group], label: Callable[[str], str] = str) -> list[list[str]]:
    return [[label(key), str(c.passed), str(c.evaluated), str(c.errors), percent(c.rate), ci_text(c.low, c.high)]
            for key, c in counts.items()]


def run_tables(stats: RunStats, *, by_domain: bool = True) -> list[Table]:
    """Summary, by category, by difficulty, [by domain], [pass@k], [usage and cost] of one run."""
    c, u = stats.completion, stats.unanimity
    summary = [["Agent", stats.agent_model], ["World model", stats.world_model], ["Suite", stats.suite],
               ["Fault level", stats.env_mode],
               ["Completion", percent(c.rate)],
               [f"{100 * c.level:.0f}% CI (Wilson)", ci_text(c.low, c.high)],
               ["Passed / evaluated", f"{c.passed}/{c.evaluated}"],
               ["Errors (not scored)", str(stats.errors)]]
    if stats.errors:  # the kind says what to do about them (see occubench.engine.summary.ERROR_ADVICE)
        kinds = stats.summary.errors_by_kind.items()
        summary.append(["Errors by kind", ", ".join(f"{len(results)} {kind}" for kind, results in kinds)])
    if u.voted:  # code checks have no votes to agree
        summary.append(["Judge unanimity", f"{percent(u.share)} ({u.unanimous}/{u.judged} with 2+ parsable votes)"])
    if stats.trials > 1:
        summary.append(["Trials per task", str(stats.trials)])
    if stats.left_out:
        summary.append(["Lines left out (not this run's)", str(stats.left_out)])
    tables = [Table(f"{stats.name}: summary", ["", "Value"], summary, text_columns=2),
              Table(f"{stats.name}: by category", ["Category", *COUNT_COLUMNS],
                    _count_rows(stats.by_category, category_label)),
              Table(f"{stats.name}: by difficulty", ["Difficulty", *COUNT_COLUMNS],
                    _count_rows(stats.by_difficulty))]
    if by_domain:
        tables.append(domain_table(stats))
    if stats.pass_k:
        tables.append(Table(f"{stats.name}: repeated trials", ["k", "Tasks", "pass@k", "pass^k"],
                            [[str(p.k), str(p.tasks), percent(p.pass_at_k), percent(p.pass_hat_k)]
                             for p in stats.pass_k],
                            note="pass@k: at least one of k trials passes; pass^k: all k pass; averaged over the tasks "
                                 "with at least k evaluated trials."))
    if any(usage.calls for usage in stats.summary.usage.values()):
        tables.append(_usage_table(stats))
    return tables


def domain_table(stats: RunStats) -> Table:
    return Table(f"{stats.name}: by domain", ["Domain", *COUNT_COLUMNS],
                 _count_rows(stats.by_domain))


def _usage_table(stats: RunStats) -> Table:
    summary = stats.summary
    columns = ["Role", *USAGE_COLUMNS] + (["Cost (USD)"] if summary.priced else [])
    rows, total = [], Usage()
    for role in ordered_roles(stats.summary.usage):
        total.add(summary.usage[role])
        rows.append(usage_row(role, summary.usage[role], summary.cost_by_role[role] if summary.priced else None,
                               role in summary.unpriced_by_role))
    rows.append(usage_row("All", total, summary.cost_total if summary.priced else None,
                           bool(summary.unpriced_by_role)))
    note = (f"* No price for {', '.join(sorted(summary.unpriced_models))}: their tokens are left out of that cost."
            if summary.unpriced_models else "")
    return Table(f"{stats.name}: usage", columns, rows, note=note)


LEADERBOARD_NOTE = ("Ranked within a task set (the same suite and tasks); runs of a task set no other run has, or "
                    "with nothing evaluated, are listed after them, unranked (-).")


def leaderboard_table(runs: list[RunStats]) -> Table:
    """Runs by task set, then completion rate, best first, ranked within their task set (see
    :func:`leaderboard`)."""
    priced = any(s.summary.priced for s in runs)
    columns = ["Rank", "Run", "Suite", "Agent", "World model", "Fault level", "Completion", "95% CI", "Passed",
               "Evaluated", "Errors"] + (["Cost (USD)"] if priced else [])
    rows = []
    for rank, s in leaderboard(runs):
        c = s.completion
        row = ["-" if rank is None else str(rank), s.name, s.suite, s.agent_model, s.world_model, s.env_mode,
               percent(c.rate), ci_text(c.low, c.high), str(c.passed), str(c.evaluated), str(s.errors)]
        rows.append(row + ([f"{s.summary.cost_total:,.4f}"] if priced else []))
    # What a narrow terminal leaves out first: what the run's name says already, then the counts behind the rate.
    return Table("Leaderboard", columns, rows, text_columns=6, note=LEADERBOARD_NOTE,
                 optional=("Fault level", "World model", "Agent", "Suite", "Evaluated", "Errors", "Passed",
                           "Cost (USD)", "95% CI"))


def leaderboard(runs: Iterable[RunStats]) -> list[tuple[int | None, RunStats]]:
    """Runs of a shared task set first, a group per task set (the largest first), each by completion rate, best
    first, with its rank in the group; then, unranked and by rate, the runs whose task set no other run has (a
    rate over other tasks says nothing of their place). A run with nothing evaluated (only errors) has no rank."""
    groups: dict[str, list[RunStats]] = defaultdict(list)
    for s in runs:
        groups[s.task_set].append(s)
    shared = sorted((g for g in groups.values() if len(g) > 1), key=lambda g: (-len(g), -g[0].tasks, g[0].task_set))
    alone = [s for g in groups.values() if len(g) == 1 for s in g]
    ordered: list[tuple[int | None, RunStats]] = []
    for group in shared:
        ordered += [(rank if s.completion.rate is not None else None, s)
                    for rank, s in enumerate(sorted(group, key=_by_rate), start=1)]
    return ordered + [(None, s) for s in sorted(alone, key=_by_rate)]


def _by_rate(s: RunStats) -> tuple[bool, float, str]:
    return s.completion.rate is None, -(s.completion.rate or 0.0), s.name


def modes_table(rows: list[RobustnessRow]) -> Table:
    """One row per (suite, agent, world model[, guidance tier]), a column per fault level. What the rates hide
    (levels over different tasks, runs pooled over the same tasks) is in the rows' warnings, which the report shows
    in its Warnings section."""
    # The tier gets a column only when a row has one: tables of runs without tiers keep their shape.
    tiers = any(r.guidance for r in rows)
    columns = ["Suite", "Agent", "World model", *(["Guidance"] if tiers else []), *FAULT_LEVELS, "R"]
    return Table(f"Completion by fault level; R = {r_formula()}", columns,
                 [[r.suite, r.agent_model, r.world_model, *([str(r.guidance)] if tiers else []),
                   *(percent(r.rates[level]) for level in FAULT_LEVELS), "-" if r.score is None else f"{r.score:.2f}"]
                  for r in rows], text_columns=3)


def compare_tables(pairs: list[PairAgreement]) -> list[Table]:
    """One agreement table over every pair of groups, then each pair's completion rates side by side."""
    by = pairs[0].by if pairs else "group"
    summary = Table(f"Agreement between {by} groups",
                    ["Suite", "First", "Second", "Agents", "Agent pairs agreeing", "Kendall tau-b",
                     "Task verdicts agreeing"],
                    [[p.suite, p.first, p.second, str(len(p.agents)),
                      f"{p.agreeing}/{p.pairs} ({percent(p.ranking_agreement)})",
                      "-" if p.kendall_tau_b is None else f"{p.kendall_tau_b:.3f}",
                      f"{p.verdicts_agreeing}/{p.verdicts} ({percent(p.verdict_agreement)})"] for p in pairs],
                    text_columns=3,
                    note="A pair of agents agrees when both groups order it the same way; a tie agrees only with a "
                         "tie. Each suite's results are compared apart.")
    tables = [summary]
    for p in pairs:
        swapped = ", ".join(f"{a} / {b}" for a, b in p.disagreements)
        tables.append(Table(f"Completion: {p.first} vs {p.second} ({p.suite})", ["Suite", "Agent", p.first, p.second],
                            [[p.suite, a, percent(x), percent(y)] for a, (x, y) in p.rates.items()], text_columns=2,
                            note=f"Pairs ordered differently: {swapped}" if swapped else ""))
    return tables


def compare_json(pairs: list[PairAgreement]) -> list[dict[str, Any]]:
    return [{"by": p.by, "suite": p.suite, "first": p.first, "second": p.second, "agents": p.agents,
             "rates": {a: {p.first: x, p.second: y} for a, (x, y) in p.rates.items()},
             "pairs": p.pairs, "agreeing": p.agreeing, "ranking_agreement": p.ranking_agreement,
             "concordant": p.concordant, "discordant": p.discordant, "tied_first": p.tied_first,
             "tied_second": p.tied_second, "kendall_tau_b": p.kendall_tau_b, "verdicts": p.verdicts,
             "verdicts_agreeing": p.verdicts_agreeing, "verdict_agreement": p.verdict_agreement,
             "disagreements": [list(pair) for pair in p.disagreements]} for p in pairs]


def _points(value: float) -> str:
    return f"{100 * value:+.1f}"


PAIRED_TITLE = "Paired comparison"


def paired_table(comparisons: list[PairedComparison]) -> Table:
    """One row per pair of agents per setting (see :mod:`occubench.report.paired`); differences in percentage
    points."""
    level = comparisons[0].level if comparisons else 0.95
    tiers = any(c.setting.guidance for c in comparisons)  # a column only when a setting has a guidance tier
    rows = []
    for c in comparisons:
        s, d, needed = c.setting, c.difference, c.trials_needed
        faults = f"{s.fault_count}×{s.fault_duration}" if s.fault_count or s.fault_duration else "-"
        rows.append([s.suite, s.world_model, s.env_mode, faults, *([str(s.guidance)] if tiers else []), c.agent_a,
                     c.agent_b, str(c.tasks), str(c.a_only), str(c.b_only), "-" if d is None else _points(d),
                     "-" if c.low is None or c.high is None else f"{_points(c.low)} to {_points(c.high)}",
                     f"{c.p_value:.3g}", str(needed.k) if needed.k else needed.reason, str(c.errors)])
    return Table(PAIRED_TITLE, ["Suite", "World model", "Fault level", "Faults", *(["Guidance"] if tiers else []),
                                "A", "B", "Tasks", "A only (b)", "B only (c)", "A − B (pp)",
                                f"{100 * level:.0f}% CI (paired bootstrap)", "McNemar p", "Trials needed", "Errors"],
                 rows, text_columns=7 if tiers else 6,
                 note="Pairs: the same task and trial under both agents; a pair with an error on either side is "
                      "dropped (Errors). b / c: tasks on which A / B passed more of the paired trials (with one "
                      "trial: A passed and B failed / the reverse); McNemar p: exact two-sided test on b and c, "
                      "tasks as the pairs. Trials needed: trials per task for the interval to exclude 0 if each "
                      "task kept its pass rates; not separable: the tasks' own spread is too wide for more trials "
                      "to help (more tasks would); needs 2+ trials: with one trial per task that spread cannot be "
                      "told from the trials' noise.")


def paired_json(comparisons: list[PairedComparison]) -> list[dict[str, Any]]:
    return [{**asdict(c.setting), "agent_a": c.agent_a, "agent_b": c.agent_b, "tasks": c.tasks, "pairs": c.pairs,
             "passed_a": c.passed_a, "passed_b": c.passed_b, "a_only": c.a_only, "b_only": c.b_only,
             "errors": c.errors, "difference": c.difference, "ci_low": c.low, "ci_high": c.high, "ci_level": c.level,
             "mcnemar_p": c.p_value, "trials_needed": asdict(c.trials_needed)} for c in comparisons]


def _md_cell(text: str) -> str:
    """``text`` on one line of a table or a heading: names in it (models, runs, categories) are outside text."""
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(table: Table, level: int = 3) -> str:
    align = [":--" if i < table.text_columns else "--:" for i in range(len(table.columns))]
    lines = [f"{'#' * level} {_md_cell(table.title)}", "", "| " + " | ".join(map(_md_cell, table.columns)) + " |",
             "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(map(_md_cell, row)) + " |" for row in table.rows]
    if table.note:
        lines += ["", table.note]
    return "\n".join(lines) + "\n"


def _suites(results: Iterable[Result]) -> list[tuple[SuiteDefinition, list[Result]]]:
    """The results of each installed suite, in the suites' name order; a suite that is not installed has no tables
    to add, so its results are left out."""
    by_name: dict[str, list[Result]] = defaultdict(list)
    for result in results:
        if result.suite:
            by_name[result.suite].append(result)
    found = []
    for name, records in sorted(by_name.items()):
        try:
            found.append((load_suite(name), records))
        except ConfigError:
            continue
    return found


def suite_tables(runs: list[Run]) -> dict[str, list[Table]]:
    """The tables each run's suite adds (the workplace's figures, say), by run name; suites that are not installed
    add none."""
    tables: dict[str, list[Table]] = {}
    for run in runs:
        for definition, results in _suites(run.results):
            if definition.report_tables:
                tables.setdefault(run.name, []).extend(definition.report_tables(results))
    return tables


def overview_tables(runs: list[Run]) -> list[Table]:
    """The tables each installed suite adds over its results of all ``runs`` (the workplace's scores per guidance
    tier, say)."""
    return [table for definition, results in _suites(r for run in runs for r in run.results)
            if definition.overview_tables for table in definition.overview_tables(results)]


def overview_charts(runs: list[Run]) -> list[Chart]:
    """The charts each installed suite adds over its results of all ``runs`` (Trainee-Bench's Figure 4, say)."""
    return [chart for definition, results in _suites(r for run in runs for r in run.results)
            if definition.overview_charts for chart in definition.overview_charts(results)]


def report_warnings(modes: list[RobustnessRow], notes: Iterable[str] = ()) -> list[str]:
    """What a reader of the report must know: ``notes`` (say, the directories skipped while loading), then the
    warnings of the robustness rows."""
    return [*notes, *robustness_warnings(modes)]


def warnings_markdown(warnings: list[str]) -> str:
    return "".join(["## Warnings\n\n", *(f"- {_md_cell(w)}\n" for w in warnings)]) if warnings else ""


def markdown_report(runs: list[RunStats], modes: list[RobustnessRow], *, by_domain: bool = True,
                    extra: dict[str, list[Table]] | None = None, notes: Iterable[str] = (),
                    paired: list[PairedComparison] | None = None, overview: list[Table] | None = None) -> str:
    """The whole report in Markdown; ``notes`` are warnings to show beside the robustness rows' own (see
    :func:`report_warnings`), in a Warnings section after the title. ``paired`` comparisons, when there are any,
    get their table after the modes, and the ``overview`` tables over all runs (:func:`overview_tables`) follow,
    before each run's section."""
    warnings = warnings_markdown(report_warnings(modes, notes))
    parts = ["# OccuBench report\n", *([warnings] if warnings else []), to_markdown(leaderboard_table(runs), 2),
             to_markdown(modes_table(modes), 2), *([to_markdown(paired_table(paired), 2)] if paired else []),
             *(to_markdown(table, 2) for table in overview or [])]
    for stats in runs:
        parts.append(f"## Run {_md_cell(stats.name)}\n")
        if stats.worlds:
            parts.append(f"Worlds: {_md_cell(cited(stats.worlds, stats.worlds_digest))}\n")
        parts += [to_markdown(table) for table in run_tables(stats, by_domain=by_domain)]
        parts += [to_markdown(table) for table in (extra or {}).get(stats.name, [])]
    return "\n".join(parts)


def _counts_json(counts: dict[str, Group], category: bool = False) -> dict[str, dict[str, Any]]:
    return {key: {**({"abbreviation": category_label(key)} if category else {}), "passed": c.passed,
                  "evaluated": c.evaluated, "errors": c.errors, "rate": c.rate, "ci_low": c.low, "ci_high": c.high}
            for key, c in counts.items()}


def run_json(stats: RunStats, *, by_domain: bool = True) -> dict[str, Any]:
    c, u, summary = stats.completion, stats.unanimity, stats.summary
    data: dict[str, Any] = {
        "name": stats.name, "suite": stats.suite, "agent_model": stats.agent_model, "world_model": stats.world_model,
        "env_mode": stats.env_mode, "trials": stats.trials, "task_set": stats.task_set, "tasks": stats.tasks,
        "worlds": stats.worlds or None, "worlds_digest": stats.worlds_digest or None,
        "completion": {"passed": c.passed, "evaluated": c.evaluated, "rate": c.rate, "ci_low": c.low,
                       "ci_high": c.high, "ci_level": c.level},
        "errors": stats.errors,
        "errors_by_kind": {kind: len(results) for kind, results in summary.errors_by_kind.items()},
        "left_out": stats.left_out,
        "by_category": _counts_json(stats.by_category, category=True),
        "by_difficulty": _counts_json(stats.by_difficulty),
        "unanimity": {"unanimous": u.unanimous, "judged": u.judged, "share": u.share},
        "pass_k": [{"k": p.k, "tasks": p.tasks, "pass_at_k": p.pass_at_k, "pass_hat_k": p.pass_hat_k}
                   for p in stats.pass_k],
        "usage": {role: summary.usage[role].to_dict() for role in ordered_roles(stats.summary.usage)},
        "cost_usd": ({**{role: summary.cost_by_role[role] for role in ordered_roles(stats.summary.usage)},
                      "total": summary.cost_total} if summary.priced else None),
        "unpriced_models": sorted(summary.unpriced_models),
    }
    if by_domain:
        data["by_domain"] = _counts_json(stats.by_domain)
    return data


def report_json(runs: list[RunStats], modes: list[RobustnessRow], *, by_domain: bool = True,
                notes: Iterable[str] = (), paired: list[PairedComparison] | None = None) -> dict[str, Any]:
    ranked = leaderboard(runs)
    ranks = {id(s): rank for rank, s in ranked}
    return {"runs": [{**run_json(s, by_domain=by_domain), "rank": ranks[id(s)]} for s in runs],
            "leaderboard": [s.name for _, s in ranked],
            "robustness": [{"suite": r.suite, "agent_model": r.agent_model, "world_model": r.world_model,
                            "guidance": r.guidance, "rates": r.rates, "evaluated": r.evaluated,
                            "tasks": {m: len(tasks) for m, tasks in r.tasks.items()},
                            "runs": {m: [t.run for t in tallies] for m, tallies in r.runs.items()},
                            "score": r.score} for r in modes],
            "paired": paired_json(paired or []),
            "warnings": report_warnings(modes, notes)}


CSV_COLUMNS = ["run", "suite", "agent_model", "world_model", "env_mode", "breakdown", "key", "passed", "evaluated",
               "errors", "rate", "ci_low", "ci_high", "unanimous", "judged", "prompt_tokens", "completion_tokens",
               "cost_usd", "worlds", "worlds_digest"]


def report_csv(runs: list[RunStats], *, by_domain: bool = True) -> str:
    """One row per run and breakdown value, each with its CI; the run's ``overall`` row also carries judge
    unanimity, tokens and cost (empty elsewhere); every row its world package, if any (last, so that the columns
    before keep their places)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for s in runs:
        head = [s.name, s.suite, s.agent_model, s.world_model, s.env_mode]
        worlds = [s.worlds or None, s.worlds_digest or None]
        c, summary = s.completion, s.summary
        total = Usage()
        for usage in summary.usage.values():
            total.add(usage)
        writer.writerow(head + ["overall", "all", c.passed, c.evaluated, s.errors, c.rate, c.low, c.high,
                                s.unanimity.unanimous, s.unanimity.judged, total.prompt_tokens,
                                total.completion_tokens, summary.cost_total if summary.priced else None, *worlds])
        groups = [("category", s.by_category), ("difficulty", s.by_difficulty)]
        for name, counts in groups + ([("domain", s.by_domain)] if by_domain else []):
            for key, count in counts.items():
                writer.writerow(head + [name, key, count.passed, count.evaluated, count.errors, count.rate,
                                        count.low, count.high] + [None] * 5 + worlds)
    return out.getvalue()
