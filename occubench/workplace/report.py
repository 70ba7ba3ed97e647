"""Workplace figures in the shape of Trainee-Bench's tables: per task the success rate and checkpoint score, per day
the steps and tool calls — overall, by tasks per day, by easy and hard task and by category; for runs with a day
two, each arm's day-one → day-two change; over several runs, the scores per guidance tier."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from occubench.core.results import Result
from occubench.core.tables import Table, percent
from occubench.workplace.record import LEGACY_ARM, DayRecord, TaskScore

#: What each day-two arm started with, in display order, the arm of files written before arms last.
ARM_LABELS = {"none": "no experience", "notes": "own notes", "reflection": "reflected notes",
              LEGACY_ARM: "mentor's feedback"}
LEVELS = ("easy", "hard")


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


#: A scored day: its result and what the workplace added to it.
_Scored = tuple[Result, DayRecord]


def _scored(results: Iterable[Result]) -> list[_Scored]:
    """The days that were scored: an error has no task scores, and is never counted as a failure."""
    return [(result, record) for result in results if (record := DayRecord.from_result(result)) is not None]


def _firsts(days: Iterable[_Scored]) -> list[_Scored]:
    return [(result, record) for result, record in days if record.phase == 1]


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


def _by(tasks: list[TaskScore], key: Callable[[TaskScore], str]) -> dict[str, list[TaskScore]]:
    groups: dict[str, list[TaskScore]] = defaultdict(list)
    for task in tasks:
        groups[key(task)].append(task)
    return groups


def _change(pairs: list[tuple[TaskScore, TaskScore]]) -> dict[str, Any]:
    day1 = sum(first.score for first, _ in pairs) / len(pairs)
    day2 = sum(second.score for _, second in pairs) / len(pairs)
    return {"tasks": len(pairs), "day1": day1, "day2": day2, "gain": day2 - day1}


def _learning(days: list[_Scored]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per arm and task group (overall, easy, hard): the tasks and the mean day-one and day-two scores, over the
    days whose day one and that arm's day two were both scored. Task i of a day two is of the same family as task
    i of its day one, so the two lists pair up in order."""
    firsts = {(str(result.task_id), result.trial): record for result, record in _firsts(days)}
    pairs: dict[str, list[tuple[TaskScore, TaskScore]]] = defaultdict(list)
    for result, record in days:
        if record.phase != 1 and (first := firsts.get((record.day_one, result.trial))) is not None:
            pairs[record.arm] += zip(first.task_scores, record.task_scores)
    learning = {}
    order = list(ARM_LABELS)
    for arm in sorted(pairs, key=lambda arm: (order.index(arm) if arm in order else len(order), arm)):
        groups = {"overall": pairs[arm], **{level: [p for p in pairs[arm] if p[0].difficulty == level]
                                            for level in LEVELS}}
        learning[arm] = {name: _change(group) for name, group in groups.items() if group}
    return learning


def workplace_figures(results: Iterable[Result]) -> dict[str, Any]:
    """The figures of :func:`workplace_tables`, JSON-able. Over the scored day-one results: ``overall`` and
    ``by_tasks_per_day`` (days, tasks, success_rate, checkpoint_score — the mean over days of each day's mean task
    score —, steps and tool_calls per day), and ``by_difficulty`` and ``by_category`` (tasks, success_rate, and
    checkpoint_score over their tasks); ``learning``, per day-two arm
    and task group (overall, easy, hard), the tasks and the mean day1 and day2 scores with their gain;
    ``day_two`` whether there are day-two results, and ``guidance`` the tier every result was run with (0 when
    none, or when they differ)."""
    scored = _scored(results)
    firsts = _firsts(scored)
    tasks = _tasks(firsts)
    by_size: dict[int, list[_Scored]] = defaultdict(list)
    for result, record in firsts:
        by_size[record.n_tasks].append((result, record))
    levels = _by(tasks, lambda task: task.difficulty)
    tiers = {result.guidance for result, _ in scored}
    return {"day_two": len(firsts) < len(scored), "guidance": tiers.pop() if len(tiers) == 1 else 0,
            "overall": _day_figures(firsts),
            "by_tasks_per_day": {n: _day_figures(days) for n, days in sorted(by_size.items())},
            "by_difficulty": {level: _task_figures(group) for level, group in sorted(levels.items())},
            "by_category": {category: _task_figures(group)
                            for category, group in sorted(_by(tasks, lambda task: task.category).items())},
            "learning": _learning(scored)}


