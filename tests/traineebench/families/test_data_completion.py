"""Data Completion: every domain and task type generated and completed by the handbook's rules, scored in the
reference's points (four checkpoints of 4: 1.2 for the handbook and the file, 2.8 / 3 for each of the right
colleague asked, no other cell changed, every blank right; the handbook alone out of 5 when there is no file)."""

from __future__ import annotations

import csv
import io
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from occubench.errors import ConfigError
from occubench.traineebench.families.data_completion import FAMILY, KINDS, MANUAL, TEMPLATES
from occubench.traineebench.family import Day, Message, Outcome, TaskSpec
from tests.traineebench.conftest import make_day
from tests.traineebench.families.outputs import assert_seeded, hostile, reread

REST = 2.8 / 3  # each checkpoint after the first
#: Each balance's terms with their signs, the last being the balance itself.
BALANCES = {"sales_quarter_from_months": {"m1": 1, "m2": 1, "m3": 1, "quarter_total": -1},
            "transactions_total_from_items": {"item_a": 1, "item_b": 1, "item_c": 1, "total": -1},
            "inventory_ending_from_flow": {"begin": 1, "inbound": 1, "outbound": -1, "shrinkage": -1, "ending": -1},
            "finance_account_balance": {"detail1": 1, "detail2": 1, "detail3": 1, "balance": -1},
            "logistics_segment_sum": {"seg1": 1, "seg2": 1, "seg3": 1, "total_time": -1}}
RATES = {"A": 0.06, "B": 0.09, "C": 0.12}
#: Slow carriers, so that a distance recovered from an ETA given to the hundredth of an hour is within 0.1 km (at
#: the reference's 50 to 70 km/h it may not be: its truth, not a rule one can follow).
CARRIERS = {"X": (12.0, 1.0), "Y": (15.0, 0.5)}


def stand_in(day: Day, rates: str = "") -> None:
    folder = day.reference / TEMPLATES
    folder.mkdir(parents=True)
    (folder / "transactions_tax_fee_rates.csv").write_text(
        rates or "category,rate\n" + "".join(f"{k},{v}\n" for k, v in RATES.items()))
    (folder / "logistics_eta_sla.csv").write_text(
        "carrier,speed_kmh,handling_h\n" + "".join(f"{k},{s},{h}\n" for k, (s, h) in CARRIERS.items()))


def generated(day: Day, domain: str = "transactions", task_type: str = "tax_fee", **args: object) -> TaskSpec:
    stand_in(day)
    return FAMILY.generate(day, domain=domain, task_type=task_type, **args)


def data_file(day: Day, task: TaskSpec) -> Path:
    return next((day.cloud_disk / "data_completion").glob(f"*/{task.check['output_file'][16:]}"))


def _balance(row: dict[str, float], target: str, signs: dict[str, int]) -> float:
    return -sum(sign * row[k] for k, sign in signs.items() if k != target) / signs[target]


def _by_row(stem: str, row: dict[str, str], target: str) -> float:
    """The blank ``target`` of one row by the handbook's rule for ``stem``, from the row's other cells."""
    known = {k: float(v) for k, v in row.items() if k != target and v and k not in ("date", "day", "category",
                                                                                  "carrier")}
    if stem in BALANCES:
        return _balance(known, target, BALANCES[stem])
    if stem == "transactions_tax_fee":
        rate = RATES[row["category"]]
        return known["amount"] * rate if target == "fee" else known["fee"] / rate
    if stem == "logistics_eta":
        speed, handling = CARRIERS[row["carrier"]]
        return known["distance_km"] / speed + handling if target == "eta_hours" else \
            (known["eta_hours"] - handling) * speed
    # finance_depreciation: cost = monthly_dep * life_months + salvage; web_funnel: clicks = impressions * ctr.
    rules = {
        "monthly_dep": lambda: (known["cost"] - known["salvage"]) / known["life_months"],
        "life_months": lambda: round((known["cost"] - known["salvage"]) / known["monthly_dep"]),
        "salvage": lambda: known["cost"] - known["monthly_dep"] * known["life_months"],
        "cost": lambda: known["monthly_dep"] * known["life_months"] + known["salvage"],
        "clicks": lambda: known["impressions"] * known["ctr"],
        "ctr": lambda: known["clicks"] / known["impressions"],
        "impressions": lambda: round(known["clicks"] / known["ctr"]),  # impressions are whole
    }
    return rules[target]()


