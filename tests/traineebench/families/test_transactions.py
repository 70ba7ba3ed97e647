"""Transaction Data Review: a generated review day, scored in the reference's points (each checkpoint manual 0.5,
every abnormal supplier named 2, of 3) for the right work, each part alone, wrong answers and hostile files."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from occubench.errors import ConfigError
from occubench.traineebench.families.transactions import FAMILY, MANUAL, REPORT, TEMPLATES
from occubench.traineebench.family import Day, Outcome, TaskSpec
from tests.traineebench.families.outputs import assert_seeded, hostile, reread

ARGS = {"num_normal_transactions": 3, "num_abnormal_transactions": 2}


def stand_in(day: Day) -> None:
    """Stand-ins for the reference's manual and its two forms (a stray brace included: a template is data)."""
    folder = day.reference / TEMPLATES
    folder.mkdir(parents=True)
    (folder / MANUAL).write_text("Stand-in manual: an abnormal supplier has no rating.\n")
    (folder / "invoice_template.txt").write_text("INVOICE {invoice_number} of {invoice_issue_date}\n"
                                                 "FROM {supplier_company_name} {unknown} {\nAMOUNT {amount}\n")
    (folder / "approval_template.txt").write_text("APPROVAL {approval_form_id} for {supplier_company_name}\n"
                                                  "RATING {supplier_rating}\nAPPROVED BY {approvor_name}\n")


def generated(day: Day, **args: int) -> TaskSpec:
    stand_in(day)
    return FAMILY.generate(day, **(args or ARGS))


def suppliers(day: Day) -> dict[str, tuple[str, list[float]]]:
    """Each supplier's rating and payments, read from the generated table."""
    found: dict[str, tuple[str, list[float]]] = {}
    with sqlite3.connect(day.workspace / "transactions.db") as db:
        for name, rating, amount in db.execute("SELECT supplier_name, supplier_rating, transaction_amount "
                                               "FROM transactions ORDER BY id"):
            found.setdefault(name, (rating, []))[1].append(amount)
    db.close()
    return found


def work(day: Day, intern: bool = True, manual: bool = True, report: list[str] | None = None) -> Outcome:
    """An outcome: the two manuals downloaded or not, and a report naming ``report`` (the manual's rule, no rating
    means abnormal, applied to the table when None) or none at all (an empty list here means no file)."""
    if intern:
        (day.workspace / "manuals_for_intern.md").write_text("the company's manual for interns\n")
    if manual:
        shutil.copy(day.cloud_disk / "financial" / MANUAL, day.workspace / MANUAL)
    if report is None:
        report = [name for name, (rating, _) in suppliers(day).items() if not rating]
    if report:
        (day.workspace / REPORT).write_text(f'{{"abnormal_suppliers": {report!r}}}'.replace("'", '"'))
    return Outcome(day.workspace)


def test_the_day_holds_normal_and_abnormal_suppliers_with_their_forms(day: Day) -> None:
    task = generated(day)
    found = suppliers(day)
    abnormal = {name for name, (rating, _) in found.items() if not rating}
    assert len(found) == 5 and abnormal == set(task.check["abnormal_suppliers"]) and len(abnormal) == 2
    for name, (rating, amounts) in found.items():
        if name in abnormal:  # three a month for six months, just under the approval limit
            assert len(amounts) == 18 and all(9_500 <= a <= 9_900 for a in amounts)
        else:  # monthly for about two years
            assert rating in {"A", "B"} and len(amounts) > 24
    rows = sum(len(amounts) for _, amounts in found.values())
    invoices = list((day.cloud_disk / "financial/invoices").iterdir())
    approvals = list((day.cloud_disk / "financial/approvals").iterdir())
    assert len(invoices) == len(approvals) == rows
    assert all("{unknown} {" in p.read_text() for p in invoices)
    assert (day.cloud_disk / "financial" / MANUAL).read_text().startswith("Stand-in manual")
    finance = {e.name for e in day.company.in_department("Finance")}
    assert set(day.company.rules) == finance
    assert all(any(f"financial/{MANUAL}" in rule for rule in day.company.rules[who]) for who in finance)
    assert REPORT in task.description and "transactions.db" in task.description


