"""Attendance Statistics: a month of punch records, the staff roster and the rules manual (managers point to it) on
the cloud disk's ``attendance/``; the agent answers one of nine questions about a department or everyone in
``dept_<department>_<question>.json``.

Scored as the reference: the first checkpoint, the three source files at the top of the workspace, is 30% of the
full points (the number of checkpoints); each question's own (a figure, or for each expected employee: present, and
their numbers) share 70%. Some of the reference's sums fall short of their full points by construction (top-percent
answers reach 65% at best, 30% when nobody qualifies); they are kept, so that points here are the reference's."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Mapping
from typing import Any

from occubench.traineebench.families import _common as common
from occubench.traineebench.families import attendance_records as records
from occubench.traineebench.family import Day, Hints, Outcome, Score, TaskSpec

NAME = "Attendance Statistics"
FOLDER = "attendance"
MODES = {"most_late": "the most lateness", "least_late": "the least lateness", "most_early": "the most earliness",
         "least_early": "the least earliness"}
OBJECTIVES = {
    "late_early_employee": "Find the employee with {what}{scope} Write a list of objects, one per employee who fits "
                           "(all of them if several tie), each with the keys employee_id, name, {metric}_days and "
                           "{metric}_minutes_total; an empty list if nobody fits.",
    "top_percent_employees": "Find the top {percent}% of employees by `{metric}`{scope} Write a list of objects, one "
                             "per such employee, each with the keys employee_id, name, {metric}_days and "
                             "{metric}_minutes_total; an empty list if nobody fits.",
    "attendance_statistics": "Work out the attendance statistics{scope} Write an object with the keys employees "
                             "(how many employees), avg_late_days, avg_early_days and avg_absence_days (days per "
                             "employee) and attendance_rate (days attended over scheduled workdays, as a "
                             "percentage).",
    "avg_late_early_days": "Work out the average number of days late and of days leaving early{scope} Write an "
                           "object with the keys avg_late_days and avg_early_days, each rounded to two decimals.",
    "has_late_or_early": "Decide whether anyone was late or left early{scope} Write an object with the key "
                         "has_late_or_early, true or false.",
    "total_absence_days": "Work out the total number of days of absence{scope} Write an object with the key "
                          "total_absence_days, a whole number summed over the employees.",
    "average_overtime_hours": "Work out the average overtime per employee in hours{scope} Write an object with the "
                              "key average_overtime_hours, rounded to two decimals.",
    "employees_with_most_remote_days": "List the employees with the most remote days (several may tie){scope} "
                                       "Write a list of objects with the keys employee_id, name and remote_days (a "
                                       "whole number); an empty list if nobody fits.",
    "employees_with_perfect_attendance": "List the employees with perfect attendance: never late, never leaving "
                                         "early, never absent{scope} Write a list of objects with the keys "
                                         "employee_id, name and department; an empty list if nobody fits.",
}
#: The task parameters each question takes beyond `department`, with their defaults.
EXTRA: dict[str, dict[str, Any]] = {"late_early_employee": {"mode": "least_late"},
                                    "top_percent_employees": {"percent": 10, "metric": "late"}}


#: What each question does with the employees' monthly totals, as tier 3 of its hints says it.
STEPS = {
    "late_early_employee": "keep the employee or employees at the extreme the task names, with their days and "
                           "minutes for that measure",
    "top_percent_employees": "rank by days, then minutes, of the measure the task names and keep the share it asks "
                             "for (rounded up; everyone tied with the last one kept)",
    "attendance_statistics": "give the headcount, the late, early and absent days per employee, and the days "
                             "present over the workdays as a percentage",
    "avg_late_early_days": "average the late days and the early days over the employees, to two decimals",
    "has_late_or_early": "say whether anyone has a late or an early day",
    "total_absence_days": "add up everyone's absent days",
    "average_overtime_hours": "add up the overtime minutes, divide by the headcount and turn minutes into hours, "
                              "to two decimals",
    "employees_with_most_remote_days": "find the largest number of remote days and everyone who has it",
    "employees_with_perfect_attendance": "keep everyone with no late, early or absent day",
}


def _arguments(arguments: dict[str, Any]) -> tuple[str, dict[str, Any], str | None, dict[str, float]]:
    common.known_arguments(NAME, arguments, ("task_type_name", "task_params", "difficulty"))
    kind = arguments.get("task_type_name", "late_early_employee")
    if kind not in OBJECTIVES:
        raise common.bad_argument(NAME, "task_type_name", f"one of {', '.join(OBJECTIVES)}", kind)
    given = arguments.get("task_params") or {}
    if not isinstance(given, dict):
        raise common.bad_argument(NAME, "task_params", "an object such as {\"department\": \"Finance\"}", given)
    extra = EXTRA.get(kind, {})
    common.known_arguments(f"{NAME} task_params ({kind})", given, ("department", *extra))
    params = {**extra, **given, "department": given.get("department") or "all"}
    for key, allowed, expected in (("department", ("all", *records.DEPARTMENTS),
                                    f"'all' or one of {', '.join(records.DEPARTMENTS)}"),
                                   ("mode", MODES, f"one of {', '.join(MODES)}"),
                                   ("metric", ("late", "early"), "'late' or 'early'")):
        if key in params and params[key] not in allowed:
            raise common.bad_argument(NAME, f"task_params.{key}", expected, params[key])
    percent = params.get("percent", 10)
    if isinstance(percent, bool) or not isinstance(percent, int) or not 1 <= percent <= 100:
        raise common.bad_argument(NAME, "task_params.percent", "a whole number from 1 to 100", percent)
    difficulty = arguments.get("difficulty") or {}
    if not isinstance(difficulty, dict):
        raise common.bad_argument(NAME, "difficulty", "an object such as {\"level\": \"L2\"}", difficulty)
    common.known_arguments(f"{NAME} difficulty", difficulty, ("level", "rng_cfg"))
    level = difficulty.get("level")
    if level not in records.LEVELS:
        raise common.bad_argument(NAME, "difficulty.level", "one of L1, L2, L3, L4, L5", level)
    return kind, params, level, _chances(difficulty.get("rng_cfg") or {})


def _chances(given: Any) -> dict[str, float]:
    if not isinstance(given, dict):
        raise common.bad_argument(NAME, "difficulty.rng_cfg", "an object of chances", given)
    common.known_arguments(f"{NAME} difficulty.rng_cfg", given, records.CHANCES)
    for key, value in given.items():
        high = 120 if key.startswith("late_") else 1
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= high:
            raise common.bad_argument(NAME, f"difficulty.rng_cfg.{key}", f"a number from 0 to {high}", value)
    return {**records.CHANCES, **given}


def output_file(kind: str, params: dict[str, Any]) -> str:
    suffix = {"late_early_employee": params.get("mode"),
              "top_percent_employees": f"top{params.get('percent')}_{params.get('metric')}"}.get(kind, kind)
    return f"dept_{params['department']}_{suffix}.json"


def _describe(kind: str, params: dict[str, Any], output: str) -> str:
    department = params["department"]
    scope = " among all employees." if department == "all" else f" in Department `{department}`."
    mode = params.get("mode", "")
    objective = OBJECTIVES[kind].format(scope=scope, what=MODES.get(mode), percent=params.get("percent"),
                                        metric=params.get("metric") or mode.rpartition("_")[2])
    who = "all employees" if department == "all" else f"department `{department}`"
    return (f"Analyse the attendance data of {who} and write the result to `{output}` at the top of your "
            f"workspace.\n\n**Objective:**\n- {objective}\n\n**Required output:**\n- A JSON file `{output}` at the "
            "top of the workspace holding the result.\n\n**Resources:**\n- Whom to ask about what: "
            "`CloudDisk:manuals_for_intern.md`.\n\n**How to work:**\n- Think it through and ask the right person "
            "when something is missing; never make information up.\n- Ask the department's leader for the "
            "attendance rules.\n- Writing the analysis as a script (such as `solve.py`) and running it with Python "
            "avoids shell quoting trouble.\n")


def expected(kind: str, params: dict[str, Any], totals: list[dict[str, Any]]) -> Any:
    """The answer, from each employee's totals, as the reference's answer key gives it."""
    rows = [row for row in totals if params["department"] in ("all", row["department"])]
    if kind == "attendance_statistics":
        return _statistics(rows, params["department"])
    if kind in ("late_early_employee", "top_percent_employees"):
        metric = params.get("metric") or params["mode"].rpartition("_")[2]
        pairs = [(row["employee_id"], row["name"], row[f"{metric}_days"], row[f"{metric}_minutes_total"])
                 for row in rows]
        if kind == "top_percent_employees":
            if not any(days or minutes for _, _, days, minutes in pairs):
                return []
            ranked = sorted((pair[2:] for pair in pairs), reverse=True)
            bar = ranked[min(len(ranked), max(1, math.ceil(len(ranked) * params["percent"] / 100))) - 1]
            return [[who, name] for who, name, *counts in pairs if tuple(counts) >= bar]
        extreme = (max if params["mode"].startswith("most") else min)(pair[2:] for pair in pairs)
        return sorted([list(pair) for pair in pairs if pair[2:] == extreme])
    if kind == "employees_with_most_remote_days":
        most = max(row["remote_days"] for row in rows)
        return [[row["employee_id"], row["name"], most] for row in rows if row["remote_days"] == most]
    if kind == "employees_with_perfect_attendance":
        return [[row["employee_id"], row["name"], row["department"]] for row in rows
                if not (row["late_days"] or row["early_days"] or row["absence_days"])]
    if kind == "has_late_or_early":
        return any(row["late_days"] or row["early_days"] for row in rows)
    if kind == "total_absence_days":
        return sum(row["absence_days"] for row in rows)
    if kind == "average_overtime_hours":
        return round(sum(row["overtime_minutes_total"] for row in rows) / 60 / len(rows), 2)
    return {f"avg_{key}": round(sum(row[key] for row in rows) / len(rows), 2) for key in ("late_days", "early_days")}


def _statistics(rows: list[dict[str, Any]], department: str) -> dict[str, Any]:
    """Per department: headcount, days per employee (rounded to 2 places) and the attendance rate in percent; for
    everyone, the departments' rounded averages weighted by headcount."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row["department"], []).append(row)
    sums = {name: {key: sum(row[key] for row in group) for key in records.COUNTS} for name, group in groups.items()}
    size = {name: len(group) for name, group in groups.items()}
    averages = {name: {key: round(sums[name][key] / size[name], 2) for key in ("late_days", "early_days",
                                                                                 "absence_days")} for name in groups}
    people = sum(size.values())
    present = sum(s["present_days"] for s in sums.values())
    workdays = sum(s["workdays"] for s in sums.values())
    stats: dict[str, Any] = {"employees": people}
    for key in ("late_days", "early_days", "absence_days"):
        days = sum(size[name] * averages[name][key] for name in sorted(groups))
        stats[f"avg_{key}"] = (averages[department][key] if department in groups else
                               round(days / people, 2) if people else 0.0)
    stats["attendance_rate"] = round(present / workdays * 100, 2) if workdays else 0.0
    return stats