def _rolling(rows: list[dict[str, str]], target: str) -> None:
    metric = [float(r["metric"]) for r in rows]
    for i, r in enumerate(rows):
        window = metric[max(0, i - 6): i + 1]
        r[target] = r[target] or str(sum(window) / len(window))


def _interpolated(rows: list[dict[str, str]], target: str) -> None:
    known = [i for i, r in enumerate(rows) if r[target]]
    for i, r in enumerate(rows):
        if not r[target]:
            ends = [max((k for k in known if k < i), default=None), min((k for k in known if k > i), default=None)]
            found = [k for k in ends if k is not None]  # one side only at either end of the days
            a, b = found[0], found[-1]
            va, vb = float(rows[a][target]), float(rows[b][target])
            r[target] = str(va if a == b else va + (vb - va) * (i - a) / (b - a))


def _growth(rows: list[dict[str, str]], target: str) -> None:
    """Entity by entity (four quarters each): a growth from two totals, a total from a neighbour and a growth."""
    for start in range(0, len(rows), 4):
        quarters = rows[start:start + 4]
        for _ in range(4):
            for q, r in enumerate(quarters):
                if r[target] or (target == "qoq" and q == 0):
                    continue
                if target == "qoq":
                    before, now = float(quarters[q - 1]["quarter_total"]), float(r["quarter_total"])
                    r[target] = str((now - before) / before)
                elif q > 0 and quarters[q - 1]["quarter_total"]:
                    r[target] = str(float(quarters[q - 1]["quarter_total"]) * (1 + float(r["qoq"])))
                elif q < 3 and quarters[q + 1]["quarter_total"]:
                    r[target] = str(float(quarters[q + 1]["quarter_total"]) / (1 + float(quarters[q + 1]["qoq"])))


SPANNING = {"web_rolling": _rolling, "inventory_daily_interpolation": _interpolated, "sales_qoq": _growth}


def complete(day: Day, task: TaskSpec, change: float = 0.0) -> str:
    """The data file completed by the handbook's rules (each filled value off by ``change``), as CSV text."""
    stem, target = task.check["output_file"][16:-4], task.check["target_column"]
    rows = list(csv.DictReader(io.StringIO(data_file(day, task).read_text())))
    if stem in SPANNING:  # the types whose rule spans rows
        SPANNING[stem](rows, target)
    else:
        for row in rows:
            row[target] = row[target] or str(_by_row(stem, row, target))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    for number, row in enumerate(rows, start=1):
        if change and str(number) in task.check["expected"] and row[target]:
            row[target] = str(float(row[target]) + change)
        writer.writerow(row)
    return out.getvalue()


def work(day: Day, task: TaskSpec, manual: bool = True, ask: bool = True, output: str | None = None) -> Outcome:
    """An outcome: the handbook downloaded or not, the table's colleague asked or not, and ``output`` (the rules'
    completion when None, no file when empty) written."""
    if manual:
        shutil.copy(day.cloud_disk / "data_completion" / MANUAL, day.workspace / MANUAL)
    messages = []
    if ask and task.check["ask"]:
        who, when = task.check["ask"]["colleagues"][0], datetime(2025, 10, 1, 9)
        messages = [Message("Intern", who, "Where are the parameters for the data completion task?", when),
                    Message(who, "Intern", f"Please check the {task.check['ask']['keyword']} file.", when)]
    text = complete(day, task) if output is None else output
    if text:
        (day.workspace / task.check["output_file"]).write_text(text)
    return Outcome(day.workspace, messages)


