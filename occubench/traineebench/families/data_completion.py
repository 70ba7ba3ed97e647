"""Data Completion: fill the blank cells of one column of a CSV on the cloud disk, each derivable from the other
columns by a rule in the handbook (a sum, a balance, a growth rate, a rolling mean; for two task types a rate table
a colleague points to).

Scored as the reference: four checkpoints of 4 points, the first (the handbook downloaded and the completed file
written) 1.2, the others (the right colleague asked where a table is needed, no other cell changed, every blank
within 0.1 of the truth) 0.9333 each. With no completed file, the handbook alone, out of 5."""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from occubench.errors import AgentOutputError, ConfigError
from occubench.traineebench.families import _common as common
from occubench.traineebench.family import Day, Hints, Outcome, Score, TaskSpec

MANUAL = "manuals_for_data_completion.md"
TEMPLATES = "schemas/tasks/data_completion/templates/"
#: name → (share of blank cells, length of a run of blanks, rows)
DIFFICULTIES = {"very_easy": (0.05, 0, 30), "easy": (0.08, 1, 50), "medium": (0.15, 3, 80), "hard": (0.25, 5, 120),
                "very_hard": (0.35, 7, 200)}
#: More rows than any difficulty has, and still a small file.
MAX_ROWS = 10_000
TOLERANCE = 0.1

_HANDBOOK = """# How to complete missing data

Fill in only the column the task is about; leave every other cell as it is.

## Sales
- Quarter total: `quarter_total = m1 + m2 + m3`; any one term follows from the others.
- Growth over the previous quarter: `qoq = (current_quarter_total - previous_quarter_total) / \
previous_quarter_total`; any term follows from the others. A first quarter has no growth value: leave it empty.

## Transactions
- Fee: `fee = amount * rate`, the rate depending on the transaction's `category` (find the rates yourself).
- Total: `total = item_a + item_b + item_c`; any term follows from the others.

## Inventory
- Ending stock: `ending = begin + inbound - outbound - shrinkage`; any term follows from the others.
- Daily stock: fill a missing `stock_level` by linear interpolation between the nearest known days before and after.

## Finance
- Balance: `balance = detail1 + detail2 + detail3`; any term follows from the others.
- Depreciation (straight line): `monthly_dep = (cost - salvage) / life_months`; any term follows from the others.

## Logistics
- Arrival: `eta_hours = distance_km / speed_kmh + handling_h`, the carrier's speed and handling time to be found.
- Transit: `total_time = seg1 + seg2 + seg3`; any term follows from the others.

## Web
- `rolling_7d` is the mean of `metric` over the last seven days (fewer at the start).
- Funnel: `clicks = impressions * ctr`; any term follows from the others.
"""

Rows = list[list[Any]]
Tables = dict[str, dict[str, list[float]]]


def _r(value: float, digits: int = 2) -> float:
    return round(value, digits)


def _dated(start: datetime, days_back: int) -> str:
    return (start - timedelta(days=days_back)).strftime("%Y-%m-%d")


def _summed(rng: random.Random, *ranges: tuple[float, float]) -> list[float]:
    """A term drawn from each range, then their sum."""
    terms = [_r(rng.uniform(low, high)) for low, high in ranges]
    return [*terms, _r(sum(terms))]


def _quarter_from_months(rng: random.Random, n: int, start: datetime, tables: Tables) -> Rows:
    return [[entity, quarter, *_summed(rng, *[(1000, 10000)] * 3)] for entity in range(1, n + 1)
            for quarter in (1, 2, 3, 4)]


def _qoq(rng: random.Random, n: int, start: datetime, tables: Tables) -> Rows:
    rows: Rows = []
    for entity in range(1, n + 1):
        totals = [_r(10000 + 2000 * q + rng.uniform(-500, 500)) for q in (1, 2, 3, 4)]
        rows += [[entity, q + 1, total, "" if q == 0 else _r((total - totals[q - 1]) / totals[q - 1], 6)]
                 for q, total in enumerate(totals)]
    return rows


def _tax_fee(rng: random.Random, n: int, start: datetime, tables: Tables) -> Rows:
    rates = tables["rates.csv"]

    def row(entity: int) -> list[Any]:
        when, category = _dated(start, rng.randint(0, 365)), rng.choice(sorted(rates))
        amount = _r(rng.uniform(100, 5000))
        return [entity, when, category, amount, _r(amount * rates[category][0])]

    return [row(entity) for entity in range(1, n + 1)]


