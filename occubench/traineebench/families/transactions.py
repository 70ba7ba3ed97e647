"""Transaction Data Review: name the suppliers whose payments look abnormal in a SQLite table of two years of
transactions, each with its invoice and approval on the cloud disk. Normal suppliers, rated A or B, are paid monthly
a stable or seasonal amount; abnormal ones, unrated, three times a month for the last six months, each just under
the 10,000 approval threshold. Finance colleagues point to the review manual and the invoice folders. Scored as the
reference: each checkpoint manual in the workspace 0.5, every abnormal supplier named in the report 2, of 3."""

from __future__ import annotations

import math
import random
import sqlite3
import string
from datetime import date, timedelta
from typing import Any

from occubench.errors import ConfigError
from occubench.traineebench.families import _common as common
from occubench.traineebench.family import Day, Hints, Outcome, Score, TaskSpec

TEMPLATES = "schemas/tasks/transactions/templates/"
MANUAL = "manuals_for_transactions_data_review.md"
REPORT = "transaction_data_review_report.json"
#: Every payment of an abnormal supplier is under this approval limit, by 1% to 5%.
THRESHOLD = 10_000.0
#: The values the reference's sampler draws each argument from.
SAMPLED = {"num_normal_transactions": (2, 3, 4, 5), "num_abnormal_transactions": (0, 1, 2)}

_PREFIXES = ("Brightline", "Northwind", "Keystone", "Summit", "Bluefield", "Harbor", "Vertex", "Pinecrest",
             "Crescent")
