"""Insurance claims adjudication: look up claims and policies, assign adjusters, approve, deny and pay claims."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

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
    name="insurance_claims", scenario="Insurance Claims Adjudication", category="Business & Enterprise",
    domain="Insurance", directory=Path(__file__).parent, main_tables=("claims", "policies"),
    description="A claims desk: policies with limits, deductibles and coverage periods; claims to assign, decide "
                "and pay.",
)


def _claim(db: sqlite3.Connection, claim_id: str) -> dict[str, Any]:
    return found(db, "SELECT * FROM claims WHERE claim_id = ?", claim_id, missing=f"claim {claim_id} not found")


@world.tool
def search_claims(db: sqlite3.Connection, status: str | None = None, category: str | None = None,
                  policy_id: str | None = None) -> dict[str, Any]:
    """List claims, optionally filtered.

    Args:
        status: open, approved, denied or paid.
        category: water, fire, theft, collision or glass.
        policy_id: Only claims on this policy.
    """
    found = rows(db, "SELECT claim_id, policy_id, category, status, amount_claimed, adjuster_id FROM claims "
                     "WHERE (? IS NULL OR status = ?) AND (? IS NULL OR category = ?) AND (? IS NULL OR policy_id = ?) "
                     "ORDER BY claim_id", status, status, category, category, policy_id, policy_id)
    return {"claims": found, "count": len(found)}


@world.tool
def get_claim(db: sqlite3.Connection, claim_id: str) -> dict[str, Any]:
    """Everything recorded about one claim.

    Args:
        claim_id: Claim identifier, e.g. CLM-1001.
    """
    return _claim(db, claim_id)


@world.tool
def get_policy(db: sqlite3.Connection, policy_id: str) -> dict[str, Any]:
    """A policy's holder, product, coverage limit, deductible, status and coverage period.

    Args:
        policy_id: Policy identifier, e.g. POL-2001.
    """
    return found(db, "SELECT * FROM policies WHERE policy_id = ?", policy_id, missing=f"policy {policy_id} not found")


@world.tool
def list_adjusters(db: sqlite3.Connection, specialty: str | None = None) -> dict[str, Any]:
    """Adjusters with their specialty and current number of open cases.

    Args:
        specialty: water, fire, theft or auto.
    """
    return {"adjusters": rows(db, "SELECT * FROM adjusters WHERE (? IS NULL OR specialty = ?) ORDER BY adjuster_id",
                              specialty, specialty)}


@world.tool(writes=True)
def assign_adjuster(db: sqlite3.Connection, claim_id: str, adjuster_id: str) -> dict[str, Any]:
    """Make an adjuster responsible for a claim; their open-case count goes up by one.

    Args:
        claim_id: The claim to assign.
        adjuster_id: The adjuster, e.g. ADJ-01.
    """
    claim = _claim(db, claim_id)
    if one(db, "SELECT 1 FROM adjusters WHERE adjuster_id = ?", adjuster_id) is None:
        raise ToolError(f"adjuster {adjuster_id} not found")
    if claim["adjuster_id"] == adjuster_id:
        return {"claim_id": claim_id, "adjuster_id": adjuster_id, "changed": False}
    if claim["adjuster_id"]:
        db.execute("UPDATE adjusters SET open_cases = open_cases - 1 WHERE adjuster_id = ?", (claim["adjuster_id"],))
    db.execute("UPDATE adjusters SET open_cases = open_cases + 1 WHERE adjuster_id = ?", (adjuster_id,))
    db.execute("UPDATE claims SET adjuster_id = ? WHERE claim_id = ?", (adjuster_id, claim_id))
    return {"claim_id": claim_id, "adjuster_id": adjuster_id, "changed": True}


def _decide(db: sqlite3.Connection, claim_id: str) -> dict[str, Any]:
    claim = _claim(db, claim_id)
    if claim["status"] != "open":
        raise ToolError(f"claim {claim_id} is {claim['status']}, not open")
    return claim


@world.tool(writes=True)
def approve_claim(db: sqlite3.Connection, claim_id: str, amount: float, reason: str) -> dict[str, Any]:
    """Approve an open claim for a payable amount (not more than was claimed).

    Args:
        claim_id: The claim to approve.
        amount: The amount to pay, after deductible and coverage limit.
        reason: Why the claim is approved.
    """
    claim = _decide(db, claim_id)
    if not 0 < amount <= claim["amount_claimed"]:
        raise ToolError(f"amount must be above 0 and at most the {claim['amount_claimed']} claimed")
    db.execute("UPDATE claims SET status = 'approved', approved_amount = ?, decision_reason = ? WHERE claim_id = ?",
               (amount, reason, claim_id))
    return {"claim_id": claim_id, "status": "approved", "approved_amount": amount}


@world.tool(writes=True)
def deny_claim(db: sqlite3.Connection, claim_id: str, reason: str) -> dict[str, Any]:
    """Deny an open claim.

    Args:
        claim_id: The claim to deny.
        reason: Why the claim is denied.
    """
    _decide(db, claim_id)
    db.execute("UPDATE claims SET status = 'denied', decision_reason = ? WHERE claim_id = ?", (reason, claim_id))
    return {"claim_id": claim_id, "status": "denied"}


@world.tool(writes=True)
def issue_payment(db: sqlite3.Connection, claim_id: str) -> dict[str, Any]:
    """Pay an approved claim its approved amount.

    Args:
        claim_id: The approved claim to pay.
    """
    claim = _claim(db, claim_id)
    if claim["status"] != "approved":
        raise ToolError(f"claim {claim_id} is {claim['status']}; only approved claims can be paid")
    cursor = db.execute("INSERT INTO payments (claim_id, amount) VALUES (?, ?)", (claim_id, claim["approved_amount"]))
    db.execute("UPDATE claims SET status = 'paid' WHERE claim_id = ?", (claim_id,))
    return {"payment_id": cursor.lastrowid, "claim_id": claim_id, "amount": claim["approved_amount"]}


def _status(db: sqlite3.Connection, claim_id: str) -> dict[str, Any]:
    return one(db, "SELECT * FROM claims WHERE claim_id = ?", claim_id) or {}


def _verify_payout(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    claim = _status(final, "CLM-1004")
    payments = rows(final, "SELECT amount FROM payments WHERE claim_id = 'CLM-1004'")
    return [
        Check("CLM-1004 paid", claim.get("status") == "paid", f"status is {claim.get('status')}"),
        Check("approved for 9350 claimed minus the 1500 deductible", claim.get("approved_amount") == 7850,
              f"approved {claim.get('approved_amount')}"),
        Check("exactly one payment of 7850", [p["amount"] for p in payments] == [7850], f"payments {payments}"),
        only_changed(initial, final, "claims", "claim_id", {"CLM-1004"}),
        Check("answer states the amount paid", mentions_number(answer, 7850)),
    ]


world.task(ExecTask(
    id="pay_water_claim", difficulty=1,
    instruction="Claim CLM-1004 (water damage) has been validated. Approve it for the amount payable under its "
                "policy — the amount claimed minus the policy's deductible — and issue the payment. Tell me how "
                "much was paid.",
    verify=_verify_payout,
    reference=[Call("get_claim", {"claim_id": "CLM-1004"}), Call("get_policy", {"policy_id": "POL-2005"}),
               Call("approve_claim", {"claim_id": "CLM-1004", "amount": 7850, "reason": "covered water damage"}),
               Call("issue_payment", {"claim_id": "CLM-1004"})],
    answer="CLM-1004 was approved and paid: $7,850 (claimed $9,350 minus the $1,500 deductible).",
    wrong=[Call("get_claim", {"claim_id": "CLM-1004"}), Call("get_policy", {"policy_id": "POL-2005"}),
           Call("approve_claim", {"claim_id": "CLM-1004", "amount": 9350, "reason": "covered water damage"}),
           Call("issue_payment", {"claim_id": "CLM-1004"})],
    wrong_answer="CLM-1004 was approved and paid: $9,350.",
    rubric="The claim must be approved for 9,350 − 1,500 = 7,850 and paid once; no other claim may change.",
))

_FIRE_BACKLOG = {"CLM-1003", "CLM-1006", "CLM-1014"}


def _verify_fire_assignment(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    assigned = {c["claim_id"]: c["adjuster_id"] for c in rows(final, "SELECT * FROM claims WHERE category = 'fire'")}
    load = {a["adjuster_id"]: a["open_cases"] for a in rows(final, "SELECT * FROM adjusters")}
    return [
        Check("unassigned open fire claims go to ADJ-03 (fewest open cases)",
              all(assigned.get(c) == "ADJ-03" for c in _FIRE_BACKLOG),
              f"assignments {sorted((c, assigned.get(c)) for c in _FIRE_BACKLOG)}"),
        Check("CLM-1010 keeps its adjuster", assigned.get("CLM-1010") == "ADJ-06"),
        Check("ADJ-03 now has 5 open cases", load.get("ADJ-03") == 5, f"ADJ-03 has {load.get('ADJ-03')}"),
        only_changed(initial, final, "claims", "claim_id", _FIRE_BACKLOG),
        Check("answer names the adjuster", "ADJ-03" in answer or "Tomoko Ueda" in answer),
    ]


world.task(ExecTask(
    id="assign_fire_backlog", difficulty=2,
    instruction="Every open fire claim that has no adjuster yet should go to the fire specialist who currently "
                "has the fewest open cases. Make the assignments and tell me who got them.",
    verify=_verify_fire_assignment,
    reference=[Call("search_claims", {"status": "open", "category": "fire"}),
               Call("list_adjusters", {"specialty": "fire"}),
               *[Call("assign_adjuster", {"claim_id": c, "adjuster_id": "ADJ-03"}) for c in sorted(_FIRE_BACKLOG)]],
    answer="CLM-1003, CLM-1006 and CLM-1014 were assigned to Tomoko Ueda (ADJ-03), who had the fewest open cases.",
    wrong=[Call("search_claims", {"status": "open", "category": "fire"}),
           Call("list_adjusters", {"specialty": "fire"}),
           *[Call("assign_adjuster", {"claim_id": c, "adjuster_id": "ADJ-02"}) for c in sorted(_FIRE_BACKLOG)]],
    wrong_answer="The three unassigned fire claims went to Samuel Byrne (ADJ-02).",
    rubric="CLM-1003, CLM-1006 and CLM-1014 go to ADJ-03 (2 open cases, fewer than ADJ-06's 3 and ADJ-02's 6); "
           "CLM-1010 already has an adjuster and stays with ADJ-06.",
))


def _verify_theft_review(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    covered, outside = _status(final, "CLM-1008"), _status(final, "CLM-1011")
    return [
        Check("CLM-1008 approved, capped at the 15,000 coverage limit",
              covered.get("status") == "approved" and covered.get("approved_amount") == 15000,
              f"{covered.get('status')} for {covered.get('approved_amount')}"),
        Check("CLM-1011 denied: the incident is after the policy ended", outside.get("status") == "denied",
              f"status is {outside.get('status')}"),
        only_changed(initial, final, "claims", "claim_id", {"CLM-1008", "CLM-1011"}),
        Check("no payment issued", rows(final, "SELECT * FROM payments") == rows(initial, "SELECT * FROM payments")),
    ]


world.task(ExecTask(
    id="review_open_thefts", difficulty=3,
    instruction="Decide every open theft claim. Deny a claim if the policy is lapsed or the incident happened "
                "outside the policy's coverage period; otherwise approve the payable amount: the amount claimed "
                "minus the deductible, but never more than the policy's coverage limit. Do not pay anything yet. "
                "Summarise each decision.",
    verify=_verify_theft_review,
    reference=[Call("search_claims", {"status": "open", "category": "theft"}),
               Call("get_claim", {"claim_id": "CLM-1008"}), Call("get_policy", {"policy_id": "POL-2007"}),
               Call("approve_claim", {"claim_id": "CLM-1008", "amount": 15000,
                                      "reason": "covered theft; payable capped at the coverage limit"}),
               Call("get_claim", {"claim_id": "CLM-1011"}), Call("get_policy", {"policy_id": "POL-2008"}),
               Call("deny_claim", {"claim_id": "CLM-1011", "reason": "incident after the policy period ended"})],
    answer="CLM-1008 approved for 15,000 (18,000 after deductible, capped at the limit); CLM-1011 denied because "
           "the theft on 2025-09-12 happened after policy POL-2008 ended on 2025-08-31.",
    wrong=[Call("search_claims", {"status": "open", "category": "theft"}),
           Call("approve_claim", {"claim_id": "CLM-1008", "amount": 18000, "reason": "claimed minus deductible"}),
           Call("approve_claim", {"claim_id": "CLM-1011", "amount": 6600, "reason": "claimed minus deductible"})],
    wrong_answer="Both theft claims approved: CLM-1008 for 18,000 and CLM-1011 for 6,600.",
    rubric="CLM-1008: 19,000 − 1,000 = 18,000, capped at the 15,000 limit. CLM-1011: incident 2025-09-12 is after "
           "POL-2008's end date 2025-08-31, so it is denied. No payments.",
))