def _rates(row: dict[str, Any]) -> list[str]:
    return [str(row["tasks"]), percent(row["success_rate"]), percent(row["checkpoint_score"])]


def _gain(delta: float) -> str:
    # Rounded first, plus 0.0: a difference of -1e-17 would print as "-0.0".
    return f"{round(100 * delta, 1) + 0.0:+.1f} pts"


def workplace_tables(results: Iterable[Result]) -> list[Table]:
    """Trainee-Bench's tables for one run: overall and by tasks per day, easy and hard tasks, by category, and,
    with day-two results, the change from day one to day two in each arm."""
    figures = workplace_figures(results)
    if not figures["overall"]["days"]:
        return []
    scope = [*(["day one"] if figures["day_two"] else []),
             *([f"guidance tier {figures['guidance']}"] if figures["guidance"] else [])]
    prefix = f"Workplace ({', '.join(scope)})" if scope else "Workplace"
    sizes = [("Overall", figures["overall"])] + [(f"{n} tasks per day", row)
                                                 for n, row in figures["by_tasks_per_day"].items()]
    tables = [
        Table(f"{prefix}: overall and by tasks per day",
              ["", "Days", "Tasks", "Success rate", "Checkpoint score", "Steps / day", "Tool calls / day"],
              [[name, str(row["days"]), *_rates(row), f"{row['steps']:.1f}", f"{row['tool_calls']:.1f}"]
               for name, row in sizes],
              note="Success rate: tasks with every checkpoint passed; checkpoint score: a task's passed checkpoint "
                   "weight over its total, averaged over tasks."),
        Table(f"{prefix}: easy and hard tasks", ["Difficulty", "Tasks", "Success rate", "Checkpoint score"],
              [[level, *_rates(row)] for level, row in figures["by_difficulty"].items()]),
        Table(f"{prefix}: by category", ["Category", "Tasks", "Success rate", "Checkpoint score"],
              [[category, *_rates(row)] for category, row in figures["by_category"].items()]),
    ]
    rows = [[ARM_LABELS.get(arm, arm), f"{group} ({row['tasks']})", percent(row["day1"]), percent(row["day2"]),
             _gain(row["gain"])]
            for arm, groups in figures["learning"].items() for group, row in groups.items()]
    if rows:
        tier = f" (guidance tier {figures['guidance']})" if figures["guidance"] else ""
        tables.append(Table(f"Workplace learning{tier}: Day one → day two by arm (mean checkpoint score)",
                            ["Arm", "Tasks", "Day 1", "Day 2", "Gain"], rows, text_columns=2,
                            note="Over the days whose day one and that arm's day two both ended without an error; "
                                 "Tasks: the group and, in brackets, its tasks."))
    return tables


def workplace_overview_tables(results: Iterable[Result]) -> list[Table]:
    """Scores per (agent, guidance tier) over the day-one results of several runs (a ``--guidance 0 1 2 3``
    matrix, say); none when every result is of tier 0. Runs at several fault levels get a Fault level column: a
    faulted run's scores are not pooled with a clean one's."""
    groups: dict[tuple[str, str, int], list[_Scored]] = defaultdict(list)
    for result, record in _firsts(_scored(results)):
        groups[(str(result.agent_model), result.env_mode, result.guidance)].append((result, record))
    if {tier for _, _, tier in groups} <= {0}:
        return []
    several = len({fault_level for _, fault_level, _ in groups}) > 1
    rows = []
    for (agent, fault_level, tier), days in sorted(groups.items()):
        figures, levels = _day_figures(days), _by(_tasks(days), lambda task: task.difficulty)
        rows.append([agent, *([fault_level] if several else []), str(tier), str(figures["days"]), *_rates(figures),
                     *(percent(_task_figures(levels[level])["checkpoint_score"]) for level in LEVELS)])
    return [Table("Workplace scores per guidance tier",
                  ["Agent", *(["Fault level"] if several else []), "Guidance tier", "Days", "Tasks", "Success rate",
                   "Checkpoint score", "Easy CS", "Hard CS"], rows, text_columns=2 if several else 1,
                  note="Day-one results only. Tiers: 0 no hints, 1 where to look, 2 also whom to ask and what for, "
                       "3 also the plan step by step.")]