def _total_from_items(rng: random.Random, n: int, start: datetime, tables: Tables) -> Rows:
    return [[entity, _dated(start, rng.randint(0, 365)), *_summed(rng, *[(10, 500)] * 3)]
            for entity in range(1, n + 1)]


def _ending_from_flow(rng: random.Random, n: int, start: datetime, tables: Tables) -> Rows:
    rows = []
    for entity in range(1, n + 1):
        flows = [_r(rng.uniform(100, 300)), _r(rng.uniform(0, 50)), _r(rng.uniform(0, 50)), _r(rng.uniform(0, 5))]
        rows.append([entity, _dated(start, n - entity + 1), *flows, _r(flows[0] + flows[1] - flows[2] - flows[3])])
    return rows


def _daily_levels(rng: random.Random, n: int, start: datetime, tables: Tables) -> Rows:
    # The truth is the drawn level itself, not an interpolation of its neighbours, as in the reference.
    return [[_dated(start, n - i), _r(200 + 10 * rng.uniform(-1, 1) + i * rng.uniform(-2, 2))] for i in range(n)]


def _account_balance(rng: random.Random, n: int, start: datetime, tables: Tables) -> Rows:
    return [[entity, *_summed(rng, (100, 1000), (-200, 800), (-100, 500))] for entity in range(1, n + 1)]


def _depreciation(rng: random.Random, n: int, start: datetime, tables: Tables) -> Rows:
    rows = []
    for entity in range(1, n + 1):
        life, monthly, salvage = rng.choice((12, 24, 36, 48)), _r(rng.uniform(100, 3000)), _r(rng.uniform(500, 3000))
        rows.append([entity, _r(monthly * life + salvage), salvage, life, monthly])  # the cost makes every term exact
    return rows


def _eta(rng: random.Random, n: int, start: datetime, tables: Tables) -> Rows:
    carriers = tables["carrier_sla.csv"]
    rows = []
    for shipment in range(1, n + 1):
        distance, carrier = _r(rng.uniform(50, 800)), rng.choice(sorted(carriers))
        speed, handling = carriers[carrier]
        rows.append([shipment, distance, carrier, _r(distance / speed + handling)])
    return rows


def _segments(rng: random.Random, n: int, start: datetime, tables: Tables) -> Rows:
    return [[job, *_summed(rng, *[(0.5, 3.0)] * 3)] for job in range(1, n + 1)]


def _rolling(rng: random.Random, n: int, start: datetime, tables: Tables) -> Rows:
    values = [_r(100 + 10 * rng.uniform(-1, 1) + i * rng.uniform(-0.5, 0.5)) for i in range(n)]
    window = [values[max(0, i - 6): i + 1] for i in range(n)]
    return [[_dated(start, n - i), values[i], _r(sum(window[i]) / len(window[i]), 4)] for i in range(n)]


def _funnel(rng: random.Random, n: int, start: datetime, tables: Tables) -> Rows:
    rows = []
    for entity in range(1, n + 1):
        impressions, ctr = rng.randint(1000, 10000), _r(rng.uniform(0.01, 0.2), 4)
        rows.append([entity, impressions, ctr, _r(impressions * ctr)])
    return rows


