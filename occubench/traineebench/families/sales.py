"""Sales Analysis: answer one question about last year's quarterly sales (a top seller, a department's statistics,
rankings across departments, how many grew over the previous quarter) from per-department, per-quarter CSVs of
orders on the cloud disk, as a JSON file in the workspace. Scored as the reference: the first checkpoint (the sales
handbook and the answer file anywhere in the workspace) 30%, the others (the answer's shape, its employees from the
right departments where asked, the answer within 0.05) the rest: 1.2 + 3 x 0.9333 of 4, or 0.9 + 2 x 1.05 of 3."""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from occubench.traineebench.families import _common as common
from occubench.traineebench.family import Day, Hints, Outcome, Score, TaskSpec

MANUAL = "manuals_for_sales_data_analysis.md"
TOLERANCE = 0.05
#: The departments the reference's sampler draws from: its company's sales teams.
SALES = ("Sales_1", "Sales_2", "Sales_3")
_ONE = {"department": (str, common.REQUIRED), "quarter": (int, None)}
_MANY = {"departments": (list, common.REQUIRED), "quarter": (int, None)}
_GROWTH = {"quarter": (int, None), "direction": (str, "up")}
#: The parameters taken from a few choices, with them.
CHOICES = {"mode": ("top", "bottom"), "direction": ("up", "down")}
#: How the reference's sampler draws each parameter a task type takes (the quarter apart).
DRAWS: dict[str, Callable[[random.Random], Any]] = {
    "department": lambda rng: rng.choice(SALES), "departments": lambda rng: rng.sample(SALES, rng.randint(2, 3)),
    "mode": lambda rng: rng.choice(CHOICES["mode"]), "n": lambda rng: rng.randint(1, 3)}
#: task type → its parameters, how many checkpoints it has, its answer file's name, what is asked, an example
#: answer.
TYPES: dict[str, tuple[dict[str, Any], int, str, str, str]] = {
    "top_sales_employee": (
        _ONE, 4, "dept_{department}_Q{quarter}_top_sales.json",
        "Total each salesperson's sales in department `{department}` for the quarter and name the top seller.",
        '[{"employee_id": "jane_doe", "name": "Jane Doe", "department": "Sales_1", "total_sales": 23456.78}]'),
    "sales_statistics": (
        _ONE, 3, "dept_{department}_Q{quarter}_sales_stats.json",
        "Give department `{department}`'s figures for the quarter: how many salespeople, their total sales, and "
        "the average sales per person.",
        '{"department": "Sales_1", "employees": 8, "total_sales": 64000.0, "avg_sales_per_person": 8000.0}'),
    "cross_depts_extreme_employee": (
        {**_MANY, "mode": (str, "top")}, 4, "depts_{joined}_Q{quarter}_{mode}_employee.json",
        "Over departments `{listed}` together, name the salesperson with the {extreme} total sales of the quarter.",
        '[{"employee_id": "jane_doe", "name": "Jane Doe", "department": "Sales_1", "total_sales": 23456.78}]'),
    "per_dept_extreme_employee": (
        {**_MANY, "mode": (str, "top")}, 3, "depts_{joined}_Q{quarter}_{mode}_per_dept.json",
        "In each of departments `{listed}`, name the salesperson with the {extreme} total sales of the quarter.",
        '{"Sales_1": [{"employee_id": "jane_doe", "name": "Jane Doe", "department": "Sales_1", '
        '"total_sales": 9999.99}], "Sales_2": ["..."]}'),
    "per_dept_avg_sales": (
        _MANY, 3, "depts_{joined}_Q{quarter}_avg.json",
        "Give the quarter's average sales per salesperson of each of departments `{listed}`.",
        '{"Sales_1": 6543.21, "Sales_2": 7654.32}'),
    "per_dept_top_n": (
        {**_MANY, "n": (int, 3)}, 3, "depts_{joined}_Q{quarter}_top{n}_per_dept.json",
        "List the quarter's top {n} salespeople of each of departments `{listed}`.",
        '{"Sales_1": [{"employee_id": "jane_doe", "name": "Jane Doe", "department": "Sales_1", '
        '"total_sales": 9999.99}], "Sales_2": ["..."]}'),
    "cross_depts_top_n": (
        {**_MANY, "n": (int, 3)}, 3, "depts_{joined}_Q{quarter}_top{n}.json",
        "List the quarter's top {n} salespeople over departments `{listed}` together.",
        '[{"employee_id": "jane_doe", "name": "Jane Doe", "department": "Sales_1", "total_sales": 23456.78}]'),
    "dept_person_qoq_count": (
        {**_ONE, "direction": (str, "up")}, 3, "dept_{department}_Q{quarter}_{direction}_person_count.json",
        "Count the salespeople of department `{department}` whose total sales {moved} in Q{quarter} against the "
        "quarter before.", '{"count": 4}'),
    "all_depts_qoq_count": (
        _GROWTH, 3, "all_Q{quarter}_{direction}_dept_count.json",
        "Count the departments whose total sales {moved} in Q{quarter} against the quarter before.", '{"count": 2}'),
}