def weighted(correct: int, total: int, first: bool) -> float:
    """The reference's points: the first checkpoint 30% of ``total``, each of the others an equal share of 70%
    (``correct`` counts those others). Rounded to 9 places, so a perfect answer is not a float's hair short."""
    share = 0.7 * total / (total - 1) if total > 1 else 0.0
    return min(float(total), round((0.3 * total if first else 0.0) + correct * share, 9))


def _records(output: Any) -> list[Any]:
    """A list answer as the reference reads it: a lone object stands for a list of one."""
    return [output] if isinstance(output, dict) else output if isinstance(output, list) else []


def _key(value: Any) -> Any:
    """A value usable as a dictionary key (an agent may give a list where a name goes)."""
    return value if value is None or isinstance(value, (str, int, float)) else common.brief(value)


def _float(value: Any) -> float | None:
    """A number as Python's float() reads it (a numeric string too); None when it does not."""
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return None


def _close(value: Any, target: float) -> bool:
    number = _float(value) if isinstance(value, (int, float)) else None  # no strings: the reference subtracts
    return number is not None and abs(number - target) < 0.01


#: A scorer takes the check and the agent's answer (None: no answer file, or not JSON) and gives the checkpoints
#: it passed besides the first, the number of checkpoints in all, and notes.
Scored = tuple[int, int, list[str]]
NO_OUTPUT = "No answer found: write the JSON file the task names."