Generator = Callable[[random.Random, int, datetime, Tables], Rows]
#: (domain, task type) → the data file's name, its header, the columns one of which is drawn to be blanked, what
#: draws its rows, and its rule as the hints put it (the handbook's formula, worded for solving one missing term).
KINDS: dict[tuple[str, str], tuple[str, str, str, Generator, str]] = {
    ("sales", "quarter_from_months"): ("sales_quarter_from_months", "entity quarter m1 m2 m3 quarter_total",
                                       "m1 m2 m3 quarter_total", _quarter_from_months,
                                       "a quarter's total is its three months added up"),
    ("sales", "qoq_rate"): ("sales_qoq", "entity quarter quarter_total qoq", "qoq quarter_total", _qoq,
                            "growth is this quarter's total less the previous quarter's, divided by the previous "
                            "quarter's, within one entity; a first quarter has no growth and stays empty"),
    ("transactions", "tax_fee"): ("transactions_tax_fee", "entity date category amount fee", "amount fee", _tax_fee,
                                  "the fee is the amount times the rate of the row's category"),
    ("transactions", "total_from_items"): ("transactions_total_from_items", "entity date item_a item_b item_c total",
                                           "item_a item_b item_c total", _total_from_items,
                                           "the total is the three items added up"),
    ("inventory", "ending_from_flow"): ("inventory_ending_from_flow",
                                        "entity day begin inbound outbound shrinkage ending",
                                        "begin inbound outbound shrinkage ending", _ending_from_flow,
                                        "ending stock is the beginning plus inbound, less outbound and shrinkage"),
    ("inventory", "daily_interpolation"): ("inventory_daily_interpolation", "day stock_level", "stock_level",
                                           _daily_levels, "a missing day's level lies on the straight line between "
                                           "the nearest known days before and after it"),
    ("finance", "account_balance_from_details"): ("finance_account_balance", "entity detail1 detail2 detail3 balance",
                                                  "detail1 detail2 detail3 balance", _account_balance,
                                                  "the balance is the three details added up"),
    ("finance", "depreciation_straight_line"): ("finance_depreciation", "entity cost salvage life_months monthly_dep",
                                                "monthly_dep salvage cost life_months", _depreciation,
                                                "the monthly depreciation is the cost less the salvage value, "
                                                "divided by the life in months"),
    ("logistics", "eta_distance_sla"): ("logistics_eta", "shipment distance_km carrier eta_hours",
                                        "eta_hours distance_km", _eta, "the arrival time in hours is the distance "
                                        "divided by the carrier's speed, plus the carrier's handling time"),
    ("logistics", "segment_time_sum"): ("logistics_segment_sum", "job seg1 seg2 seg3 total_time",
                                        "seg1 seg2 seg3 total_time", _segments,
                                        "the total time is the three segments added up"),
    ("web", "rolling_avg"): ("web_rolling", "day metric rolling_7d", "rolling_7d", _rolling,
                             "the rolling value is the mean of the metric over the last seven days, fewer at the "
                             "start"),
    ("web", "funnel"): ("web_funnel", "entity impressions ctr clicks", "impressions ctr clicks", _funnel,
                        "clicks are impressions times the click-through rate"),
}
#: The two task types whose rule needs a table: the reference template it is copied from, the name it gets on the
#: cloud disk, its columns, and the department that points to it.
TABLES = {("transactions", "tax_fee"): ("transactions_tax_fee_rates.csv", "rates.csv", ("category", "rate"),
                                        "Finance"),
          ("logistics", "eta_distance_sla"): ("logistics_eta_sla.csv", "carrier_sla.csv",
                                               ("carrier", "speed_kmh", "handling_h"), "Sales_1")}


def _blanks(count: int, share: float, run: int, rng: random.Random) -> list[int]:
    """Which of ``count`` rows lose their value: at least one and ``share`` of them, in runs of ``run`` rows."""
    wanted, chosen = max(1, int(count * share)), set[int]()
    while len(chosen) < min(wanted, count):
        first = rng.randrange(count)
        chosen.update(range(first, min(count, first + max(run, 1))))
    return sorted(chosen)


def _table(day: Day, template: str, columns: tuple[str, ...]) -> tuple[bytes, dict[str, list[float]]]:
    """A reference table (a key column, then numbers, all positive) as its bytes and by its key; a ConfigError
    naming the file and line for anything else."""
    content = common.reference_bytes(day, TEMPLATES + template)
    where = day.reference / TEMPLATES / template
    try:
        lines = list(csv.reader(io.StringIO(content.decode("utf-8"))))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ConfigError(f"{where}: not a CSV table ({exc})") from None
    if not lines or tuple(lines[0]) != columns:
        raise ConfigError(f"{where}: line 1 must be the header {','.join(columns)}")
    table = {}
    for number, line in enumerate(lines[1:], start=2):
        try:
            values = [float(v) for v in line[1:]]
        except ValueError:
            values = []
        if len(values) != len(columns) - 1 or not all(0 < v < float("inf") for v in values):
            raise ConfigError(f"{where}: line {number} must be a name and {len(columns) - 1} positive number(s)")
        table[line[0]] = values
    if not table:
        raise ConfigError(f"{where}: the table has no rows")
    return content, table


