"""Trainee-Bench's tables in the paper's layout, computed from working days of either task library: per run its
Tables 2-4 (overall, by tasks per day, easy and hard), the scores by category and Table 5 (day one → day two per
arm); over runs Tables 2-4 with a row per agent, and Figure 4 (guidance tiers and self-evolution) with its chart."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from occubench.core.results import Result
from occubench.core.tables import Chart, Table, percent
from occubench.workplace.record import LEGACY_ARM, DayRecord, TaskScore

#: What each day-two arm started with, in display order, the arm of files written before arms last.
ARM_LABELS = {"none": "no experience", "notes": "own notes", "reflection": "reflected notes",
              LEGACY_ARM: "mentor's feedback"}
LEVELS = ("easy", "hard")
#: The id of a first day played again by ``--self-evolution``, and which time it is.
EVOLUTION = re.compile(r"/evolution_(\d+)$")
#: What SR and CS stand for, as the paper defines them.
TERMS = ("SR: the share of tasks with every checkpoint passed. CS: the mean over days of each day's mean task score "
         "(a task's score: its passed checkpoint weight over its total)")


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


#: A scored day: its result and what the workplace added to it.
_Scored = tuple[Result, DayRecord]


def _scored(results: Iterable[Result]) -> list[_Scored]:
    """The days that were scored: an error has no task scores, and is never counted as a failure."""
    return [(result, record) for result in results if (record := DayRecord.from_result(result)) is not None]


def _firsts(days: Iterable[_Scored]) -> list[_Scored]:
    return [(result, record) for result, record in days if record.phase == 1]


def _iteration(result: Result) -> int:
    """The self-evolution iteration of a first day played again (``<scenario>/<day>/evolution_<n>``); 0 else."""
    return int(found[1]) if (found := EVOLUTION.search(str(result.task_id))) else 0


def _tasks(days: Iterable[_Scored]) -> list[TaskScore]:
    return [task for _, record in days for task in record.task_scores]


def _task_figures(tasks: list[TaskScore]) -> dict[str, Any]:
    return {"tasks": len(tasks), "success_rate": _mean([float(t.success) for t in tasks]),
            "checkpoint_score": _mean([t.score for t in tasks])}


def _day_figures(days: list[_Scored]) -> dict[str, Any]:
    """Over ``days``: the success rate of their tasks, and the checkpoint score as Trainee-Bench reports it, the mean
    over days (its scenarios) of each day's mean task score, so that a day of many tasks weighs as much as a day of
    one."""
    day_scores = [_mean([task.score for task in record.task_scores]) for _, record in days]
    return {"days": len(days), **_task_figures(_tasks(days)),
            "checkpoint_score": _mean([score for score in day_scores if score is not None]),
            "steps": _mean([r.step_count for r, _ in days]), "tool_calls": _mean([len(r.tool_calls) for r, _ in days])}


def _by(items: Iterable[Any], key: Callable[[Any], Any]) -> dict[Any, list[Any]]:
    groups: dict[Any, list[Any]] = defaultdict(list)
    for item in items:
        groups[key(item)].append(item)
    return groups


Days = tuple[tuple[TaskScore, ...], tuple[TaskScore, ...]]


def _change(days: list[Days], level: str | None) -> dict[str, Any] | None:
    """The mean day-one and day-two scores of days before and after (each its two days' task scores) and their gain:
    overall (``level`` None) as CS, the mean over days of each day's mean task score; for a level, the mean over
    each side's tasks of the level (a day after may hold other tasks than its day before, as the shipped
    continual-learning config's do). None without a task of the level on both sides."""
    sides = [[[task for task in day[side] if level in (None, task.difficulty)] for day in days] for side in (0, 1)]
    if level is None:
        means = [[sum(t.score for t in day) / len(day) for day in side if day] for side in sides]
    else:
        means = [[t.score for day in side for t in day] for side in sides]
    if not all(means):
        return None
    day1, day2 = (sum(side) / len(side) for side in means)
    return {"tasks": sum(map(len, sides[1])), "day1": day1, "day2": day2, "gain": day2 - day1}


def _learning(days: list[_Scored]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per arm and task group (overall, easy, hard): the tasks and the mean day-one and day-two scores (see
    :func:`_change`), over the days whose day one and that arm's day two were both scored (a first day played again
    for self-evolution is no day two)."""
    firsts = {(str(result.task_id), result.trial): record for result, record in _firsts(days)}
    pairs: dict[str, list[Days]] = defaultdict(list)
    for result, record in days:
        if record.phase != 1 and not _iteration(result) and (
                first := firsts.get((record.day_one, result.trial))) is not None:
            pairs[record.arm].append((first.task_scores, record.task_scores))
    order = list(ARM_LABELS)
    return {arm: {name: change for name, level in (("overall", None), *((level, level) for level in LEVELS))
                  if (change := _change(pairs[arm], level))}
            for arm in sorted(pairs, key=lambda arm: (order.index(arm) if arm in order else len(order), arm))}


def workplace_figures(results: Iterable[Result]) -> dict[str, Any]:
    """The figures of :func:`workplace_tables`, JSON-able. Over the scored day ones: ``overall`` and
    ``by_tasks_per_day`` (days, tasks, success_rate, checkpoint_score, steps and tool_calls per day), and
    ``by_difficulty`` and ``by_category`` (tasks, success_rate, checkpoint_score over their tasks); ``learning``
    (see :func:`_learning`); ``day_two``, whether there are day twos; ``guidance``, every result's tier (else 0)."""
    scored = _scored(results)
    firsts = _firsts(scored)
    tasks = _tasks(firsts)
    by_size = _by(firsts, lambda day: day[1].n_tasks)
    tiers = {result.guidance for result, _ in scored}
    return {"day_two": len(firsts) < len(scored), "guidance": tiers.pop() if len(tiers) == 1 else 0,
            "overall": _day_figures(firsts),
            "by_tasks_per_day": {n: _day_figures(days) for n, days in sorted(by_size.items())},
            "by_difficulty": {level: _task_figures(group)
                              for level, group in sorted(_by(tasks, lambda task: task.difficulty).items())},
            "by_category": {category: _task_figures(group)
                            for category, group in sorted(_by(tasks, lambda task: task.category).items())},
            "learning": _learning(scored)}


def _rates(row: dict[str, Any]) -> list[str]:
    return [str(row["tasks"]), percent(row["success_rate"]), percent(row["checkpoint_score"])]


def _gain(delta: float) -> str:
    # Rounded first, plus 0.0: a difference of -1e-17 would print as "-0.0".
    return f"{round(100 * delta, 1) + 0.0:+.1f} pts"


def _per_agent(groups: dict[str, list[_Scored]], scope: str) -> list[Table]:
    """Tables 2, 3 and 4 with a row (in Table 3, rows) per group of day ones, by label: an agent, or its setting."""
    groups = dict(sorted(groups.items()))
    sizes = sorted({record.n_tasks for days in groups.values() for _, record in days})
    overall = {label: _day_figures(days) for label, days in groups.items()}
    by_size = {label: _by(days, lambda day: day[1].n_tasks) for label, days in groups.items()}
    levels = {label: _by(_tasks(days), lambda task: task.difficulty) for label, days in groups.items()}
    cells = {label: [_day_figures(by_size[label].get(n, [])) for n in sizes] for label in groups}
    size_rows = [[label, name, *(str(row["days"]) if key == "days" else percent(row[key]) for row in cells[label])]
                 for label in groups for name, key in (("days", "days"), ("SR", "success_rate"),
                                                       ("CS", "checkpoint_score"))]
    return [
        Table(f"Table 2{scope}: overall scores, steps and tool calls",
              ["Agent", "Days", "Tasks", "SR", "CS", "Steps / day", "Tool calls / day"],
              [[label, str(row["days"]), *_rates(row), f"{row['steps']:.1f}", f"{row['tool_calls']:.1f}"]
               for label, row in overall.items()], note=TERMS + "."),
        Table(f"Table 3{scope}: by tasks per day", ["Agent", "", *(f"{n} task{'s' * (n != 1)}" for n in sizes)],
              size_rows, text_columns=2, note="Each column: the days of that many tasks."),
        Table(f"Table 4{scope}: easy and hard tasks",
              ["Agent", *(f"{level.capitalize()} {column}" for level in LEVELS for column in ("tasks", "SR", "CS"))],
              [[label, *(cell for level in LEVELS for cell in _rates(_task_figures(levels[label].get(level, []))))]
               for label in groups], note="CS here: the mean score of those tasks."),
    ]


def workplace_tables(results: Iterable[Result]) -> list[Table]:
    """Trainee-Bench's tables for one run: Tables 2-4 of its day ones, the scores by category when there are
    several, and with day-two results Table 5, each arm's change from day one to day two."""
    scored = _scored(results)
    figures = workplace_figures(result for result, _ in scored)
    if not figures["overall"]["days"]:
        return []
    tier = [f"guidance tier {figures['guidance']}"] if figures["guidance"] else []
    scope = ["day one"] * figures["day_two"] + tier
    scope_text = f" ({', '.join(scope)})" if scope else ""
    tables = _per_agent(_by(_firsts(scored), lambda day: day[0].agent_model or "-"), scope_text)
    if len(figures["by_category"]) > 1:
        tables.append(Table(f"Scores by category{scope_text}", ["Category", "Tasks", "SR", "CS"],
                            [[category, *_rates(row)] for category, row in figures["by_category"].items()],
                            note="CS here: the mean score of those tasks."))
    rows = [[ARM_LABELS.get(arm, arm), group.capitalize(), str(row["tasks"]), percent(row["day1"]),
             percent(row["day2"]), _gain(row["gain"])]
            for arm, groups in figures["learning"].items() for group, row in groups.items()]
    if rows:
        tables.append(Table(f"Table 5{''.join(f' ({t})' for t in tier)}: Day 1 → Day 2 per arm",
                            ["Arm", "Task type", "Tasks", "Day 1", "Day 2", "Gain"], rows, text_columns=2,
                            note="Overall: the CS of the days whose day one and that arm's day two both ended without "
                                 "an error; Easy, Hard: the mean score of those tasks."))
    return tables


def _settings(scored: list[_Scored]) -> dict[tuple[str, int, int], list[_Scored]]:
    """Figure 4's settings, in order: (agent, 0, tier) the day ones of each guidance tier, (agent, 1, n) the days of
    self-evolution iteration n; empty without a tier above 0 or self-evolution, nothing to set side by side. The
    agent names its fault level when the results have several."""
    faults = len({result.env_mode for result, _ in scored}) > 1
    groups = _by([day for day in scored if day[1].phase == 1 or _iteration(day[0])], lambda day: (
        (day[0].agent_model or "-") + (f" ({day[0].env_mode})" if faults else ""), int(day[1].phase != 1),
        _iteration(day[0]) if day[1].phase != 1 else day[0].guidance))
    return dict(sorted(groups.items())) if any(kind or number for _, kind, number in groups) else {}


def _setting(kind: int, number: int) -> str:
    return f"self-evolution {number}" if kind else f"guidance {number}"


def workplace_overview_tables(results: Iterable[Result]) -> list[Table]:
    """Over the results of several runs: Tables 2-4 with a row per agent (and guidance tier, and fault level where
    there are several) when there are several agents, and Figure 4's figures (see :func:`_settings`)."""
    scored = _scored(results)
    firsts = _firsts(scored)
    tables = []
    if len({result.agent_model for result, _ in firsts}) > 1:
        faults = len({result.env_mode for result, _ in scored}) > 1
        tables += _per_agent(_by(firsts, lambda day: (day[0].agent_model or "-") + "".join(
            [f" ({day[0].env_mode})"] * faults + [f", guidance {day[0].guidance}"] * bool(day[0].guidance))),
            " (agents compared)")
    rows = [[agent, _setting(kind, number), str(row["days"]), *_rates(row),
             *(percent(_task_figures([t for t in _tasks(days) if t.difficulty == level])["checkpoint_score"])
               for level in LEVELS)]
            for (agent, kind, number), days in _settings(scored).items() if (row := _day_figures(days))]
    if rows:
        tables.append(Table("Figure 4: scores per guidance tier and self-evolution iteration",
                            ["Agent", "Setting", "Days", "Tasks", "SR", "CS", "Easy CS", "Hard CS"], rows,
                            text_columns=2, optional=("Tasks", "Easy CS"),
                            note=f"{TERMS}; easy and hard CS: the mean score of those tasks. Guidance n: the day ones "
                                 "of tier n (0 no hints, 1 where to look, 2 also whom to ask, 3 also the plan); "
                                 "self-evolution n: the first days played the n-th time again, after reflecting on "
                                 "every time before. The chart draws Hard CS."))
    return tables


def workplace_overview_charts(results: Iterable[Result]) -> list[Chart]:
    """Figure 4 as a chart: the mean score of hard tasks per guidance tier and self-evolution iteration, a bar per
    agent; none without such results, or without a hard task among them."""
    hard = {key: [task.score for task in _tasks(days) if task.difficulty == "hard"]
            for key, days in _settings(_scored(results)).items()}
    if not any(hard.values()):
        return []
    settings = sorted({(kind, number) for _, kind, number in hard})
    return [Chart("Figure 4: mean score on hard tasks", [_setting(*setting) for setting in settings],
                  {agent: [_mean(hard.get((agent, *setting), [])) for setting in settings]
                   for agent in dict.fromkeys(agent for agent, _, _ in hard)}, "Agent", "Mean hard-task score")]
