"""Customs declarations processing: assess duty from the tariff and trade agreements, screen declared values
against reference prices, order inspections, and release or hold shipments."""

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
    scalar,
)

#: The customs system's business date: releases and inspection orders are dated today.
TODAY = "2025-10-30"

world = World(
    name="customs_declarations", scenario="Customs Declaration Processing", category="Public Service & Governance",
    domain="Customs & Trade", directory=Path(__file__).parent,
    main_tables=("shipments", "declarations", "tariff_rates", "reference_prices"),
    description="A customs office's clearance system: arrived shipments and their import declarations (HS code, "
                "origin, quantity, invoice value, freight, insurance, preference claims with certificates of "
                "origin), MFN and origin-specific tariff rates, trade agreements, reference prices, and "
                f"inspections. Values are in USD. The business date is {TODAY}.",
)


def _shipment(db: sqlite3.Connection, shipment_id: str) -> dict[str, Any]:
    shipment = one(db, "SELECT s.*, i.name AS importer_name, i.trusted_trader FROM shipments s "
                       "JOIN importers i ON i.importer_id = s.importer_id WHERE s.shipment_id = ?", shipment_id)
    if shipment is None:
        raise ToolError(f"shipment {shipment_id} not found")
    return shipment


def _declaration(db: sqlite3.Connection, decl_id: str) -> dict[str, Any]:
    return found(db, "SELECT * FROM declarations WHERE decl_id = ?", decl_id,
                 missing=f"declaration {decl_id} not found")


def _hold(db: sqlite3.Connection, shipment_id: str, reason: str) -> None:
    db.execute("UPDATE shipments SET status = 'held', hold_reason = ? WHERE shipment_id = ? AND status != 'released'",
               (reason, shipment_id))


@world.tool
def get_shipment(db: sqlite3.Connection, shipment_id: str) -> dict[str, Any]:
    """A shipment with its importer, arrival, status, all its declarations and its inspections.

    Args:
        shipment_id: Shipment identifier, e.g. SHP-6001.
    """
    shipment = _shipment(db, shipment_id)
    shipment["declarations"] = rows(db, "SELECT * FROM declarations WHERE shipment_id = ? ORDER BY decl_id",
                                    shipment_id)
    shipment["inspections"] = rows(db, "SELECT * FROM inspections WHERE shipment_id = ? ORDER BY inspection_id",
                                   shipment_id)
    return shipment


@world.tool
def search_declarations(db: sqlite3.Connection, status: Literal["lodged", "assessed", "flagged"] | None = None,
                        importer: str | None = None, hs_code: str | None = None,
                        shipment_id: str | None = None) -> dict[str, Any]:
    """Declarations matching the filters, with importer, arrival date and declared unit value (invoice value divided
    by quantity).

    Args:
        status: lodged (awaiting assessment), assessed or flagged.
        importer: Importer id or part of its name, e.g. IMP-104 or "Brightline".
        hs_code: HS code or its first digits, e.g. 8517.
        shipment_id: Only this shipment's declarations.
    """
    found = rows(db, "SELECT d.decl_id, d.shipment_id, s.importer_id, i.name AS importer_name, s.arrival_date, "
                     "d.hs_code, d.description, d.origin_country, d.quantity, d.unit, d.invoice_value, d.freight, "
                     "d.insurance, ROUND(d.invoice_value / d.quantity, 4) AS declared_unit_value, "
                     "d.preference_claimed, d.status, d.duty_amount "
                     "FROM declarations d JOIN shipments s ON s.shipment_id = d.shipment_id "
                     "JOIN importers i ON i.importer_id = s.importer_id "
                     "WHERE (? IS NULL OR d.status = ?) AND (? IS NULL OR s.importer_id = ? OR i.name LIKE ?) "
                     "AND (? IS NULL OR d.hs_code LIKE ?) AND (? IS NULL OR d.shipment_id = ?) ORDER BY d.decl_id",
                 status, status, importer, importer, f"%{importer}%", hs_code, f"{hs_code}%", shipment_id,
                 shipment_id)
    return {"declarations": found, "count": len(found)}