def test_the_right_work_earns_full_points(day: Day) -> None:
    task = generated(day)
    outcome = work(day)
    score = FAMILY.evaluate(task, outcome)
    assert (score.points, score.full, score.notes) == (3.0, 3.0, ())
    assert FAMILY.evaluate(reread(task), outcome) == score


@pytest.mark.parametrize(("intern", "manual", "answer", "points"), [(True, False, False, 0.5),
                                                                      (False, True, False, 0.5),
                                                                      (False, False, True, 2.0)])
def test_each_checkpoint_alone_earns_its_points(day: Day, intern: bool, manual: bool, answer: bool,
                                                points: float) -> None:
    task = generated(day)
    score = FAMILY.evaluate(task, work(day, intern, manual, None if answer else []))
    assert (score.points, score.full) == (points, 3.0) and score.notes


def test_wrong_answers_earn_nothing_for_the_answer_and_a_superset_earns_it(day: Day) -> None:
    task = generated(day)
    normal = [name for name, (rating, _) in suppliers(day).items() if rating]
    abnormal = task.check["abnormal_suppliers"]
    assert FAMILY.evaluate(task, work(day, report=normal[:1])).points == 1.0
    assert FAMILY.evaluate(task, work(day, report=abnormal[:1])).points == 1.0
    # The reference asks only that every abnormal supplier be named: naming every supplier earns the answer too.
    assert FAMILY.evaluate(task, work(day, report=normal + abnormal)).points == 3.0


def test_with_nothing_abnormal_the_answer_cannot_score(day: Day) -> None:
    task = generated(day, num_normal_transactions=2, num_abnormal_transactions=0)
    (day.workspace / REPORT).write_text('{"abnormal_suppliers": []}')
    score = FAMILY.evaluate(task, work(day, report=[]))
    assert task.check["abnormal_suppliers"] == [] and (score.points, score.full) == (1.0, 3.0)


@pytest.mark.parametrize(("args", "named"), [
    ({"num_normal_transactions": 3}, "num_abnormal_transactions"),
    ({**ARGS, "seed": 3}, "seed"),
    ({**ARGS, "num_normal_transactions": "3"}, "num_normal_transactions"),
    ({**ARGS, "num_abnormal_transactions": True}, "num_abnormal_transactions"),
    ({**ARGS, "num_abnormal_transactions": 1.0}, "num_abnormal_transactions"),
    ({**ARGS, "num_normal_transactions": -1}, "num_normal_transactions"),
    ({**ARGS, "num_normal_transactions": 10**9}, "num_normal_transactions"),
])
def test_bad_arguments_are_config_errors_naming_them(day: Day, args: dict[str, object], named: str) -> None:
    stand_in(day)
    with pytest.raises(ConfigError, match=named):
        FAMILY.generate(day, **args)


def test_a_missing_reference_file_is_a_config_error_naming_it(day: Day) -> None:
    with pytest.raises(ConfigError, match="invoice_template.txt"):
        FAMILY.generate(day, **ARGS)


def test_the_same_seed_gives_the_same_day(tmp_path: Path) -> None:
    assert_seeded(tmp_path, generated)


@pytest.mark.parametrize("shape", sorted(hostile(b"")))
def test_a_hostile_report_scores_without_the_answer(day: Day, shape: str) -> None:
    task = generated(day)
    right = ('{"abnormal_suppliers": ["' + '", "'.join(task.check["abnormal_suppliers"]) + '"]}').encode()
    hostile(right)[shape](day.workspace / REPORT)
    score = FAMILY.evaluate(task, work(day, report=[]))
    assert (score.points, score.full) == (1.0, 3.0)


@pytest.mark.parametrize("report", ['{"abnormal_suppliers": NaN}', '{"abnormal_suppliers": 5}', "[]", "5",
                                    '{"abnormal_suppliers": [null, {"a": 1}, NaN]}', '"abnormal_suppliers"',
                                    '{"abnormal_suppliers": {"x": 1}}'])
def test_wrong_types_in_the_report_score_without_the_answer(day: Day, report: str) -> None:
    task = generated(day)
    (day.workspace / REPORT).write_text(report)
    assert FAMILY.evaluate(task, work(day, report=[])).points == 1.0