_SUFFIXES = ("Inc.", "LLC", "Corp.", "Partners", "Group", "Systems", "Advisors", "Supply")
#: Supplier names are distinct within a task (the reference may draw one twice); so many can be drawn.
MAX_SUPPLIERS = len(_PREFIXES) * len(_SUFFIXES)
_PRODUCTS = {
    "Software subscriptions": ("Team chat licences", "Accounting software seats", "Cloud storage plan"),
    "IT services": ("Managed helpdesk", "Network monitoring", "Device management contract"),
    "Marketing services": ("Search advertising retainer", "Social media management", "Newsletter production"),
    "Office supplies": ("Paper and stationery", "Printer toner", "Kitchen and cleaning supplies"),
    "Professional services": ("Bookkeeping support", "Payroll processing", "Legal retainer"),
}
_FIRST = ("Ava", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hugo", "Iris", "Jonah")
_LAST = ("Adler", "Brooks", "Castillo", "Dunn", "Ellis", "Fischer", "Grant", "Hayes", "Ito", "Jensen")
_STREETS = ("Main St", "Market St", "Park Ave", "River Rd", "Hill St", "Lake Dr")
_CITIES = (("Denver", "CO"), ("Portland", "OR"), ("Atlanta", "GA"), ("Columbus", "OH"), ("Phoenix", "AZ"))

_SCHEMA = """CREATE TABLE IF NOT EXISTS transactions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    transaction_id TEXT NOT NULL UNIQUE,
    invoice_id TEXT NOT NULL,
    approval_id TEXT NOT NULL,
    supplier_name TEXT NOT NULL,
    supplier_rating TEXT,
    applicant_name TEXT NOT NULL,
    approver_name TEXT NOT NULL,
    transaction_date DATE NOT NULL,
    transaction_amount REAL NOT NULL
)"""

_DESCRIPTION = """Please review our transaction data: it is in `Workspace://transactions.db`, table `transactions`. \
Tips for working here are in `CloudDisk:manuals_for_intern.md`. When your review is done, create \
`{report}` in your workspace naming every supplier whose transactions you found abnormal, in this form:

```json
{{"abnormal_suppliers": ["<supplier name>", "..."]}}
```"""

_ANALYSE = (f"Read the data review manual first, then compare each supplier's attributes and payment pattern (a "
            f"short script helps) to tell the abnormal suppliers from the normal ones, and write them to {REPORT} "
            f"in the required format.")

Payments = list[tuple[date, float]]


def _supplier(rng: random.Random, taken: set[str]) -> dict[str, str]:
    name = rng.choice([n for n in (f"{p} {s}" for p in _PREFIXES for s in _SUFFIXES) if n not in taken])
    taken.add(name)
    first, last = rng.choice(_FIRST), rng.choice(_LAST)
    area = rng.choice(sorted(_PRODUCTS))
    city, state = rng.choice(_CITIES)
    domain = "".join(c for c in name.lower() if c.isalnum())
    return {"name": name, "contact": f"{first} {last}", "product": rng.choice(_PRODUCTS[area]),
            "address": f"{rng.randint(100, 9999)} {rng.choice(_STREETS)}, {city}, {state} {rng.randint(10000, 99999)}",
            "phone": f"({rng.randint(200, 999)}) {rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
            "email": f"{first[0].lower()}.{last.lower()}@{domain}.com"}


def _monthly(rng: random.Random, start: date, seasonal: bool) -> Payments:
    """A payment a month from January two years back to the month before last: a seasonal amount around the 15th
    (peaking mid-year) growing 8% a year, or a stable one around the 5th growing 5% a year; each ±10%."""
    last = start - timedelta(days=30)
    first_year = last.year - 2
    base, growth, day = (10_000, 0.08, 15) if seasonal else (5_000, 0.05, 5)
    payments = []
    for year in range(first_year, last.year + 1):
        for month in range(1, 13 if year < last.year else last.month + 1):
            season = 1 + 0.4 * math.sin(month / 12 * 2 * math.pi - math.pi / 2) if seasonal else 1.0
            amount = base * (1 + growth) ** (year - first_year) * season * rng.uniform(0.9, 1.1)
            payments.append((date(year, month, day + rng.randint(-3, 3)), round(amount, 2)))
    return payments


def _just_below(rng: random.Random, start: date) -> Payments:
    """Three payments in each of the six months before ``start``, each 95% to 99% of the threshold."""
    payments = []
    for back in range(1, 7):
        months = start.year * 12 + start.month - 1 - back
        for _ in range(3):
            day = date(months // 12, months % 12 + 1, rng.randint(1, 28))
            payments.append((day, round(rng.uniform(0.95 * THRESHOLD, 0.99 * THRESHOLD), 2)))
    return payments


def _code(rng: random.Random, prefix: str) -> str:
    return prefix + "-" + "".join(rng.choices(string.ascii_uppercase + string.digits, k=8))


class TransactionDataReview:
    name = "Transaction Data Review"
    #: Easy: one colleague points to the manual that states the rule, and one script over one table applies it.
    difficulty = "easy"

    def generate(self, day: Day, **given: Any) -> TaskSpec:
        args = common.arguments(self.name, given, {"num_normal_transactions": (int, common.REQUIRED),
                                                   "num_abnormal_transactions": (int, common.REQUIRED)})
        for key, value in args.items():
            common.at_least(self.name, key, value, 0)
        if sum(args.values()) > MAX_SUPPLIERS:
            raise ConfigError(f"{self.name}: arguments num_normal_transactions and num_abnormal_transactions may "
                              f"add up to {MAX_SUPPLIERS} suppliers at most, not {sum(args.values())}")
        templates = {kind: common.reference_text(day, f"{TEMPLATES}{kind}_template.txt")
                     for kind in ("invoice", "approval")}
        finance = day.cloud_disk / "financial"
        common.place(finance / MANUAL, common.reference_bytes(day, TEMPLATES + MANUAL))
        rng, start, taken = day.rng, day.start.date(), set[str]()
        rows: list[tuple[Any, ...]] = []
        for _ in range(args["num_normal_transactions"]):
            supplier = _supplier(rng, taken)
            payments = _monthly(rng, start, seasonal=rng.random() < 0.5)
            rows += self._record(day, supplier, rng.choice("AB"), payments, templates)
        abnormal = [_supplier(rng, taken) for _ in range(args["num_abnormal_transactions"])]
        for supplier in abnormal:
            rows += self._record(day, supplier, "", _just_below(rng, start), templates)
        with sqlite3.connect(day.workspace / "transactions.db") as db:
            db.execute(_SCHEMA)  # the table is shared if a day holds two of these tasks, as in the reference
            db.executemany("INSERT INTO transactions (transaction_id, invoice_id, approval_id, supplier_name, "
                           "supplier_rating, applicant_name, approver_name, transaction_date, transaction_amount) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        db.close()
        for colleague in day.company.in_department("Finance"):
            day.company.add_rule(colleague, "If the intern asks how to review transaction data, point them to "
                                            f"`CloudDisk://financial/{MANUAL}`.")
            day.company.add_rule(colleague, "If the intern asks about the invoices of transactions, point them to "
                                            "`CloudDisk://financial/approvals/` and `CloudDisk://financial/invoices/`.")
        return TaskSpec(self.name, _DESCRIPTION.format(report=REPORT), common.deadline(day),
                        {"checkpoint_files": ["manuals_for_intern.md", MANUAL], "output_file": REPORT,
                         "abnormal_suppliers": [s["name"] for s in abnormal]})

    def _record(self, day: Day, supplier: dict[str, str], rating: str, payments: Payments,
                templates: dict[str, str]) -> list[tuple[Any, ...]]:
        """The supplier's rows for the table, each with its invoice and its approval written to the cloud disk:
        requested by someone of a drawn department and approved by that department's manager."""
        rng = day.rng
        department = rng.choice(common.departments(day.company))
        approver = day.company.manager_of(department)
        staff = [e for e in day.company.in_department(department) if e != approver]
        requester = rng.choice(staff) if staff else approver
        rows = []
        for paid, amount in payments:
            ids = _code(rng, "TRA"), _code(rng, "INV"), _code(rng, "APP")
            requested = paid - timedelta(days=rng.randint(5, 10))
            fields = {"invoice_number": ids[1], "invoice_issue_date": paid.isoformat(),
                      "supplier_company_name": supplier["name"], "supplier_address": supplier["address"],
                      "supplier_contact_person": supplier["contact"], "supplier_phone_number": supplier["phone"],
                      "supplier_email": supplier["email"], "self_company_contact_person": requester.name,
                      "supplier_products": supplier["product"], "amount": amount,
                      "approval_form_id": ids[2], "requester_name": requester.name,
                      "requester_department": department, "request_date": requested.isoformat(),
                      "supplier_rating": rating, "estimated_cost": int(amount - amount % 10 + 10),
                      "approvor_name": approver.name,
                      "approval_date": (requested + timedelta(days=rng.randint(1, 2))).isoformat()}
            for folder, number, kind in (("invoices", ids[1], "invoice"), ("approvals", ids[2], "approval")):
                common.place(day.cloud_disk / f"financial/{folder}/{number}.txt", common.fill(templates[kind], fields))
            rows.append((*ids, supplier["name"], rating, requester.name, approver.name, paid.isoformat(), amount))
        return rows

    def sample_arguments(self, rng: random.Random) -> dict[str, Any]:
        return common.drawn(rng, SAMPLED)

    def hints(self, task: TaskSpec) -> Hints:
        intern, manual = task.check["checkpoint_files"]
        return (
            "No column says which supplier is abnormal: it shows in how each supplier is rated and paid over time. "
            "Finance has a review manual describing the normal and the unusual patterns; read it before the data.",
            f"Ask a Finance colleague how to review transaction data: they point to `{manual}` on the cloud disk "
            "(and to the invoice and approval folders, for checking single payments). That manual and "
            f"`{intern}` both count only once they are in the top of your workspace.",
            f"send_message a Finance colleague asking how to review the transactions; download_file `{intern}` and "
            f"`financial/{manual}` into the top of the workspace; with execute_command run a Python script over "
            "transactions.db that gives, per supplier_name, the rating, the first and last payment date, the "
            "payments per month and the largest amount; compare each supplier with the manual's patterns (the "
            "unusual one: no rating, a short recent history of frequent payments, each just under the approval "
            f"limit); write every supplier that fits to `{task.check['output_file']}` as "
            '{"abnormal_suppliers": [...]}, then call done.')

    def evaluate(self, task: TaskSpec, outcome: Outcome) -> Score:
        check, points, notes = task.check, 0.0, list[str]()
        for name in check["checkpoint_files"]:
            points += 0.5 * common.noted((outcome.workspace / name).is_file(), f"Ask a colleague in Finance where "
                                         f"{name} is kept, and download it to the root of your workspace.", notes)
        report = common.read_json(outcome.workspace / check["output_file"])
        named = report.get("abnormal_suppliers") if isinstance(report, dict) else None
        truth = check["abnormal_suppliers"]
        # As the reference: every abnormal supplier must be named (naming others too costs nothing); a string
        # naming them all counts; with none to find, no points are given.
        found = bool(truth) and isinstance(named, (list, str)) and all(s in named for s in truth)
        return Score(points + 2 * common.noted(found, _ANALYSE, notes), 3.0, tuple(notes))


FAMILY = TransactionDataReview()