@world.tool
def lookup_tariff(db: sqlite3.Connection, hs_code: str, origin_country: str) -> dict[str, Any]:
    """The tariff for an HS code and country of origin: the MFN rate, any additional duties (anti-dumping,
    countervailing) on that origin, and the trade-agreement preferential rates the origin could claim. A
    preference needs a certificate of origin valid on the arrival date.

    Args:
        hs_code: Six-digit HS code, e.g. 610910.
        origin_country: ISO two-letter country code, e.g. VN.
    """
    mfn = one(db, "SELECT rate_pct FROM tariff_rates "
                  "WHERE hs_code = ? AND origin_country = 'ALL' AND rate_type = 'mfn'", hs_code)
    if mfn is None:
        raise ToolError(f"no tariff line for HS code {hs_code}")
    additional = rows(db, "SELECT rate_pct, measure FROM tariff_rates WHERE hs_code = ? AND origin_country = ? "
                          "AND rate_type = 'additional'", hs_code, origin_country.upper())
    preferences = rows(db, "SELECT p.agreement_code, a.name, p.hs_prefix, p.rate_pct FROM preferential_rates p "
                           "JOIN trade_agreements a ON a.agreement_code = p.agreement_code "
                           "JOIN agreement_members m ON m.agreement_code = p.agreement_code AND m.country = ? "
                           "WHERE ? LIKE p.hs_prefix || '%' ORDER BY p.agreement_code",
                       origin_country.upper(), hs_code)
    return {"hs_code": hs_code, "origin_country": origin_country.upper(), "mfn_rate_pct": mfn["rate_pct"],
            "additional_duties": additional, "preferential_rates": preferences}


@world.tool
def get_reference_price(db: sqlite3.Connection, hs_code: str) -> dict[str, Any]:
    """The valuation reference unit price for an HS code (used to screen for undervaluation).

    Args:
        hs_code: Six-digit HS code, e.g. 851713.
    """
    return found(db, "SELECT * FROM reference_prices WHERE hs_code = ?", hs_code,
                 missing=f"no reference price for HS code {hs_code}")


@world.tool(writes=True)
def assess_duty(db: sqlite3.Connection, decl_id: str, customs_value: float, rate_pct: float,
                note: str) -> dict[str, Any]:
    """Assess a lodged declaration: record its customs value and the total duty rate; the duty is customs value
    times rate, rounded to the cent.

    Args:
        decl_id: The declaration, e.g. DEC-7003.
        customs_value: The customs value in USD (not below the invoice value).
        rate_pct: The total duty rate in percent, e.g. 12 or 26.
        note: The basis of the assessment (rates and any preference applied).
    """
    declaration = _declaration(db, decl_id)
    if declaration["status"] != "lodged":
        raise ToolError(f"declaration {decl_id} is {declaration['status']}; only lodged declarations can be assessed")
    if customs_value < declaration["invoice_value"]:
        raise ToolError(f"customs value {customs_value} is below the invoice value {declaration['invoice_value']}")
    if not 0 <= rate_pct <= 100:
        raise ToolError("rate_pct must be between 0 and 100")
    duty = round(customs_value * rate_pct / 100 + 1e-9, 2)
    db.execute("UPDATE declarations SET status = 'assessed', customs_value = ?, duty_rate = ?, duty_amount = ?, "
               "assessment_note = ? WHERE decl_id = ?", (customs_value, rate_pct, duty, note, decl_id))
    return {"decl_id": decl_id, "status": "assessed", "customs_value": customs_value, "duty_rate": rate_pct,
            "duty_amount": duty}


@world.tool(writes=True)
def flag_declaration(db: sqlite3.Connection, decl_id: str, reason: str) -> dict[str, Any]:
    """Flag a lodged declaration for a valuation or compliance query; its shipment is held until it is resolved.

    Args:
        decl_id: The declaration to flag.
        reason: What is wrong (e.g. the unit value against the reference price).
    """
    declaration = _declaration(db, decl_id)
    if declaration["status"] != "lodged":
        raise ToolError(f"declaration {decl_id} is {declaration['status']}; only lodged declarations can be flagged")
    db.execute("UPDATE declarations SET status = 'flagged', flag_reason = ? WHERE decl_id = ?", (reason, decl_id))
    _hold(db, declaration["shipment_id"], f"declaration {decl_id} flagged")
    return {"decl_id": decl_id, "status": "flagged", "shipment_id": declaration["shipment_id"],
            "shipment_status": _shipment(db, declaration["shipment_id"])["status"]}