class DataCompletion:
    name = "Data Completion"
    #: Easy: the handbook states the rule, the gaps are in one file, and at most one department is asked.
    difficulty = "easy"

    def generate(self, day: Day, **given: Any) -> TaskSpec:
        args = common.arguments(self.name, given, {
            "domain": (str, common.REQUIRED), "task_type": (str, common.REQUIRED), "difficulty": (str, "medium"),
            "rows": ((int, type(None)), None)})
        domain, kind = args["domain"], args["task_type"]
        common.one_of(self.name, "domain", domain, sorted({d for d, _ in KINDS}))
        common.one_of(self.name, "task_type", kind, [t for d, t in KINDS if d == domain])
        common.one_of(self.name, "difficulty", args["difficulty"], list(DIFFICULTIES))
        share, run, rows = DIFFICULTIES[args["difficulty"]]
        if args["rows"] is not None:
            common.at_least(self.name, "rows", args["rows"], 1)
            if args["rows"] > MAX_ROWS:
                raise ConfigError(f"{self.name}: argument rows may be {MAX_ROWS} at most, not {args['rows']}")
            rows = args["rows"]
        folder = day.cloud_disk / "data_completion"
        common.place(folder / MANUAL, _HANDBOOK)
        tables: Tables = {}
        ask = None
        if (domain, kind) in TABLES:
            template, name, columns, department = TABLES[domain, kind]
            content, tables[name] = _table(day, template, columns)
            common.place(folder / domain / name, content)
            ask = self._add_table_rules(day, department, f"`{name}`", f"`CloudDisk://data_completion/{domain}/`")
        for colleague in day.company.employees:
            day.company.add_rule(colleague, "If asked how to complete missing data, reply only: 'Please refer to the "
                                            f"handbook at CloudDisk://data_completion/{MANUAL}'.")
        stem, fields, targets, draw, _ = KINDS[domain, kind]
        header = fields.split()
        cells = [[str(v) for v in row] for row in draw(day.rng, rows, day.start, tables)]
        target = day.rng.choice(targets.split())
        column = header.index(target)
        truth = [row[column] for row in cells]
        eligible = [i for i, value in enumerate(truth) if value]  # a first quarter's growth is empty from the start
        for i in _blanks(len(eligible), share, run, day.rng):
            cells[eligible[i]][column] = ""
        # Every empty cell of the column is checked, by its line's index (the header's is 0): a blanked one against
        # its value, one empty from the start against staying empty.
        expected = {str(i + 1): value for i, value in enumerate(truth) if not cells[i][column]}
        original = [header, *cells]
        text = io.StringIO()
        csv.writer(text).writerows(original)
        common.place(folder / domain / f"{stem}.csv", text.getvalue())
        output = f"data_completion_{stem}.csv"
        return TaskSpec(self.name, _description(domain, output, ask["department"] if ask else None),
                        common.deadline(day),
                        {"target_column": target, "output_file": output, "original": original,
                         "expected": expected, "ask": ask})

    def _add_table_rules(self, day: Day, department: str, name: str, folder: str) -> dict[str, Any]:
        """The table's department told to point to it; who they are and what they must have said, for the check."""
        staff = day.company.in_department(department)
        for colleague in staff:
            day.company.add_rule(colleague, "If asked about the parameters of the data completion task, reply only: "
                                            f"'Please check the {name} file in the {folder} directory.'")
        return {"department": department, "colleagues": [e.name for e in staff], "keyword": name.strip("`")}

    def sample_arguments(self, rng: random.Random) -> dict[str, Any]:
        """A domain, then one of its task types, each drawn evenly, as the reference's sampler draws them."""
        domain = rng.choice(list(dict.fromkeys(d for d, _ in KINDS)))
        return {"domain": domain, "task_type": rng.choice([t for d, t in KINDS if d == domain]),
                "difficulty": rng.choice(list(DIFFICULTIES))}

    def hints(self, task: TaskSpec) -> Hints:
        output, ask = task.check["output_file"], task.check["ask"]
        domain, kind = next(key for key, (stem, *_) in KINDS.items() if output == f"data_completion_{stem}.csv")
        stem, *_, rule = KINDS[domain, kind]
        folder = f"data_completion/{domain}/"
        return (
            "Every missing value follows from the rest of its row (or the days around it) by a rule in the "
            "data-completion handbook: nothing has to be guessed, and nothing but the gaps may change."
            + (" This data set's rule needs parameters that are not in the file." if ask else ""),
            (f"The {ask['department']} department knows where the calculation's parameters are: ask one of them, "
             "then take the table from the folder they name. " if ask else "Nobody needs to be asked. ")
            + f"The handbook is `CloudDisk:data_completion/{MANUAL}` and has to be in your workspace; the data "
              f"file is in `CloudDisk:{folder}`.",
            f"download_file `data_completion/{MANUAL}` and `{folder}{stem}.csv`"
            + (f" (and, once {ask['department']} has named it, the parameter table beside it)" if ask else "")
            + "; find the column with empty cells; apply the handbook's rule, solving for whichever term is "
              f"missing: {rule}; with a Python script fill only those cells, rounded like the column's other "
              "values, keep every other cell, row and the header as they are, and write the whole file to "
              f"`{output}` at the root of the workspace; done.")

    def evaluate(self, task: TaskSpec, outcome: Outcome) -> Score:
        check, notes = task.check, list[str]()
        manual = common.noted((outcome.workspace / MANUAL).is_file(), f"Download `{MANUAL}` from the cloud disk.",
                              notes)
        output = outcome.workspace / check["output_file"]
        if not output.is_file():
            notes.append(f"Put the completed file `{check['output_file']}` in the root of your workspace.")
            return Score(float(manual), 5.0, tuple(notes))  # the reference's score without an output: out of 5
        asked = _asked(check["ask"], outcome, notes)
        try:  # one row more than the original's is still read, to be told apart from a file that is not CSV
            submitted = common.read_rows(output, len(check["original"]) + 1) or []
        except AgentOutputError as exc:  # the agent's failure: 0 for the checks that read the file
            notes.append(f"The completed file cannot be scored as it stands ({exc}).")
            submitted = []
        intact, checkable = _intact(check["original"], submitted, check["target_column"], notes)
        correct = checkable and _correct(check, submitted, notes)
        passed = manual + asked + intact + correct
        return Score(common.weighted_score(passed, 4, manual), 4.0, tuple(notes))