def _figures(check: Mapping[str, Any], output: Any) -> Scored:
    """Questions answered by one or two figures in an object."""
    want, kind = check["expected"], check["task_type"]
    if kind in ("has_late_or_early", "total_absence_days", "average_overtime_hours"):
        if not isinstance(output, dict):
            return 0, 2, [NO_OUTPUT]
        value = output.get(kind)
        right = _close(value, want) if kind == "average_overtime_hours" else value == want
        return int(right), 2, [] if right else [f"{kind} is wrong: {common.brief(value)}; check the employees you "
                                                "counted, the department and the rules."]
    if output is None:
        return 0, 3, [NO_OUTPUT]
    if not isinstance(output, dict):
        return 0, 3, ["The answer must be a JSON object with the keys the task names."]
    # a missing figure is taken as 0, as the reference takes it
    wrong = [key for key in want if not _close(output.get(key, 0), want[key])]
    return 2 - len(wrong), 3, [f"{key} is wrong: {common.brief(output.get(key))}; average over the right employees and "
                               "round to two decimals." for key in wrong]


def _statistics_score(check: Mapping[str, Any], output: Any) -> Scored:
    want = check["expected"]
    if output is None:
        return 0, 1 + len(want), [NO_OUTPUT]
    fields = output if isinstance(output, dict) else {}
    notes = [f"{key} is missing from the answer." for key in want if key not in fields]
    passed = 0
    for key in (key for key in want if key in fields):
        number = _float(fields[key])
        right = (fields[key] == want[key] if key == "employees" else
                 number is not None and abs(number - want[key]) < 0.01)
        passed += common.noted(right, f"{key} is wrong: {common.brief(fields[key])}.", notes)
    return passed, 1 + len(want), notes