@world.tool(writes=True)
def order_inspection(db: sqlite3.Connection, shipment_id: str, kind: Literal["documentary", "physical", "x-ray"],
                     reason: str) -> dict[str, Any]:
    """Order an inspection of a shipment that has not been released; the shipment is held until it passes.

    Args:
        shipment_id: The shipment to inspect.
        kind: documentary, physical or x-ray.
        reason: Why it is selected.
    """
    shipment = _shipment(db, shipment_id)
    if shipment["status"] == "released":
        raise ToolError(f"shipment {shipment_id} was released on {shipment['released_on']}")
    if one(db, "SELECT 1 FROM inspections WHERE shipment_id = ? AND kind = ? AND status = 'scheduled'", shipment_id,
           kind):
        raise ToolError(f"a {kind} inspection of {shipment_id} is already scheduled")
    cursor = db.execute("INSERT INTO inspections (shipment_id, kind, status, ordered_on, reason) "
                        "VALUES (?, ?, 'scheduled', ?, ?)", (shipment_id, kind, TODAY, reason))
    _hold(db, shipment_id, f"{kind} inspection scheduled")
    return {"inspection_id": cursor.lastrowid, "shipment_id": shipment_id, "kind": kind, "status": "scheduled",
            "shipment_status": "held"}


@world.tool(writes=True)
def release_shipment(db: sqlite3.Connection, shipment_id: str) -> dict[str, Any]:
    """Release a shipment to the importer. Every declaration must be assessed and no inspection may be scheduled or
    failed.

    Args:
        shipment_id: The shipment to release.
    """
    shipment = _shipment(db, shipment_id)
    if shipment["status"] == "released":
        raise ToolError(f"shipment {shipment_id} was already released on {shipment['released_on']}")
    open_decls = rows(db, "SELECT decl_id, status FROM declarations WHERE shipment_id = ? AND status != 'assessed'",
                      shipment_id)
    if open_decls:
        raise ToolError(f"shipment {shipment_id} has declarations not assessed: "
                        + ", ".join(f"{d['decl_id']} ({d['status']})" for d in open_decls))
    blocking = rows(db, "SELECT inspection_id, kind, status FROM inspections WHERE shipment_id = ? "
                        "AND status IN ('scheduled', 'failed')", shipment_id)
    if blocking:
        raise ToolError(f"shipment {shipment_id} has inspections outstanding: "
                        + ", ".join(f"{i['kind']} ({i['status']})" for i in blocking))
    total = scalar(db, "SELECT ROUND(SUM(duty_amount), 2) FROM declarations WHERE shipment_id = ?", shipment_id)
    db.execute("UPDATE shipments SET status = 'released', released_on = ?, hold_reason = NULL WHERE shipment_id = ?",
               (TODAY, shipment_id))
    return {"shipment_id": shipment_id, "status": "released", "released_on": TODAY, "total_duty": total}


# ---------------------------------------------------------------------------------------------------- tasks

def _decl(db: sqlite3.Connection, decl_id: str) -> dict[str, Any]:
    return one(db, "SELECT * FROM declarations WHERE decl_id = ?", decl_id) or {}


def _ship_status(db: sqlite3.Connection, shipment_id: str) -> str | None:
    shipment = one(db, "SELECT status FROM shipments WHERE shipment_id = ?", shipment_id)
    return shipment["status"] if shipment else None


def _assessed(db: sqlite3.Connection, decl_id: str, value: float, rate: float, duty: float) -> Check:
    d = _decl(db, decl_id)
    recorded = (d.get("customs_value"), d.get("duty_rate"), d.get("duty_amount"))
    ok = d.get("status") == "assessed" and all(got is not None and abs(got - want) < 0.005
                                               for got, want in zip(recorded, (value, rate, duty)))
    return Check(f"{decl_id} assessed: {value} at {rate}% = {duty}", ok,
                 f"{d.get('status')}: value {d.get('customs_value')}, rate {d.get('duty_rate')}, "
                 f"duty {d.get('duty_amount')}")