def _description(domain: str, output: str, department: str | None) -> str:
    hint = (f"- Hint: the {department} department can tell you where the parameters of the calculation are.\n"
            if department else "")
    return (f"Mentor: some values are missing from our `{domain}` data; please complete them.\n\n"
            f"Resources:\n- Data folder: `CloudDisk://data_completion/{domain}/`.\n"
            f"- Handbook: `CloudDisk://data_completion/{MANUAL}`.\n\n"
            f"Objective:\n- Find the data file in the data folder and fill in its missing values.\n{hint}"
            f"- Change only the column being completed; keep every other column exactly as it is.\n\n"
            f"Required output:\n- A CSV `{output}` in the root of your workspace, with the same structure and the "
            f"missing cells filled in correctly.\n")


def _asked(ask: dict[str, Any] | None, outcome: Outcome, notes: list[str]) -> bool:
    """Whether the chat with someone of the table's department mentions the table (said by either side, as the
    reference reads the chat); true when the task needs no table."""
    return ask is None or common.noted(
        any(ask["keyword"] in m.text for who in ask["colleagues"] for m in outcome.chat_with(who)),
        f"Ask the {ask['department']} department for the parameters: they are in `{ask['keyword']}`.", notes)


def _intact(original: list[list[str]], submitted: list[list[str]], target: str,
            notes: list[str]) -> tuple[bool, bool]:
    """Whether every cell outside the target column is as it was, and whether the values can be checked (the
    header and the row count kept)."""
    if not submitted:
        notes.append("The completed file is empty or cannot be read as CSV.")
        return False, False
    if submitted[0] != original[0]:
        notes.append("Do not change the header.")
        return False, False
    if len(submitted) != len(original):
        notes.append("Do not add or remove rows.")
        return False, False
    column = original[0].index(target)
    for line, (before, after) in enumerate(zip(original, submitted)):
        if len(before) != len(after):
            notes.append(f"Do not change how many columns line {line + 1} has.")
            return False, True
        changed = next((c for c, cell in enumerate(before) if c != column and after[c] != cell), None)
        if changed is not None:
            notes.append(f"Change only '{target}' (line {line + 1}, column '{original[0][changed]}' changed).")
            return False, True
    return True, True


def _correct(check: Any, submitted: list[list[str]], notes: list[str]) -> bool:
    column = check["original"][0].index(check["target_column"])
    for line, truth in check["expected"].items():
        row = submitted[int(line)]
        if not (column < len(row) and _close(row[column], truth)):
            notes.append(f"Compute '{check['target_column']}' correctly (line {int(line) + 1}, for one).")
            return False
    return True


def _close(value: str, truth: str) -> bool:
    """Within the tolerance as numbers, else the same text (a first quarter's growth is to be left empty)."""
    try:
        return abs(float(value) - float(truth)) <= TOLERANCE
    except ValueError:
        return value == truth


FAMILY = DataCompletion()