def _top_percent(check: Mapping[str, Any], output: Any) -> Scored:
    """One checkpoint per expected employee while there is no answer; two once there is one, of which only the
    employee's presence can be earned (the reference counts them twice). Nobody to find: the first checkpoint is
    all there is."""
    want = [tuple(pair) for pair in check["expected"]]
    if output is None:
        return 0, 1 + len(want), [NO_OUTPUT]
    given = {(_key(item.get("employee_id")), _key(item.get("name"))) for item in _records(output)
             if isinstance(item, dict)}
    if not want:
        return 0, 1, [] if not given else [f"Nobody belongs in this list, but the answer names {len(given)}."]
    missing = [pair for pair in want if pair not in given]
    extra = given.difference(want)
    notes = [f"Missing from the list: {who} ({name})." for who, name in missing]
    notes += [f"Not in the list, but named: {common.brief(sorted(map(str, extra)))}."] if extra else []
    return len(want) - len(missing), 1 + 2 * len(want), notes


def _late_early(check: Mapping[str, Any], output: Any) -> Scored:
    """Three checkpoints per expected employee: present, days, minutes (late or early, whichever the answer
    gives). An answer whose entries cannot be ordered by employee_id is read as empty, as the reference reads it."""
    want = {(who, name): (days, minutes) for who, name, days, minutes in check["expected"]}
    total = 1 + 3 * len(want) if want else 2
    if output is None:
        return 0, total, [NO_OUTPUT]
    try:
        items = sorted(_records(output), key=lambda item: item.get("employee_id"))
    except (AttributeError, TypeError):
        items = []
    given = {}
    for item in items:
        days, minutes = (item.get(f"late_{part}") if f"late_{part}" in item else item.get(f"early_{part}")
                         for part in ("days", "minutes_total"))
        given[_key(item.get("employee_id")), _key(item.get("name"))] = (days, minutes)
    if not want:
        return int(not given), total, [] if not given else ["Nobody fits, but the answer names someone."]
    return _per_employee(want, given, total, ("days", "minutes"))


def _per_employee(want: dict[tuple[Any, Any], tuple[Any, ...]], given: dict[tuple[Any, Any], tuple[Any, ...]],
                  total: int, parts: tuple[str, ...]) -> Scored:
    """A checkpoint for each expected employee found, and one for each of ``parts`` of theirs that matches."""
    passed, notes = 0, []
    for (who, name), values in want.items():
        if (who, name) not in given:
            notes.append(f"Missing: {who} ({name}).")
            continue
        passed += 1
        for part, wanted, value in zip(parts, values, given[who, name]):
            passed += common.noted(value == wanted, f"{part} of {who} ({name}): {common.brief(value)}, not {wanted}.",
                                   notes)
    extra = [pair for pair in given if pair not in want]
    notes += [f"Named but not expected: {common.brief(extra)}."] if extra else []
    return passed, total, notes


def _listed(field: str, number: Callable[[Any], Any]) -> Callable[[Mapping[str, Any], Any], Scored]:
    """Two checkpoints per expected employee: present, and their ``field`` (read by ``number``); entries without
    employee_id or name are passed over."""

    def score(check: Mapping[str, Any], output: Any) -> Scored:
        want = {(who, name): (value,) for who, name, value in check["expected"]}
        total = 1 + 2 * len(want) if want else 2
        if output is None:
            return 0, total, [NO_OUTPUT]
        given = {(_key(item["employee_id"]), _key(item["name"])): (number(item.get(field)),)
                 for item in _records(output) if isinstance(item, dict)
                 and item.get("employee_id") is not None and item.get("name") is not None}
        if not want:
            return int(not given), total, [] if not given else ["Nobody fits, but the answer names someone."]
        return _per_employee(want, given, total, (field,))

    return score


def _whole(value: Any) -> int:
    """int() as the reference applies it to remote_days: -1 when it cannot."""
    try:
        return int(value if value is not None else -1)
    except (TypeError, ValueError, OverflowError):
        return -1