#: What each task type does with the quarter's totals, as tier 3 of its hints says it.
STEPS = {
    "top_sales_employee": "keep whoever has the highest total, everyone tied at it included",
    "sales_statistics": "count the salespeople with orders, add up their totals, and divide the one by the other "
                        "for the average",
    "cross_depts_extreme_employee": "pool the departments asked and keep whoever is at the end of the ranking "
                                    "the task asks for, everyone tied there included",
    "per_dept_extreme_employee": "within each department asked, keep whoever is at the end of the ranking the "
                                 "task asks for, listed under the department's name",
    "per_dept_avg_sales": "divide each department's total by its number of salespeople",
    "per_dept_top_n": "rank each department's salespeople by total and keep as many as the task asks, listed "
                      "under the department's name",
    "cross_depts_top_n": "pool the departments asked, rank everyone by total and keep as many as the task asks",
    "dept_person_qoq_count": "total each salesperson in the quarter before as well, and count those whose total "
                             "moved the way the task asks (someone absent from the earlier quarter is not counted)",
    "all_depts_qoq_count": "total each department in the quarter before as well, and count the departments whose "
                           "total moved the way the task asks",
}

People = list[dict[str, Any]]


def _quarter(year: int, quarter: int) -> tuple[date, int]:
    """The quarter's first day and how many days it has."""
    first = date(year, 3 * quarter - 2, 1)
    following = date(year + 1, 1, 1) if quarter == 4 else date(year, 3 * quarter + 1, 1)
    return first, (following - first).days


def _record(person: dict[str, Any]) -> dict[str, Any]:
    return {**person, "total_sales": round(person["total_sales"], 2)}


def _extremes(people: People, mode: str) -> People:
    """Everyone tied at the highest (mode top) or lowest total."""
    if not people:
        return []
    best = (max if mode == "top" else min)(p["total_sales"] for p in people)
    return [_record(p) for p in people if abs(p["total_sales"] - best) < 1e-9]


def _leaders(people: People, n: int) -> People:
    return [_record(p) for p in sorted(people, key=lambda p: p["total_sales"], reverse=True)[:n]]


def _moved(now: dict[Any, float], before: dict[Any, float], direction: str) -> int:
    """How many of ``now`` rose (direction up) or fell since ``before`` (those absent then not counted)."""
    return sum(1 for key, total in now.items() if key in before and (total - before[key]) * (1 if direction == "up"
                                                                                              else -1) > 0)


def _truth(kind: str, p: dict[str, Any], people: dict[int, People], teams: dict[int, dict[str, Any]]) -> Any:
    """The answer to a task of type ``kind`` with parameters ``p``, from each quarter's totals by person and team."""
    q, chosen = p["quarter"], p.get("departments") or [p.get("department")]
    among = [x for x in people[q] if x["department"] in chosen]
    by_team = {d: [x for x in among if x["department"] == d] for d in chosen}
    if kind in ("top_sales_employee", "cross_depts_extreme_employee"):
        return _extremes(among, p.get("mode", "top"))
    if kind == "sales_statistics":
        return teams[q].get(p["department"], {"department": p["department"], "employees": 0, "total_sales": 0.0,
                                              "avg_sales_per_person": 0.0})
    if kind == "per_dept_extreme_employee":
        return {d: _extremes(team, p["mode"]) for d, team in by_team.items()}
    if kind == "per_dept_avg_sales":
        return {d: teams[q][d]["avg_sales_per_person"] if d in teams[q] else 0.0 for d in chosen}
    if kind == "per_dept_top_n":
        return {d: _leaders(team, p["n"]) for d, team in by_team.items()}
    if kind == "cross_depts_top_n":
        return _leaders(among, p["n"])
    if kind == "dept_person_qoq_count":  # per person on the unrounded totals, as the reference
        def totals(quarter: int) -> dict[Any, float]:
            return {(x["employee_id"], x["name"]): x["total_sales"] for x in people[quarter]
                    if x["department"] == p["department"]}
        return _moved(totals(q), totals(q - 1), p["direction"])
    return _moved({d: t["total_sales"] for d, t in teams[q].items()},  # all_depts_qoq_count: rounded totals
                  {d: t["total_sales"] for d, t in teams[q - 1].items()}, p["direction"])


