"""Consumer loan underwriting: applicants, loan products with rate sheets, applications to approve, price, decline
and, when a decision broke policy, reverse."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Literal

from occubench.executable.world import (
    Call,
    Check,
    ExecTask,
    ToolError,
    World,
    found,
    mentions_number,
    one,
    only_changed,
    rows,
)

world = World(
    name="loan_underwriting", scenario="Consumer Loan Underwriting", category="Commerce & Consumer",
    domain="Consumer Lending", directory=Path(__file__).parent,
    main_tables=("applicants", "applications", "rate_tiers"),
    description="A lender's underwriting desk: applicants with income, existing debt payments and credit scores; "
                "loan products with amount and term limits, a minimum credit score, a maximum debt-to-income ratio "
                "and a rate sheet by credit tier; applications to approve at the right rate, decline, or reverse.",
)

TODAY = "2025-11-14"
DESK = "UW desk"


def _application(db: sqlite3.Connection, application_id: str) -> dict[str, Any]:
    return found(db, "SELECT * FROM applications WHERE application_id = ?", application_id,
                 missing=f"application {application_id} not found")


def _payment(amount: float, term_months: int, apr: float) -> float:
    rate = apr / 100 / 12
    if rate == 0:
        return round(amount / term_months, 2)
    return round(amount * rate / (1 - (1 + rate) ** -term_months), 2)


@world.tool
def search_applications(db: sqlite3.Connection,
                        status: Literal["pending", "approved", "declined", "funded", "withdrawn"] | None = None,
                        product_id: str | None = None, applicant_id: str | None = None,
                        underwriter: str | None = None) -> dict[str, Any]:
    """List loan applications, optionally filtered.

    Args:
        status: pending, approved, declined, funded or withdrawn.
        product_id: Only applications for this product, e.g. PL-STD.
        applicant_id: Only applications from this applicant, e.g. AP-101.
        underwriter: Only applications decided by this underwriter, e.g. D. Okafor.
    """
    found = rows(db, "SELECT application_id, applicant_id, product_id, amount, term_months, submitted_on, status, "
                     "apr, underwriter, decided_on FROM applications "
                     "WHERE (? IS NULL OR status = ?) AND (? IS NULL OR product_id = ?) "
                     "AND (? IS NULL OR applicant_id = ?) AND (? IS NULL OR underwriter = ?) ORDER BY application_id",
                 status, status, product_id, product_id, applicant_id, applicant_id, underwriter, underwriter)
    return {"applications": found, "count": len(found)}


@world.tool
def get_application(db: sqlite3.Connection, application_id: str) -> dict[str, Any]:
    """One application in full (amount, term, status, pricing, monthly payment) with its decision history.

    Args:
        application_id: Application identifier, e.g. APP-3001.
    """
    application = _application(db, application_id)
    application["decision_history"] = rows(
        db, "SELECT action, apr, reason, underwriter, decided_on FROM decisions WHERE application_id = ? "
            "ORDER BY decision_id", application_id)
    return application


@world.tool
def get_applicant(db: sqlite3.Connection, applicant_id: str) -> dict[str, Any]:
    """An applicant's annual gross income, existing monthly debt payments, credit score and employment.

    Args:
        applicant_id: Applicant identifier, e.g. AP-101.
    """
    applicant = one(db, "SELECT * FROM applicants WHERE applicant_id = ?", applicant_id)
    if applicant is None:
        raise ToolError(f"applicant {applicant_id} not found")
    applicant["applications"] = rows(db, "SELECT application_id, product_id, status FROM applications "
                                         "WHERE applicant_id = ? ORDER BY application_id", applicant_id)
    return applicant


@world.tool
def get_product(db: sqlite3.Connection, product_id: str) -> dict[str, Any]:
    """A loan product's limits (amount, term), minimum credit score, maximum DTI ratio and its rate sheet by tier.

    Args:
        product_id: Product identifier, e.g. PL-STD, AUTO-NEW.
    """
    product = one(db, "SELECT * FROM products WHERE product_id = ?", product_id)
    if product is None:
        known = ", ".join(r["product_id"] for r in rows(db, "SELECT product_id FROM products ORDER BY product_id"))
        raise ToolError(f"product {product_id} not found; products are {known}")
    product["rate_tiers"] = rows(db, "SELECT tier, min_score, max_score, apr FROM rate_tiers WHERE product_id = ? "
                                     "ORDER BY min_score", product_id)
    return product


@world.tool
def quote_payment(db: sqlite3.Connection, amount: float, term_months: int, apr: float) -> dict[str, Any]:
    """Loan calculator: the fixed monthly payment of a fully amortising loan, and its total interest.

    Args:
        amount: Principal borrowed.
        term_months: Number of monthly payments.
        apr: Annual percentage rate, in percent (e.g. 8.49).
    """
    if amount <= 0 or term_months <= 0 or not 0 <= apr < 100:
        raise ToolError("amount and term_months must be positive and apr between 0 and 100 (percent)")
    payment = _payment(amount, term_months, apr)
    return {"amount": amount, "term_months": term_months, "apr": apr, "monthly_payment": payment,
            "total_interest": round(payment * term_months - amount, 2)}


def _pending(db: sqlite3.Connection, application_id: str) -> dict[str, Any]:
    application = _application(db, application_id)
    if application["status"] != "pending":
        raise ToolError(f"application {application_id} is {application['status']}, not pending; "
                        "only pending applications can be decided")
    return application


def _log(db: sqlite3.Connection, application_id: str, action: str, apr: float | None, reason: str) -> None:
    db.execute("INSERT INTO decisions (application_id, action, apr, reason, underwriter, decided_on) "
               "VALUES (?, ?, ?, ?, ?, ?)", (application_id, action, apr, reason, DESK, TODAY))


@world.tool(writes=True)
def approve_application(db: sqlite3.Connection, application_id: str, apr: float, reason: str) -> dict[str, Any]:
    """Approve a pending application at an APR from its product's rate sheet; the monthly payment is computed.

    Args:
        application_id: The pending application to approve.
        apr: The APR in percent; must be one of the product's rate-sheet tiers.
        reason: The underwriting rationale (tier, DTI).
    """
    application = _pending(db, application_id)
    if not reason.strip():
        raise ToolError("a reason is required")
    product = one(db, "SELECT * FROM products WHERE product_id = ?", application["product_id"])
    if product is None or product["status"] != "active":
        raise ToolError(f"product {application['product_id']} is not an active product")
    if not product["min_amount"] <= application["amount"] <= product["max_amount"]:
        raise ToolError(f"amount {application['amount']} is outside {product['product_id']} limits "
                        f"{product['min_amount']}-{product['max_amount']}")
    if application["term_months"] > product["max_term_months"]:
        raise ToolError(f"term {application['term_months']} exceeds {product['product_id']} maximum "
                        f"{product['max_term_months']} months")
    tiers = [r["apr"] for r in rows(db, "SELECT apr FROM rate_tiers WHERE product_id = ? ORDER BY min_score",
                                    product["product_id"])]
    if not any(abs(apr - t) < 1e-9 for t in tiers):
        raise ToolError(f"APR {apr} is not on the {product['product_id']} rate sheet ({', '.join(map(str, tiers))})")
    payment = _payment(application["amount"], application["term_months"], apr)
    db.execute("UPDATE applications SET status = 'approved', apr = ?, monthly_payment = ?, underwriter = ?, "
               "decided_on = ?, decision_reason = ? WHERE application_id = ?",
               (apr, payment, DESK, TODAY, reason, application_id))
    _log(db, application_id, "approved", apr, reason)
    return {"application_id": application_id, "status": "approved", "apr": apr, "monthly_payment": payment}


@world.tool(writes=True)
def decline_application(db: sqlite3.Connection, application_id: str, reason: str) -> dict[str, Any]:
    """Decline a pending application.

    Args:
        application_id: The pending application to decline.
        reason: The policy reason for the decline (it goes on the adverse-action notice).
    """
    _pending(db, application_id)
    if not reason.strip():
        raise ToolError("a reason is required for an adverse-action notice")
    db.execute("UPDATE applications SET status = 'declined', apr = NULL, monthly_payment = NULL, underwriter = ?, "
               "decided_on = ?, decision_reason = ? WHERE application_id = ?", (DESK, TODAY, reason, application_id))
    _log(db, application_id, "declined", None, reason)
    return {"application_id": application_id, "status": "declined"}


@world.tool(writes=True)
def reverse_decision(db: sqlite3.Connection, application_id: str, reason: str) -> dict[str, Any]:
    """Rescind an approval or decline that has not been funded, returning the application to pending for a new
    decision.

    Args:
        application_id: An approved or declined application.
        reason: Why the earlier decision is being reversed.
    """
    application = _application(db, application_id)
    if application["status"] not in ("approved", "declined"):
        raise ToolError(f"application {application_id} is {application['status']}; only approved (not yet funded) "
                        "or declined applications can be reversed")
    if not reason.strip():
        raise ToolError("a reason is required")
    db.execute("UPDATE applications SET status = 'pending', apr = NULL, monthly_payment = NULL, underwriter = NULL, "
               "decided_on = NULL, decision_reason = NULL WHERE application_id = ?", (application_id,))
    _log(db, application_id, "reversed", None, reason)
    return {"application_id": application_id, "status": "pending", "previous_status": application["status"]}


# ---------------------------------------------------------------- tasks

_POLICY = ("Policy: decline if the credit score is below the product's minimum, or if the back-end DTI — existing "
           "monthly debt payments plus the new loan's monthly payment, divided by gross monthly income (annual "
           "income / 12) — is above the product's maximum DTI. Otherwise approve at the APR of the rate tier that "
           "contains the applicant's credit score.")


def _app(db: sqlite3.Connection, application_id: str) -> dict[str, Any]:
    return one(db, "SELECT * FROM applications WHERE application_id = ?", application_id) or {}


def _new_decisions(initial: sqlite3.Connection, final: sqlite3.Connection) -> list[dict[str, Any]]:
    seen = {r["decision_id"] for r in rows(initial, "SELECT decision_id FROM decisions")}
    return [r for r in rows(final, "SELECT * FROM decisions ORDER BY decision_id") if r["decision_id"] not in seen]


def _verify_dti_decline(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    app = _app(final, "APP-3011")
    logged = [(d["application_id"], d["action"]) for d in _new_decisions(initial, final)]
    return [
        Check("APP-3011 declined", app.get("status") == "declined", f"status is {app.get('status')}"),
        Check("exactly one new decision: the decline of APP-3011", logged == [("APP-3011", "declined")],
              f"new decisions {logged}"),
        only_changed(initial, final, "applications", "application_id", {"APP-3011"}),
        Check("answer states the back-end DTI of about 47.7%",
              mentions_number(answer, 47.65, 0.4) or mentions_number(answer, 0.4765, 0.004)),
    ]


world.task(ExecTask(
    id="decide_on_dti", difficulty=1,
    instruction="Please underwrite pending application APP-3011 and record the decision. " + _POLICY +
                " Tell me the applicant's DTI and the outcome.",
    verify=_verify_dti_decline,
    reference=[Call("get_application", {"application_id": "APP-3011"}),
               Call("get_applicant", {"applicant_id": "AP-111"}),
               Call("get_product", {"product_id": "PL-STD"}),
               Call("quote_payment", {"amount": 24000, "term_months": 36, "apr": 8.49}),
               Call("decline_application", {"application_id": "APP-3011",
                                            "reason": "back-end DTI 47.7% exceeds PL-STD maximum 40%"})],
    answer="APP-3011 declined. Credit score 781 is tier A+ (8.49%), giving a $757.51 payment; with $2,340 of "
           "existing debt on $6,500 monthly income the back-end DTI is 47.65%, above the 40% PL-STD maximum.",
    wrong=[Call("get_application", {"application_id": "APP-3011"}),
           Call("get_applicant", {"applicant_id": "AP-111"}),
           Call("get_product", {"product_id": "PL-STD"}),
           Call("approve_application", {"application_id": "APP-3011", "apr": 8.49,
                                        "reason": "DTI 36% within 40%; score 781 tier A+"})],
    wrong_answer="APP-3011 approved at 8.49%: DTI is 36.0% (2,340 / 6,500), under the 40% limit.",
    rubric="AP-111 earns 78,000/yr = 6,500/month with 2,340 existing debt payments (36.0%). The new 24,000 / 36-month "
           "loan at the A+ tier (score 781 → 8.49%) costs 757.51/month, so back-end DTI = 3,097.51 / 6,500 = 47.65% "
           "> 40% PL-STD maximum: APP-3011 must be declined. Counting only existing debt (36%) and approving is wrong.",
))


def _verify_auto_queue(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    greer, sokolov = _app(final, "APP-3016"), _app(final, "APP-3018")
    return [
        Check("APP-3016 approved at tier C, 7.89%", greer.get("status") == "approved" and greer.get("apr") == 7.89,
              f"{greer.get('status')} at {greer.get('apr')}"),
        Check("APP-3016 monthly payment 647.16", greer.get("monthly_payment") == 647.16,
              f"payment {greer.get('monthly_payment')}"),
        Check("APP-3018 declined: score 611 below the 620 minimum", sokolov.get("status") == "declined",
              f"status is {sokolov.get('status')}"),
        only_changed(initial, final, "applications", "application_id", {"APP-3016", "APP-3018"}),
        Check("answer states the APR and payment of APP-3016",
              mentions_number(answer, 7.89) and mentions_number(answer, 647.16)),
    ]


world.task(ExecTask(
    id="price_auto_queue", difficulty=2,
    instruction="Work the pending New Vehicle Loan (AUTO-NEW) applications: decide each one and record it. " +
                _POLICY + " Report each outcome, with the APR and monthly payment of any approval.",
    verify=_verify_auto_queue,
    reference=[Call("search_applications", {"status": "pending", "product_id": "AUTO-NEW"}),
               Call("get_product", {"product_id": "AUTO-NEW"}),
               Call("get_applicant", {"applicant_id": "AP-116"}),
               Call("quote_payment", {"amount": 32000, "term_months": 60, "apr": 7.89}),
               Call("approve_application", {"application_id": "APP-3016", "apr": 7.89,
                                            "reason": "score 684 tier C; back-end DTI 23.4% within 45%"}),
               Call("get_applicant", {"applicant_id": "AP-118"}),
               Call("decline_application", {"application_id": "APP-3018",
                                            "reason": "credit score 611 below AUTO-NEW minimum 620"})],
    answer="APP-3016 (Nathan Greer, score 684) approved at tier C, 7.89% APR, $647.16/month (back-end DTI 23.4%). "
           "APP-3018 (Viktor Sokolov) declined: credit score 611 is below the AUTO-NEW minimum of 620.",
    wrong=[Call("search_applications", {"status": "pending", "product_id": "AUTO-NEW"}),
           Call("get_product", {"product_id": "AUTO-NEW"}),
           Call("approve_application", {"application_id": "APP-3016", "apr": 7.89, "reason": "tier C"}),
           Call("approve_application", {"application_id": "APP-3018", "apr": 10.49,
                                        "reason": "lowest tier D; DTI fine"})],
    wrong_answer="Both approved: APP-3016 at 7.89% ($647.16/month) and APP-3018 at the lowest tier, 10.49%.",
    rubric="Pending AUTO-NEW: APP-3016 (AP-116, score 684 → tier C 660-699, 7.89%; 32,000 over 60 months = 647.16; "
           "DTI (1,150 + 647.16) / 7,666.67 = 23.4% ≤ 45%) is approved at 7.89%. APP-3018 (AP-118, score 611) is "
           "below the 620 minimum and must be declined, not priced at tier D. Other pending applications untouched.",
))

_AUDITED = ("APP-3003", "APP-3005", "APP-3006", "APP-3008", "APP-3010")


def _verify_audit(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    whitfield = _app(final, "APP-3006")
    history = [d["action"] for d in _new_decisions(initial, final) if d["application_id"] == "APP-3006"]
    others = [a for a in _AUDITED if a != "APP-3006" and _app(final, a) != _app(initial, a)]
    return [
        Check("APP-3006 now declined", whitfield.get("status") == "declined", f"status is {whitfield.get('status')}"),
        Check("APP-3006 approval reversed, then declined", history == ["reversed", "declined"], f"logged {history}"),
        Check("the compliant approvals stand", not others, f"changed: {others}"),
        only_changed(initial, final, "applications", "application_id", {"APP-3006"}),
        Check("answer names APP-3006 and its 41.3% DTI",
              "APP-3006" in answer and (mentions_number(answer, 41.25, 0.3) or mentions_number(answer, 0.4125, 0.003))),
    ]


world.task(ExecTask(
    id="audit_open_approvals", difficulty=3,
    instruction="Compliance asked for an audit of every application that is approved but not yet funded. " + _POLICY +
                " One of them was approved against policy. Find it, reverse the approval and record the correct "
                "decision; leave compliant approvals alone. Tell me which application it was and why.",
    verify=_verify_audit,
    reference=[Call("search_applications", {"status": "approved"}),
               Call("get_application", {"application_id": "APP-3003"}),
               Call("get_applicant", {"applicant_id": "AP-103"}),
               Call("get_product", {"product_id": "PL-PRM"}),
               Call("get_applicant", {"applicant_id": "AP-105"}),
               Call("get_product", {"product_id": "AUTO-NEW"}),
               Call("get_application", {"application_id": "APP-3006"}),
               Call("get_applicant", {"applicant_id": "AP-106"}),
               Call("get_product", {"product_id": "PL-STD"}),
               Call("get_applicant", {"applicant_id": "AP-108"}),
               Call("get_applicant", {"applicant_id": "AP-110"}),
               Call("reverse_decision", {"application_id": "APP-3006",
                                         "reason": "audit: back-end DTI 41.3% exceeds PL-STD maximum 40%"}),
               Call("decline_application", {"application_id": "APP-3006",
                                            "reason": "back-end DTI 41.3% exceeds PL-STD maximum 40%"})],
    answer="APP-3006 (Marcus Whitfield, PL-STD) was approved against policy: (1,870 existing + 398.63 new payment) / "
           "5,500 monthly income = 41.25% DTI, above the 40% PL-STD maximum. The approval was reversed and the "
           "application declined. APP-3003 (38.1%), APP-3005 (44.2% vs 45%), APP-3008 (30.0%) and APP-3010 (39.0%) "
           "comply and stand.",
    wrong=[Call("search_applications", {"status": "approved"}),
           Call("get_applicant", {"applicant_id": "AP-105"}),
           Call("get_applicant", {"applicant_id": "AP-106"}),
           Call("reverse_decision", {"application_id": "APP-3005",
                                     "reason": "audit: highest DTI in the batch (44.2%)"}),
           Call("decline_application", {"application_id": "APP-3005", "reason": "DTI 44.2% too high"})],
    wrong_answer="APP-3005 had the highest DTI (44.2%) and was reversed and declined.",
    rubric="Approved, unfunded: APP-3003 DTI (3,120+622.61)/9,833.33 = 38.1% ≤ 43%; APP-3005 (2,390+705.82)/7,000 = "
           "44.2% ≤ 45%; APP-3006 (1,870+398.63)/5,500 = 41.25% > 40% PL-STD max — the breach; APP-3008 "
           "(1,120+306.02)/4,750 = 30.0%; APP-3010 (3,830+780.73)/11,833.33 = 39.0% ≤ 43%. All rates match their "
           "tiers. APP-3006 must be reversed and declined; the others stay approved. Reversing the highest-DTI "
           "application (APP-3005) ignores the per-product thresholds.",
))