SCORERS: dict[str, Callable[[Mapping[str, Any], Any], Scored]] = {
    "late_early_employee": _late_early, "top_percent_employees": _top_percent,
    "attendance_statistics": _statistics_score, "avg_late_early_days": _figures, "has_late_or_early": _figures,
    "total_absence_days": _figures, "average_overtime_hours": _figures,
    "employees_with_most_remote_days": _listed("remote_days", _whole),
    "employees_with_perfect_attendance": _listed("department", lambda value: value),
}


class AttendanceStatistics:
    name = NAME
    #: Easy: the rules manual is one pointer away and every fact is in three files; the work is one careful script.
    difficulty = "easy"

    def generate(self, day: Day, **arguments: Any) -> TaskSpec:
        kind, params, level, chances = _arguments(arguments)
        rules = records.policy(level, day.rng)
        people = records.roster(rules, day.rng)
        punches, approvals = records.punches(people, rules, chances, day.rng)
        folder = day.cloud_disk / FOLDER
        common.place(folder / records.ROSTER, json.dumps(people, ensure_ascii=False, indent=2))
        if approvals:
            common.place(folder / records.APPROVALS, json.dumps(approvals, ensure_ascii=False, indent=2))
        common.place(folder / records.CSV, records.csv_text(punches))
        common.place(folder / records.MANUAL, records.manual(rules))
        for employee in day.company.employees:
            if "Manager" in employee.role:
                day.company.add_rule(employee, f"If asked about the attendance rules, point to "
                                               f"`CloudDisk:{FOLDER}/{records.MANUAL}`.")
        output = output_file(kind, params)
        return TaskSpec(NAME, _describe(kind, params, output), common.deadline(day), {
            "task_type": kind, **params, "output_file": output, "level": level,
            "resources": [records.CSV, records.MANUAL, records.ROSTER],
            "expected": expected(kind, params, records.totals(people, rules, punches))})

    def sample_arguments(self, rng: random.Random) -> dict[str, Any]:
        """A question, a department (or everyone) and a level, drawn as the reference's sampler draws them. That
        sampler names the question in upper case (its enum's name), which its own generator refuses; the name
        here is the one its configs and generator use."""
        kind = rng.choice(list(OBJECTIVES))
        params: dict[str, Any] = {"department": rng.choice([*records.DEPARTMENTS, "all"])}
        if kind == "late_early_employee":
            params["mode"] = rng.choice(list(MODES))
        elif kind == "top_percent_employees":
            params.update(percent=rng.choice((5, 10, 15, 20)), metric=rng.choice(("late", "early")))
        level = rng.choice(sorted(level for level in records.LEVELS if level))
        return {"task_type_name": kind, "task_params": params, "difficulty": {"level": level}}

    def hints(self, task: TaskSpec) -> Hints:
        check = task.check
        sources = ", ".join(f"`{name}`" for name in check["resources"])
        scope = "every employee" if check["department"] == "all" else f"each employee of {check['department']}"
        return (
            "The answer comes from applying each department's own attendance rules to a month of punch records, "
            "employee by employee: office hours, grace minutes or flexible hours, missed punches and approved "
            "make-ups, remote tags and overtime all change the counts, and the rules can differ between departments.",
            f"A manager points to the rules manual; it is in `CloudDisk:{FOLDER}/` with the punch records and the "
            f"staff roster. Those three ({sources}) have to be copied to the top of your workspace; the roster ties "
            "each employee ID to a name and a department.",
            f"send_message a manager about the attendance rules; download_file {sources} from `{FOLDER}/`; write "
            f"solve.py and run it with execute_command: for {scope} and each workday, take the first check-in and "
            "the last check-out of the day, and apply their department's rules from the manual (absence for a "
            "missing punch where the rules say so; late past the grace period or flexible window; early before "
            "the end less the grace period, or short of the minimum hours net of lunch; overtime after the "
            "overtime start; remote when a punch is tagged so), totalling each count; then "
            f"{STEPS[check['task_type']]}; write `{check['output_file']}` at the top of the workspace with the keys "
            "the task names; done.")

    def evaluate(self, task: TaskSpec, outcome: Outcome) -> Score:
        check = task.check
        missing = [name for name in check["resources"] if not (outcome.workspace / name).exists()]
        notes = [f"Copy the source files from the cloud disk to the top of your workspace first; missing: "
                 f"{', '.join(missing)}."] if missing else []
        passed, total, more = SCORERS[check["task_type"]](check, common.read_json(common.find(outcome.workspace,
                                                                                   check["output_file"])))
        return Score(weighted(passed, total, not missing), float(total), tuple(notes + more))


FAMILY = AttendanceStatistics()