@pytest.mark.parametrize(("domain", "task_type"), sorted(k for k in KINDS if k[1] != "daily_interpolation"))
def test_completing_by_the_handbook_earns_full_points(day: Day, domain: str, task_type: str) -> None:
    task = generated(day, domain, task_type)
    assert task.check["expected"]
    outcome = work(day, task)
    score = FAMILY.evaluate(task, outcome)
    assert (score.points, score.full, score.notes) == (4.0, 4.0, ())
    assert FAMILY.evaluate(reread(task), outcome) == score


def test_interpolating_daily_stock_misses_the_reference_truth(day: Day) -> None:
    # The reference checks a blank daily level against the level it drew, which the handbook's interpolation
    # does not recover: all but the values' checkpoint.
    task = generated(day, "inventory", "daily_interpolation")
    score = FAMILY.evaluate(task, work(day, task))
    assert (score.points, score.full) == (round(1.2 + 2 * REST, 6), 4.0) and score.notes


def test_the_day_holds_the_data_the_table_and_the_rules(day: Day) -> None:
    task = generated(day, difficulty="hard")
    folder = day.cloud_disk / "data_completion"
    assert (folder / MANUAL).is_file() and (folder / "transactions/rates.csv").read_text().startswith("category,rate")
    lines = data_file(day, task).read_text().splitlines()
    assert len(lines) == 121 and lines[0] == "entity,date,category,amount,fee"
    assert len(task.check["expected"]) >= 30  # a quarter of 120 rows, in runs of five
    finance = {e.name for e in day.company.in_department("Finance")}
    assert task.check["ask"]["colleagues"] == sorted(finance, key=[e.name for e in day.company.employees].index)
    assert all(any("rates.csv" in r for r in day.company.rules[who]) for who in finance)
    assert all(any(MANUAL in r for r in day.company.rules[e.name]) for e in day.company.employees)
    assert "Finance" in task.description and task.check["output_file"] in task.description


@pytest.mark.parametrize(("manual", "ask", "output", "points"), [
    (False, False, "", (0.0, 5.0)),
    (True, False, "", (1.0, 5.0)),  # the reference's score without a file: the handbook, out of 5
    (True, False, None, (1.2 + 2 * REST, 4.0)),
    (False, True, None, (3 * REST, 4.0)),
    (False, False, None, (2 * REST, 4.0)),
])
def test_each_checkpoint_earns_its_points(day: Day, manual: bool, ask: bool, output: str | None,
                                          points: tuple[float, float]) -> None:
    task = generated(day)
    score = FAMILY.evaluate(task, work(day, task, manual, ask, output))
    assert (score.points, score.full) == (round(points[0], 6), points[1]) and score.notes


def test_changes_beyond_the_blanks_and_wrong_values_cost_their_checkpoints(day: Day) -> None:
    task = generated(day)
    right = complete(day, task)
    header, first, *rest = right.splitlines()
    cells = first.split(",")
    cells[1] = "1999-01-01"  # a date: not the target column
    cases = {"\n".join([header.upper(), first, *rest]): 1.2 + REST,  # the header changed: nothing is checked
             "\n".join([header, *rest]): 1.2 + REST,  # a row dropped
             "\n".join([header, ",".join(cells), *rest]): 1.2 + 2 * REST,  # another cell changed
             complete(day, task, change=0.2): 1.2 + 2 * REST,  # every value just off
             data_file(day, task).read_text(): 1.2 + 2 * REST}  # the blanks left blank
    for text, points in cases.items():
        assert FAMILY.evaluate(task, work(day, task, output=text)).points == round(points, 6)