class SalesAnalysis:
    name = "Sales Analysis"
    #: Easy: the data is all on the cloud disk, one colleague points to the handbook, and one script totals it.
    difficulty = "easy"

    def generate(self, day: Day, **given: Any) -> TaskSpec:
        args = common.arguments(self.name, given, {"task_type": (str, "top_sales_employee"),
                                                   "task_params": ((dict, type(None)), None)})
        kind = args["task_type"]
        common.one_of(self.name, "task_type", kind, list(TYPES))
        spec, checkpoints, output, objective, example = TYPES[kind]
        teams = [d for d in common.departments(day.company) if d.lower().startswith("sales")]
        params = self._params(kind, args["task_params"] or {"department": "Sales_1"}, teams, day)
        year = day.start.year - 1
        common.place(day.cloud_disk / "sales" / MANUAL,
                     common.reference_bytes(day, f"schemas/tasks/sales/templates/{MANUAL}"))
        people, totals = {}, {}
        for quarter in (1, 2, 3, 4):
            rows = []
            for team in teams:
                drawn = self._orders(day, team, year, quarter)
                common.place(day.cloud_disk / "sales" / f"sales_{team.replace(' ', '_')}_Q{quarter}_{year}.csv",
                             _csv(drawn))
                rows += drawn
            people[quarter], totals[quarter] = _aggregate(rows)
        for colleague in (e for team in teams for e in day.company.in_department(team)):
            day.company.add_rule(colleague, "If asked about sales data or how to analyse it, point to "
                                            f"`CloudDisk://sales/{MANUAL}`.")
        words = {**params, "joined": "-".join(params.get("departments", [])),
                 "listed": ", ".join(params.get("departments", [])),
                 "extreme": "highest" if params.get("mode") == "top" else "lowest",
                 "moved": "rose" if params.get("direction") == "up" else "fell"}
        check = {"task_type": kind, "checkpoints": checkpoints, "output_file": output.format(**words),
                 "expected": _truth(kind, params, people, totals),
                 "valid_ids": sorted({x["employee_id"] for x in people[params["quarter"]]
                                      if x["department"] in (params.get("departments") or [params.get("department")])})}
        sample = f"sales_{teams[0].replace(' ', '_')}_Q{params['quarter']}_{year}.csv" if teams else ""
        return TaskSpec(self.name, _description(params, sample, check["output_file"], objective.format(**words),
                                                example), common.deadline(day), check)

    def _params(self, kind: str, given: Any, teams: list[str], day: Day) -> dict[str, Any]:
        """The task's parameters checked; a quarter not given is drawn (one with a quarter before, for a growth)."""
        spec, growth = TYPES[kind][0], kind.endswith("qoq_count")
        params = common.arguments(self.name, given, spec, "task_params.")
        if "department" in spec:
            common.one_of(self.name, "task_params.department", params["department"], teams)
        if "departments" in spec:
            common.at_least(self.name, "task_params.departments (its length)", len(params["departments"]), 1)
            for i, team in enumerate(params["departments"]):
                common.one_of(self.name, f"task_params.departments[{i}]", team, teams)
        drawn = day.rng.choice((2, 3, 4) if growth else (1, 2, 3, 4))
        params["quarter"] = drawn if params["quarter"] is None else params["quarter"]
        common.one_of(self.name, "task_params.quarter", params["quarter"], (2, 3, 4) if growth else (1, 2, 3, 4))
        for name, choices in CHOICES.items():
            if name in spec:
                common.one_of(self.name, f"task_params.{name}", params[name], choices)
        if "n" in spec:
            common.at_least(self.name, "task_params.n", params["n"], 1)
        return params

    def _orders(self, day: Day, team: str, year: int, quarter: int) -> list[dict[str, Any]]:
        """Each salesperson's orders of the quarter: a right-skewed number of them (at least one), a right-skewed
        amount each (mostly 2,000 to 13,000)."""
        rng, (first, days) = day.rng, _quarter(year, quarter)
        orders = []
        for person in day.company.in_department(team):
            for _ in range(max(1, int(rng.lognormvariate(2.0, 0.6)))):
                orders.append({"date": (first + timedelta(days=rng.randrange(days))).isoformat(),
                               "employee_id": person.name.replace(" ", "_").lower(), "name": person.name,
                               "department": team, "amount": round(rng.lognormvariate(8.5, 0.5), 2)})
        return orders

    def sample_arguments(self, rng: random.Random) -> dict[str, Any]:
        """A task type, then its parameters, drawn as the reference's sampler draws them: two or three departments
        where it takes several; a quarter only for the averages (any) and the growth counts (one with a quarter
        before); for the others the quarter is left to generate, which draws it."""
        kind = rng.choice(list(TYPES))
        spec = TYPES[kind][0]
        params = {name: draw(rng) for name, draw in DRAWS.items() if name in spec}
        if "direction" in spec:
            params["quarter"], params["direction"] = rng.choice((2, 3, 4)), rng.choice(CHOICES["direction"])
        elif kind == "per_dept_avg_sales":
            params["quarter"] = rng.choice((1, 2, 3, 4))
        return {"task_type": kind, "task_params": params}

    def hints(self, task: TaskSpec) -> Hints:
        kind, output = task.check["task_type"], task.check["output_file"]
        growth = kind.endswith("qoq_count")
        return (
            "The answer is a sum over order lines: a salesperson's (or a department's) total for a quarter is "
            "the sum of the amounts of their orders in that quarter's file of each department. Nothing needs "
            "guessing, but every order line counts.",
            f"A Sales colleague points to the sales handbook, `CloudDisk:sales/{MANUAL}`; it has to be in your "
            f"workspace, and so does `{output}`. The CSVs in `CloudDisk:sales/` are named by department and "
            "quarter: you need the quarter the task names" + (" and the one before it" if growth else "")
            + ", for the departments concerned.",
            f"send_message a Sales colleague about the sales data; download_file `sales/{MANUAL}`; open_folder "
            "`sales/` and download_file each CSV you need; with a Python script add up the amount column by "
            f"employee_id (keeping name and department); then {STEPS[kind]}; round money to two decimals and "
            f"write `{output}` shaped exactly like the task's example; done.")

    def evaluate(self, task: TaskSpec, outcome: Outcome) -> Score:
        check, notes = task.check, list[str]()
        manual = common.find(outcome.workspace, MANUAL)
        common.noted(manual is not None, f"Download `{MANUAL}` from the cloud disk.", notes)
        output = common.find(outcome.workspace, check["output_file"])
        common.noted(output is not None, f"Write the result to `{check['output_file']}` in your workspace.", notes)
        # Without an answer file every later checkpoint fails, with no note of its own (as the reference).
        answer = common.read_json(output) if output else None
        later = CHECKS[check["task_type"]](answer, check, notes if output else [])
        basics = manual is not None and output is not None
        return Score(common.weighted_score(basics + sum(later), check["checkpoints"], basics),
                     float(check["checkpoints"]), tuple(notes))