def _verify_bolts(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    return [
        _assessed(final, "DEC-7003", 50840, 26.0, 13218.40),
        Check("SHP-6003 released", _ship_status(final, "SHP-6003") == "released",
              f"status {_ship_status(final, 'SHP-6003')}"),
        only_changed(initial, final, "declarations", "decl_id", {"DEC-7003"}),
        only_changed(initial, final, "shipments", "shipment_id", {"SHP-6003"}),
        Check("answer states the duty of 13,218.40", mentions_number(answer, 13218.40)),
    ]


world.task(ExecTask(
    id="assess_bolts_and_release", difficulty=1,
    instruction="Assess declaration DEC-7003 (steel bolts on shipment SHP-6003). It claims no preference: charge the "
                "MFN rate plus any additional duty that applies to its country of origin, on the CIF customs value "
                "(invoice + freight + insurance). The shipment's documentary check is done and this is its only "
                "declaration, so release it once assessed. Tell me the duty.",
    verify=_verify_bolts,
    reference=[Call("get_shipment", {"shipment_id": "SHP-6003"}),
               Call("lookup_tariff", {"hs_code": "731815", "origin_country": "CN"}),
               Call("assess_duty", {"decl_id": "DEC-7003", "customs_value": 50840, "rate_pct": 26.0,
                                    "note": "CIF 48,000 + 2,600 + 240; MFN 3.7% + anti-dumping 22.3% (CN)"}),
               Call("release_shipment", {"shipment_id": "SHP-6003"})],
    answer="DEC-7003 assessed on a CIF value of $50,840 at 26% (MFN 3.7% + 22.3% anti-dumping duty on Chinese "
           "bolts): duty $13,218.40. SHP-6003 released.",
    wrong=[Call("get_shipment", {"shipment_id": "SHP-6003"}),
           Call("lookup_tariff", {"hs_code": "731815", "origin_country": "CN"}),
           Call("assess_duty", {"decl_id": "DEC-7003", "customs_value": 50840, "rate_pct": 3.7, "note": "MFN 3.7%"}),
           Call("release_shipment", {"shipment_id": "SHP-6003"})],
    wrong_answer="DEC-7003 assessed at the MFN rate of 3.7% on $50,840: duty $1,881.08. SHP-6003 released.",
    rubric="CIF value = 48,000 + 2,600 + 240 = 50,840. HS 731815 from CN: MFN 3.7% + anti-dumping 22.3% = 26%. "
           "Duty = 50,840 x 26% = 13,218.40. The shipment (documentary check passed) is then released.",
))

_FLAGGED = {"DEC-7010": "SHP-6010", "DEC-7012": "SHP-6011"}


def _verify_valuation(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    seen = {row["inspection_id"] for row in rows(initial, "SELECT inspection_id FROM inspections")}
    ordered = sorted((i["shipment_id"], i["kind"], i["status"]) for i in rows(final, "SELECT * FROM inspections")
                     if i["inspection_id"] not in seen)
    status = {d: _decl(final, d).get("status") for d in ("DEC-7010", "DEC-7011", "DEC-7012", "DEC-7013", "DEC-7023")}
    return [
        Check("DEC-7010 (57% of reference) and DEC-7012 (52%) flagged",
              status["DEC-7010"] == "flagged" and status["DEC-7012"] == "flagged", f"{status}"),
        Check("DEC-7011 (76%), DEC-7013 and DEC-7023 (83%) left lodged",
              all(status[d] == "lodged" for d in ("DEC-7011", "DEC-7013", "DEC-7023")), f"{status}"),
        Check("one physical inspection each for SHP-6010 and SHP-6011",
              ordered == [("SHP-6010", "physical", "scheduled"), ("SHP-6011", "physical", "scheduled")],
              f"new inspections {ordered}"),
        Check("SHP-6010 and SHP-6011 held",
              _ship_status(final, "SHP-6010") == "held" and _ship_status(final, "SHP-6011") == "held"),
        only_changed(initial, final, "declarations", "decl_id", set(_FLAGGED)),
        only_changed(initial, final, "shipments", "shipment_id", set(_FLAGGED.values())),
        Check("answer names both flagged declarations", all(d in answer for d in _FLAGGED)),
    ]


world.task(ExecTask(
    id="screen_brightline_valuation", difficulty=2,
    instruction="The risk unit wants every lodged declaration from Brightline Trading Co screened for "
                "undervaluation. Flag any declaration whose declared unit value (invoice value divided by quantity) "
                "is below 70% of the reference unit price for its HS code, and order one physical inspection for each "
                "shipment that ends up with a flagged declaration. Leave the other declarations as they are. Tell me "
                "which declarations you flagged.",
    verify=_verify_valuation,
    reference=[Call("search_declarations", {"importer": "Brightline", "status": "lodged"}),
               Call("get_reference_price", {"hs_code": "640399"}),
               Call("get_reference_price", {"hs_code": "420221"}),
               Call("get_reference_price", {"hs_code": "851713"}),
               Call("get_reference_price", {"hs_code": "847130"}),
               Call("get_reference_price", {"hs_code": "850760"}),
               Call("flag_declaration", {"decl_id": "DEC-7010", "reason": "Unit value 8.00/pair is 57% of the "
                                         "14.00 reference price"}),
               Call("flag_declaration", {"decl_id": "DEC-7012", "reason": "Unit value 62.00/pc is 52% of the "
                                         "120.00 reference price"}),
               Call("order_inspection", {"shipment_id": "SHP-6010", "kind": "physical",
                                         "reason": "Suspected undervaluation of DEC-7010"}),
               Call("order_inspection", {"shipment_id": "SHP-6011", "kind": "physical",
                                         "reason": "Suspected undervaluation of DEC-7012"})],
    answer="Flagged DEC-7010 (leather shoes, 8.00 per pair vs 14.00 reference, 57%) and DEC-7012 (smartphones, "
           "62.00 vs 120.00, 52%); physical inspections ordered for SHP-6010 and SHP-6011. DEC-7011 (76%), DEC-7013 "
           "(110%) and DEC-7023 (83%) are within tolerance.",
    wrong=[Call("search_declarations", {"importer": "Brightline", "status": "lodged"}),
           Call("get_reference_price", {"hs_code": "640399"}),
           Call("get_reference_price", {"hs_code": "420221"}),
           Call("get_reference_price", {"hs_code": "851713"}),
           Call("get_reference_price", {"hs_code": "850760"}),
           Call("flag_declaration", {"decl_id": "DEC-7010", "reason": "below reference price"}),
           Call("flag_declaration", {"decl_id": "DEC-7011", "reason": "below reference price"}),
           Call("flag_declaration", {"decl_id": "DEC-7012", "reason": "below reference price"}),
           Call("flag_declaration", {"decl_id": "DEC-7023", "reason": "below reference price"}),
           Call("order_inspection", {"shipment_id": "SHP-6010", "kind": "physical", "reason": "undervaluation"}),
           Call("order_inspection", {"shipment_id": "SHP-6011", "kind": "physical", "reason": "undervaluation"})],
    wrong_answer="Flagged DEC-7010, DEC-7011, DEC-7012 and DEC-7023, all priced below reference.",
    rubric="Brightline's lodged declarations and unit value / reference: DEC-7010 8.00/14.00 = 57% (flag), DEC-7011 "
           "19.00/25.00 = 76% (keep), DEC-7012 62.00/120.00 = 52% (flag), DEC-7013 230/210 = 110% (keep), DEC-7023 "
           "15.00/18.00 = 83% (keep). DEC-7014 is already assessed. One physical inspection each for SHP-6010 and "
           "SHP-6011; both are held.",
))

_HARBOURLINE = {"DEC-7005": (27530, 0.0, 0.0), "DEC-7006": (19475, 12.0, 2337.00), "DEC-7007": (13360, 16.0, 2137.60)}


def _verify_harbourline(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    return [
        *[_assessed(final, decl, *values) for decl, values in _HARBOURLINE.items()],
        Check("SHP-6005 released", _ship_status(final, "SHP-6005") == "released",
              f"status {_ship_status(final, 'SHP-6005')}"),
        only_changed(initial, final, "declarations", "decl_id", set(_HARBOURLINE)),
        only_changed(initial, final, "shipments", "shipment_id", {"SHP-6005"}),
        Check("no inspections ordered", rows(final, "SELECT * FROM inspections") == rows(initial,
                                                                                        "SELECT * FROM inspections")),
        Check("answer states the total duty of 4,474.60", mentions_number(answer, 4474.60)),
    ]


world.task(ExecTask(
    id="clear_harbourline_shipment", difficulty=3,
    instruction="Process shipment SHP-6005 (Harbourline Apparel). For each declaration, first compare its declared "
                "unit value (invoice value divided by quantity) with the reference unit price: below 70% of it, flag "
                "the declaration instead of assessing it. Otherwise assess duty on the CIF customs value (invoice + "
                "freight + insurance). Apply a trade agreement's preferential rate only when the declaration claims "
                "it, the origin country is a member, the agreement covers the HS code, and the certificate of origin "
                "is still valid on the shipment's arrival date; otherwise charge the MFN rate plus any additional "
                "duty for the origin. Then release the shipment if every declaration is assessed and no inspection "
                "is pending or failed; otherwise leave it held. Report the duty per declaration and the total.",
    verify=_verify_harbourline,
    reference=[Call("get_shipment", {"shipment_id": "SHP-6005"}),
               Call("get_reference_price", {"hs_code": "610910"}),
               Call("get_reference_price", {"hs_code": "620342"}),
               Call("get_reference_price", {"hs_code": "640411"}),
               Call("lookup_tariff", {"hs_code": "610910", "origin_country": "VN"}),
               Call("assess_duty", {"decl_id": "DEC-7005", "customs_value": 27530, "rate_pct": 0.0,
                                    "note": "PACFTA preference 0% (chapter 61); certificate PAC-VN-25-08812 valid "
                                            "to 2026-03-31"}),
               Call("lookup_tariff", {"hs_code": "620342", "origin_country": "VN"}),
               Call("assess_duty", {"decl_id": "DEC-7006", "customs_value": 19475, "rate_pct": 12.0,
                                    "note": "PACFTA refused: certificate expired 2025-10-15 before arrival "
                                            "2025-10-28; MFN 12%"}),
               Call("lookup_tariff", {"hs_code": "640411", "origin_country": "CN"}),
               Call("assess_duty", {"decl_id": "DEC-7007", "customs_value": 13360, "rate_pct": 16.0,
                                    "note": "MFN 10% + anti-dumping 6% (CN)"}),
               Call("release_shipment", {"shipment_id": "SHP-6005"})],
    answer="SHP-6005: DEC-7005 T-shirts (VN) PACFTA 0% on CIF 27,530 = $0.00; DEC-7006 trousers (VN) certificate "
           "expired 2025-10-15 before the 2025-10-28 arrival, so MFN 12% on 19,475 = $2,337.00; DEC-7007 running "
           "shoes (CN) MFN 10% + 6% anti-dumping on 13,360 = $2,137.60. No declaration is undervalued; the physical "
           "inspection passed. Total duty $4,474.60; shipment released.",
    wrong=[Call("get_shipment", {"shipment_id": "SHP-6005"}),
           Call("lookup_tariff", {"hs_code": "610910", "origin_country": "VN"}),
           Call("assess_duty", {"decl_id": "DEC-7005", "customs_value": 27530, "rate_pct": 0.0, "note": "PACFTA"}),
           Call("lookup_tariff", {"hs_code": "620342", "origin_country": "VN"}),
           Call("assess_duty", {"decl_id": "DEC-7006", "customs_value": 19475, "rate_pct": 0.0, "note": "PACFTA"}),
           Call("lookup_tariff", {"hs_code": "640411", "origin_country": "CN"}),
           Call("assess_duty", {"decl_id": "DEC-7007", "customs_value": 13360, "rate_pct": 16.0,
                                "note": "MFN + anti-dumping"}),
           Call("release_shipment", {"shipment_id": "SHP-6005"})],
    wrong_answer="SHP-6005 released; total duty $2,137.60 (both Vietnamese lines under PACFTA at 0%).",
    rubric="Unit values are above 70% of reference (3.71 vs 3.20, 7.71 vs 7.50, 9.00 vs 9.00). DEC-7005: CIF "
           "26,000 + 1,400 + 130 = 27,530, PACFTA 0% (VN member, chapter 61 covered, certificate valid to "
           "2026-03-31) -> 0. DEC-7006: CIF 18,500 + 900 + 75 = 19,475; its certificate expired 2025-10-15, before "
           "the 2025-10-28 arrival, so MFN 12% -> 2,337.00. DEC-7007: CIF 12,600 + 700 + 60 = 13,360; CN is not in "
           "PACFTA, MFN 10% + 6% anti-dumping = 16% -> 2,137.60. Total 4,474.60; the physical inspection passed, "
           "so release.",
))