def test_a_first_quarter_growth_must_stay_empty(day: Day) -> None:
    for seed in range(20):  # a draw whose blanked column is the growth
        day = make_day(day.workspace.parent.parent / f"d{seed}", seed)
        task = generated(day, "sales", "qoq_rate")
        if task.check["target_column"] == "qoq":
            break
    assert task.check["target_column"] == "qoq" and task.check["expected"]["1"] == ""
    lines = complete(day, task).splitlines()
    lines[1] += "0.5"  # the first quarter's empty growth filled in
    assert FAMILY.evaluate(task, work(day, task, output="\n".join(lines))).points == round(1.2 + 2 * REST, 6)


@pytest.mark.parametrize(("args", "named"), [
    ({"task_type": "tax_fee"}, "domain"),
    ({"domain": "transactions"}, "task_type"),
    ({"domain": "weather", "task_type": "tax_fee"}, "domain"),
    ({"domain": "web", "task_type": "tax_fee"}, "task_type"),
    ({"domain": "web", "task_type": "funnel", "difficulty": "extreme"}, "difficulty"),
    ({"domain": "web", "task_type": "funnel", "difficulty": 3}, "difficulty"),
    ({"domain": "web", "task_type": "funnel", "rows": 0}, "rows"),
    ({"domain": "web", "task_type": "funnel", "rows": "80"}, "rows"),
    ({"domain": "web", "task_type": "funnel", "rows": 10**7}, "rows"),
    ({"domain": "web", "task_type": "funnel", "seed": 13}, "seed"),
])
def test_bad_arguments_are_config_errors_naming_them(day: Day, args: dict[str, object], named: str) -> None:
    stand_in(day)
    with pytest.raises(ConfigError, match=named):
        FAMILY.generate(day, **args)


@pytest.mark.parametrize("rates", ["category,rate\nA,cheap\n", "category,rate\nA,-0.1\n", "kind,rate\nA,0.1\n",
                                   "category,rate\n", "category,rate\nA,0.1,9\n"])
def test_a_bad_reference_table_is_a_config_error_naming_it(day: Day, rates: str) -> None:
    stand_in(day, rates)
    with pytest.raises(ConfigError, match="transactions_tax_fee_rates.csv"):
        FAMILY.generate(day, domain="transactions", task_type="tax_fee")


def test_rows_sets_the_size(day: Day) -> None:
    task = generated(day, "web", "funnel", rows=7)
    assert len(task.check["original"]) == 8 and len(task.check["expected"]) >= 1


def test_the_same_seed_gives_the_same_day(tmp_path: Path) -> None:
    assert_seeded(tmp_path, lambda day: generated(day, "logistics", "eta_distance_sla"))


@pytest.mark.parametrize("shape", sorted(hostile(b"")))
def test_a_hostile_output_scores_no_more_than_its_checkpoints(day: Day, shape: str) -> None:
    task = generated(day)
    hostile(complete(day, task).encode())[shape](day.workspace / task.check["output_file"])
    score = FAMILY.evaluate(task, work(day, task, output=""))
    # A file that is not a regular file counts as none (the handbook alone, of 5); any other earns the handbook,
    # the file and the asking, never the values.
    assert (score.points, score.full) in ((1.0, 5.0), (round(1.2 + REST, 6), 4.0))


@pytest.mark.parametrize("values", ["nan", "inf", "-1e999", "", "1,2", '"', "x" * 200_000])
def test_odd_values_in_the_blanks_score_without_the_values(day: Day, values: str) -> None:
    task = generated(day)
    lines = complete(day, task).splitlines()
    column = task.check["original"][0].index(task.check["target_column"])
    for line in task.check["expected"]:
        cells = next(csv.reader([lines[int(line)]]))
        cells[column] = values
        out = io.StringIO()
        csv.writer(out).writerow(cells)
        lines[int(line)] = out.getvalue().strip()
    score = FAMILY.evaluate(task, work(day, task, output="\n".join(lines)))
    assert score.points < score.full == 4.0