def _aggregate(rows: list[dict[str, Any]]) -> tuple[People, dict[str, Any]]:
    """A quarter's totals by person (unrounded) and by department (rounded, with the head count and average)."""
    people: dict[str, dict[str, Any]] = {}
    teams: dict[str, dict[str, Any]] = {}
    for row in rows:
        person = people.setdefault(row["employee_id"], {"employee_id": row["employee_id"], "name": row["name"],
                                                        "department": row["department"], "total_sales": 0.0})
        person["total_sales"] += row["amount"]
        team = teams.setdefault(row["department"], {"ids": set(), "total": 0.0})
        team["ids"].add(row["employee_id"])
        team["total"] += row["amount"]
    by_team = {}
    for name, team in teams.items():
        total = round(team["total"], 2)
        by_team[name] = {"department": name, "employees": len(team["ids"]), "total_sales": total,
                         "avg_sales_per_person": round(total / len(team["ids"]), 2)}
    return list(people.values()), by_team


def _csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=["date", "employee_id", "name", "department", "amount"])
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _description(params: dict[str, Any], sample: str, output: str, objective: str, example: str) -> str:
    who = f"department `{params['department']}`" if "department" in params else (
        f"departments `{', '.join(params['departments'])}`" if "departments" in params else "all sales departments")
    return (f"Mentor: please analyse last year's Q{params['quarter']} sales for {who}.\n\n"
            f"Resources:\n- Data: CSVs for every sales department and every quarter are in `CloudDisk://sales/`, "
            f"for example `CloudDisk://sales/{sample}`.\n- General handbook: `CloudDisk://manuals_for_intern.md`.\n"
            f"- Sales handbook: `CloudDisk://sales/{MANUAL}`.\n\n"
            f"Objective:\n- {objective}\n\n"
            f"Required output:\n- A JSON file `{output}` in the root of your workspace with your result, shaped like "
            f"this example:\n```json\n{example}\n```\n\n"
            f"How to go about it:\n- Ask the colleagues concerned for the data you need.\n"
            f"- Do not make data up; when unsure, ask and follow the handbooks.\n")


def _same(model: Any, expected: People) -> bool:
    """The reference's comparison: the same employees (objects other than records ignored) with totals within the
    tolerance, in any order."""
    if not isinstance(model, list):
        return False
    mine = sorted((x for x in model if isinstance(x, dict)), key=lambda x: str(x.get("employee_id", "")))
    if len(mine) != len(expected):
        return False
    for got, want in zip(mine, sorted(expected, key=lambda x: str(x["employee_id"]))):
        total = common.number(got.get("total_sales"))
        if got.get("employee_id") != want["employee_id"] or total is None or abs(total - want["total_sales"]) \
                > TOLERANCE:
            return False
    return True


def _misshapen(shape: str, notes: list[str], checkpoints: int = 2) -> list[bool]:
    notes.append(f"Give the result as {shape}.")
    return [False] * checkpoints


def _people(answer: Any, check: Any, notes: list[str]) -> list[bool]:
    """top_sales_employee, cross_depts_extreme_employee: the shape (a list of objects; one object, or an object
    of them, is taken as such a list), the employees from the departments asked, the answer."""
    if isinstance(answer, dict):
        answer = [answer] if check["task_type"] == "top_sales_employee" else list(answer.values())
    if not (isinstance(answer, list) and all(isinstance(x, dict) for x in answer)):
        return _misshapen("a JSON list of employee objects", notes, 3)
    valid = common.noted(all(x.get("employee_id") in check["valid_ids"] for x in answer),
                         "Name only employees of the departments asked about.", notes)
    return [True, valid, common.noted(_same(answer, check["expected"]),
                                      "Name the right employee(s) with their total sales.", notes)]


def _per_team(answer: Any, check: Any, notes: list[str]) -> list[bool]:
    """per_dept_extreme_employee, per_dept_top_n: an object of employee lists by department (for the extreme, one
    object stands for a list of it)."""
    if not isinstance(answer, dict):
        return _misshapen("a JSON object mapping each department to its list of employees", notes)
    right = True
    for team, expected in check["expected"].items():
        given = answer.get(team, [])
        given = [given] if isinstance(given, dict) and check["task_type"] == "per_dept_extreme_employee" else given
        right &= common.noted(_same(given, expected), f"Give the right employees for department {team}.", notes)
    return [True, right]


def _averages(answer: Any, check: Any, notes: list[str]) -> list[bool]:
    if not isinstance(answer, dict):
        return _misshapen("a JSON object mapping each department to its average sales", notes)
    values = {team: common.number(answer.get(team)) for team in check["expected"]}
    wrong = [team for team, value in values.items()
             if value is None or abs(value - check["expected"][team]) >= TOLERANCE]
    notes += [f"Give department {team} with its right average sales." for team in wrong]
    return [True, not wrong]


def _statistics(answer: Any, check: Any, notes: list[str]) -> list[bool]:
    keys = ("employees", "total_sales", "avg_sales_per_person")
    if not (isinstance(answer, dict) and all(k in answer for k in keys)):
        return _misshapen(f"a JSON object with the keys {', '.join(keys)}", notes)
    values, want = {key: common.number(answer[key]) for key in keys}, check["expected"]
    wrong = [key for key, value in values.items() if value is None or (
        value != want[key] if key == "employees" else abs(value - want[key]) > TOLERANCE)]
    notes += [f"Compute '{key}' correctly." for key in wrong]
    return [True, not wrong]


def _ranking(answer: Any, check: Any, notes: list[str]) -> list[bool]:
    """cross_depts_top_n: a list (an object's values taken as one)."""
    answer = list(answer.values()) if isinstance(answer, dict) else answer
    if not isinstance(answer, list):
        return _misshapen("a JSON list of employee objects", notes)
    return [True, common.noted(_same(answer, check["expected"]), "Give the right overall top employees.", notes)]


def _count(answer: Any, check: Any, notes: list[str]) -> list[bool]:
    count = answer.get("count") if isinstance(answer, dict) else None
    if count is None:
        return _misshapen("a JSON object with the key 'count'", notes)
    return [True, common.noted(not isinstance(count, bool) and count == check["expected"], "Give the right count.",
                               notes)]


CHECKS: dict[str, Callable[[Any, Any, list[str]], list[bool]]] = {
    "top_sales_employee": _people, "cross_depts_extreme_employee": _people, "sales_statistics": _statistics,
    "per_dept_extreme_employee": _per_team, "per_dept_top_n": _per_team, "per_dept_avg_sales": _averages,
    "cross_depts_top_n": _ranking, "dept_person_qoq_count": _count, "all_depts_qoq_count": _count}

FAMILY = SalesAnalysis()
