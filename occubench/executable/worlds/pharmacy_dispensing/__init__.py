"""Community pharmacy dispensing: screen prescriptions against allergies and interactions, dispense, hold for
pharmacist review, and keep stock replenished."""

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

#: The pharmacy system's business date: every dispensing and purchase order is dated today.
TODAY = "2025-11-04"

world = World(
    name="pharmacy_dispensing", scenario="Community Pharmacy Dispensing", category="Healthcare & Life Sciences",
    domain="Pharmacy", directory=Path(__file__).parent,
    main_tables=("patients", "drugs", "prescriptions", "interactions"),
    description="A community pharmacy's dispensing system: patients with recorded allergies, prescriptions with "
                "fills remaining, a drug catalogue with stock, reorder points and pack sizes, and a drug-interaction "
                f"table. The business date is {TODAY}.",
)

_STATUSES = Literal["pending", "active", "on_hold", "completed", "cancelled"]


def _prescription(db: sqlite3.Connection, rx_id: str) -> dict[str, Any]:
    return found(db, "SELECT * FROM prescriptions WHERE rx_id = ?", rx_id, missing=f"prescription {rx_id} not found")


def _drug(db: sqlite3.Connection, drug_id: str) -> dict[str, Any]:
    return found(db, "SELECT * FROM drugs WHERE drug_id = ?", drug_id, missing=f"drug {drug_id} not found")


@world.tool
def find_patients(db: sqlite3.Connection, name: str) -> dict[str, Any]:
    """Find patients by (part of) their name; each match comes with date of birth and recorded allergies.

    Args:
        name: Full or partial patient name, e.g. "Brooks".
    """
    found = rows(db, "SELECT * FROM patients WHERE name LIKE ? ORDER BY patient_id", f"%{name.strip()}%")
    for patient in found:
        patient["allergies"] = rows(db, "SELECT allergen, reaction FROM allergies WHERE patient_id = ? "
                                        "ORDER BY allergen", patient["patient_id"])
    return {"patients": found, "count": len(found)}


@world.tool
def list_prescriptions(db: sqlite3.Connection, patient_id: str | None = None,
                       status: _STATUSES | None = None) -> dict[str, Any]:
    """List prescriptions with their drug, optionally filtered by patient and status.

    Args:
        patient_id: Only this patient's prescriptions, e.g. PAT-1001.
        status: pending (new, never filled), active, on_hold, completed or cancelled.
    """
    found = rows(db, "SELECT p.rx_id, p.patient_id, pa.name AS patient_name, p.drug_id, d.generic_name, d.strength, "
                     "p.quantity, p.fills_remaining, p.status, p.written_date, p.last_filled FROM prescriptions p "
                     "JOIN drugs d ON d.drug_id = p.drug_id JOIN patients pa ON pa.patient_id = p.patient_id "
                     "WHERE (? IS NULL OR p.patient_id = ?) AND (? IS NULL OR p.status = ?) ORDER BY p.rx_id",
                 patient_id, patient_id, status, status)
    return {"prescriptions": found, "count": len(found)}


@world.tool
def get_prescription(db: sqlite3.Connection, rx_id: str) -> dict[str, Any]:
    """Everything about one prescription: prescriber, dates, quantity per fill, directions, fills remaining,
    status, and its drug (allergy class, stock on hand).

    Args:
        rx_id: Prescription number, e.g. RX-5001.
    """
    rx = _prescription(db, rx_id)
    rx["drug"] = _drug(db, rx["drug_id"])
    rx["patient_name"] = scalar(db, "SELECT name FROM patients WHERE patient_id = ?", rx["patient_id"])
    return rx


@world.tool
def check_interactions(db: sqlite3.Connection, patient_id: str, drug_id: str) -> dict[str, Any]:
    """Check a drug against the patient's active medications (prescriptions with status active) using the
    interaction table. Allergies are not part of this check; see the patient record.

    Args:
        patient_id: The patient, e.g. PAT-1001.
        drug_id: The drug to be given, e.g. DRG-08.
    """
    if one(db, "SELECT 1 FROM patients WHERE patient_id = ?", patient_id) is None:
        raise ToolError(f"patient {patient_id} not found")
    drug = _drug(db, drug_id)
    active = rows(db, "SELECT p.rx_id, d.drug_id, d.generic_name, d.strength FROM prescriptions p "
                      "JOIN drugs d ON d.drug_id = p.drug_id WHERE p.patient_id = ? AND p.status = 'active' "
                      "ORDER BY p.rx_id", patient_id)
    found = []
    for med in active:
        hit = one(db, "SELECT * FROM interactions WHERE (generic_a = ? AND generic_b = ?) OR "
                      "(generic_a = ? AND generic_b = ?)", drug["generic_name"], med["generic_name"],
                  med["generic_name"], drug["generic_name"])
        if hit:
            found.append({"with_rx_id": med["rx_id"], "with_drug": med["generic_name"], "severity": hit["severity"],
                          "effect": hit["effect"], "interaction_id": hit["interaction_id"]})
    return {"patient_id": patient_id, "drug": f"{drug['generic_name']} {drug['strength']}",
            "active_medications": active, "interactions": found}


@world.tool
def list_drugs(db: sqlite3.Connection, low_stock_only: bool = False, name: str | None = None) -> dict[str, Any]:
    """The drug catalogue with stock on hand, reorder point, par level, pack size, supplier, and the packs already
    on open purchase orders.

    Args:
        low_stock_only: Only drugs whose stock is at or below their reorder point.
        name: Only drugs whose generic name contains this text.
    """
    found = rows(db, "SELECT d.*, COALESCE((SELECT SUM(packs) FROM purchase_orders o WHERE o.drug_id = d.drug_id "
                     "AND o.status = 'open'), 0) AS open_order_packs FROM drugs d "
                     "WHERE (? = 0 OR d.stock_qty <= d.reorder_point) AND (? IS NULL OR d.generic_name LIKE ?) "
                     "ORDER BY d.drug_id", int(low_stock_only), name, f"%{name}%")
    return {"drugs": found, "count": len(found)}


@world.tool(writes=True)
def dispense_prescription(db: sqlite3.Connection, rx_id: str, note: str | None = None) -> dict[str, Any]:
    """Dispense one fill (the prescribed quantity) of a pending or active prescription: stock goes down, one fill
    is used, and the prescription becomes completed when no fills remain. Clinical screening (allergies,
    interactions) is the pharmacist's job before calling this.

    Args:
        rx_id: The prescription to fill.
        note: Counselling or pharmacist note recorded with the dispensing.
    """
    rx = _prescription(db, rx_id)
    if rx["status"] not in ("pending", "active"):
        raise ToolError(f"prescription {rx_id} is {rx['status']}; only pending or active prescriptions can be filled")
    if rx["fills_remaining"] < 1:
        raise ToolError(f"prescription {rx_id} has no fills remaining")
    if rx["expires_on"] < TODAY:
        raise ToolError(f"prescription {rx_id} expired on {rx['expires_on']}")
    drug = _drug(db, rx["drug_id"])
    if drug["stock_qty"] < rx["quantity"]:
        raise ToolError(f"not enough stock of {drug['drug_id']} ({drug['generic_name']} {drug['strength']}): "
                        f"{drug['stock_qty']} on hand, {rx['quantity']} needed")
    fills = rx["fills_remaining"] - 1
    status = "active" if fills else "completed"
    db.execute("UPDATE drugs SET stock_qty = stock_qty - ? WHERE drug_id = ?", (rx["quantity"], drug["drug_id"]))
    db.execute("UPDATE prescriptions SET fills_remaining = ?, status = ?, last_filled = ? WHERE rx_id = ?",
               (fills, status, TODAY, rx_id))
    cursor = db.execute("INSERT INTO dispensings (rx_id, drug_id, quantity, dispensed_on, note) VALUES (?, ?, ?, ?, ?)",
                        (rx_id, drug["drug_id"], rx["quantity"], TODAY, note))
    return {"dispense_id": cursor.lastrowid, "rx_id": rx_id, "quantity": rx["quantity"], "fills_remaining": fills,
            "status": status, "stock_left": drug["stock_qty"] - rx["quantity"]}


@world.tool(writes=True)
def hold_prescription(db: sqlite3.Connection, rx_id: str, reason: str) -> dict[str, Any]:
    """Put a pending or active prescription on hold for pharmacist review; it cannot be filled while on hold.

    Args:
        rx_id: The prescription to hold.
        reason: Why it needs review (e.g. the allergy or interaction found).
    """
    rx = _prescription(db, rx_id)
    if rx["status"] not in ("pending", "active"):
        raise ToolError(f"prescription {rx_id} is {rx['status']}; only pending or active prescriptions can be held")
    if not reason.strip():
        raise ToolError("a reason is required to hold a prescription")
    db.execute("UPDATE prescriptions SET status = 'on_hold', hold_reason = ? WHERE rx_id = ?", (reason, rx_id))
    return {"rx_id": rx_id, "status": "on_hold", "hold_reason": reason}


@world.tool(writes=True)
def reorder_stock(db: sqlite3.Connection, drug_id: str, packs: int) -> dict[str, Any]:
    """Place a purchase order with the drug's supplier for a number of whole packs.

    Args:
        drug_id: The drug to order, e.g. DRG-11.
        packs: How many packs (each holds the drug's pack size in units); 1 to 50.
    """
    drug = _drug(db, drug_id)
    if not 1 <= packs <= 50:
        raise ToolError("packs must be between 1 and 50")
    units = packs * drug["pack_size"]
    cursor = db.execute("INSERT INTO purchase_orders (drug_id, packs, units, supplier, ordered_on, status) "
                        "VALUES (?, ?, ?, ?, ?, 'open')", (drug_id, packs, units, drug["supplier"], TODAY))
    return {"po_id": cursor.lastrowid, "drug_id": drug_id, "packs": packs, "units": units,
            "supplier": drug["supplier"], "status": "open"}


# ---------------------------------------------------------------------------------------------------- tasks

def _rx(db: sqlite3.Connection, rx_id: str) -> dict[str, Any]:
    return one(db, "SELECT * FROM prescriptions WHERE rx_id = ?", rx_id) or {}


def _stock(db: sqlite3.Connection, drug_id: str) -> int | None:
    drug = one(db, "SELECT stock_qty FROM drugs WHERE drug_id = ?", drug_id)
    return drug["stock_qty"] if drug else None


def _new_rows(initial: sqlite3.Connection, final: sqlite3.Connection, table: str, key: str) -> list[dict[str, Any]]:
    seen = {row[key] for row in rows(initial, f'SELECT "{key}" FROM "{table}"')}  # names come from the verifier
    return [row for row in rows(final, f'SELECT * FROM "{table}" ORDER BY "{key}"') if row[key] not in seen]


def _verify_farouk(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    rx = _rx(final, "RX-5031")
    fills = [(d["rx_id"], d["quantity"]) for d in _new_rows(initial, final, "dispensings", "dispense_id")]
    return [
        Check("exactly one fill of 90 from RX-5031", fills == [("RX-5031", 90)], f"new dispensings {fills}"),
        Check("RX-5031 has 2 fills left and stays active",
              rx.get("fills_remaining") == 2 and rx.get("status") == "active",
              f"{rx.get('fills_remaining')} fills, {rx.get('status')}"),
        Check("atorvastatin 40 mg stock down from 180 to 90", _stock(final, "DRG-02") == 90,
              f"stock {_stock(final, 'DRG-02')}"),
        only_changed(initial, final, "prescriptions", "rx_id", {"RX-5031"}),
        only_changed(initial, final, "drugs", "drug_id", {"DRG-02"}),
        Check("answer states 90 tablets and 2 fills left", mentions_number(answer, 90) and mentions_number(answer, 2)),
    ]


world.task(ExecTask(
    id="fill_farouk_atorvastatin", difficulty=1,
    instruction="Omar Farouk, born 1961-04-22, is at the counter for his atorvastatin. Check it against his other "
                "current medications, then fill it from his current atorvastatin prescription. Tell me how many "
                "tablets he received and how many fills are left on that prescription.",
    verify=_verify_farouk,
    reference=[Call("find_patients", {"name": "Omar Farouk"}),
               Call("list_prescriptions", {"patient_id": "PAT-1014"}),
               Call("check_interactions", {"patient_id": "PAT-1014", "drug_id": "DRG-02"}),
               Call("dispense_prescription", {"rx_id": "RX-5031", "note": "Routine refill; no interactions found"})],
    answer="Filled RX-5031 (atorvastatin 40 mg) for Omar Farouk (PAT-1014, born 1961-04-22): 90 tablets dispensed; "
           "no interactions with his amlodipine. 2 fills remain on the prescription.",
    wrong=[Call("find_patients", {"name": "Omar Farouk"}),
           Call("list_prescriptions", {"patient_id": "PAT-1003"}),
           Call("check_interactions", {"patient_id": "PAT-1003", "drug_id": "DRG-01"}),
           Call("dispense_prescription", {"rx_id": "RX-5005", "note": "Routine refill"})],
    wrong_answer="Filled RX-5005 (atorvastatin 20 mg) for Omar Farouk: 30 tablets, 4 fills left.",
    rubric="Two patients are named Omar Farouk; the one born 1961-04-22 is PAT-1014. His current atorvastatin is "
           "RX-5031 (40 mg, 90 tablets, 3 fills left; RX-5008 for 20 mg is completed). No interaction with his "
           "amlodipine. One fill of 90 leaves 2 fills and DRG-02 stock 180 - 90 = 90. Filling RX-5005 (the other "
           "Omar Farouk, born 1988) is wrong.",
))

_RESTOCK = {"DRG-09": 2, "DRG-11": 6, "DRG-13": 2}


def _verify_restock(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    orders = sorted((o["drug_id"], o["packs"], o["status"]) for o in _new_rows(initial, final, "purchase_orders",
                                                                                "po_id"))
    expected = sorted((drug, packs, "open") for drug, packs in _RESTOCK.items())
    return [
        Check("orders: DRG-09 x2, DRG-11 x6, DRG-13 x2 packs and nothing else", orders == expected,
              f"new orders {orders}"),
        Check("fluconazole (open order already) not reordered", all(o[0] != "DRG-19" for o in orders)),
        only_changed(initial, final, "purchase_orders", "po_id", {o["po_id"] for o in _new_rows(
            initial, final, "purchase_orders", "po_id")}),
        only_changed(initial, final, "drugs", "drug_id", set()),
        only_changed(initial, final, "prescriptions", "rx_id", set()),
        Check("answer gives the sertraline order of 6 packs", mentions_number(answer, 6)),
    ]


world.task(ExecTask(
    id="restock_low_drugs", difficulty=2,
    instruction="Do today's stock replenishment. Every drug whose stock on hand is at or below its reorder point "
                "needs a purchase order, unless it already has an open purchase order. Order the smallest number of "
                "whole packs that brings stock on hand up to at least the drug's par level. Tell me what you "
                "ordered.",
    verify=_verify_restock,
    reference=[Call("list_drugs", {"low_stock_only": True}),
               Call("reorder_stock", {"drug_id": "DRG-09", "packs": 2}),
               Call("reorder_stock", {"drug_id": "DRG-11", "packs": 6}),
               Call("reorder_stock", {"drug_id": "DRG-13", "packs": 2})],
    answer="Ordered: sulfamethoxazole-trimethoprim DRG-09, 2 packs (200 tablets, 60 -> 260 vs par 200); sertraline "
           "DRG-11, 6 packs (180 tablets, 28 -> 208 vs par 180); cephalexin DRG-13, 2 packs (200 capsules, "
           "20 -> 220 vs par 200). Fluconazole DRG-19 is low but already has an open order of 4 packs, so skipped.",
    wrong=[Call("list_drugs", {"low_stock_only": True}),
           Call("reorder_stock", {"drug_id": "DRG-09", "packs": 2}),
           Call("reorder_stock", {"drug_id": "DRG-11", "packs": 5}),
           Call("reorder_stock", {"drug_id": "DRG-13", "packs": 2}),
           Call("reorder_stock", {"drug_id": "DRG-19", "packs": 4})],
    wrong_answer="Ordered DRG-09 x2, DRG-11 x5, DRG-13 x2 and DRG-19 x4 packs.",
    rubric="Low stock (stock <= reorder point): DRG-09 (60 <= 60), DRG-11 (28 <= 60), DRG-13 (20 <= 40), DRG-19 "
           "(6 <= 10, but it has an open order, so skip); DRG-17 (61 > 60) is not low. Packs = ceil((par - stock) / "
           "pack size): DRG-09 ceil(140/100) = 2, DRG-11 ceil(152/30) = 6 (5 packs reach only 178), DRG-13 "
           "ceil(180/100) = 2.",
))

_QUEUE = {"RX-5040", "RX-5041", "RX-5042", "RX-5043", "RX-5044"}


def _verify_queue(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    status = {rx: _rx(final, rx).get("status") for rx in sorted(_QUEUE)}
    fills = sorted((d["rx_id"], d["quantity"]) for d in _new_rows(initial, final, "dispensings", "dispense_id"))
    orders = sorted((o["drug_id"], o["packs"]) for o in _new_rows(initial, final, "purchase_orders", "po_id"))
    held = [rx for rx in ("RX-5040", "RX-5041")
            if status[rx] == "on_hold" and (_rx(final, rx).get("hold_reason") or "")]
    return [
        Check("RX-5040 held: clarithromycin is contraindicated with her simvastatin", status["RX-5040"] == "on_hold",
              f"status {status['RX-5040']}"),
        Check("RX-5041 held: patient is allergic to penicillins (amoxicillin)", status["RX-5041"] == "on_hold",
              f"status {status['RX-5041']}"),
        Check("holds carry a reason", len(held) == 2),
        Check("RX-5042 and RX-5044 dispensed once each (moderate interactions only)",
              fills == [("RX-5042", 30), ("RX-5044", 6)], f"new dispensings {fills}"),
        Check("RX-5043 left pending (only 28 sertraline for 30)", status["RX-5043"] == "pending",
              f"status {status['RX-5043']}"),
        Check("one order for sertraline: 6 packs", orders == [("DRG-11", 6)], f"new orders {orders}"),
        Check("stock: ibuprofen 170, azithromycin 42",
              _stock(final, "DRG-08") == 170 and _stock(final, "DRG-20") == 42,
              f"ibuprofen {_stock(final, 'DRG-08')}, azithromycin {_stock(final, 'DRG-20')}"),
        only_changed(initial, final, "prescriptions", "rx_id", _QUEUE - {"RX-5043"}),
        only_changed(initial, final, "drugs", "drug_id", {"DRG-08", "DRG-20"}),
    ]


world.task(ExecTask(
    id="work_pending_queue", difficulty=3,
    instruction="Work through every pending prescription in the queue. For each, screen the patient's recorded "
                "allergies and the drug's interactions with their active medications. Put the prescription on hold "
                "for pharmacist review, with the reason, if the patient is allergic to the drug's allergy class or "
                "there is a major or contraindicated interaction. Otherwise dispense it; moderate or minor "
                "interactions are fine to dispense with a counselling note. If there is not enough stock to "
                "dispense the full quantity, leave the prescription pending and reorder the drug (unless it "
                "already has an open order): the smallest number of whole packs that brings stock up to at least "
                "its par level. Report what you did with each prescription.",
    verify=_verify_queue,
    reference=[Call("list_prescriptions", {"status": "pending"}),
               Call("find_patients", {"name": "Grace Whitfield"}),
               Call("check_interactions", {"patient_id": "PAT-1005", "drug_id": "DRG-06"}),
               Call("hold_prescription", {"rx_id": "RX-5040", "reason": "Contraindicated: clarithromycin with active "
                                          "simvastatin (RX-5009), rhabdomyolysis risk"}),
               Call("find_patients", {"name": "Diego Ramos"}),
               Call("get_prescription", {"rx_id": "RX-5041"}),
               Call("hold_prescription", {"rx_id": "RX-5041", "reason": "Documented penicillin allergy (hives); "
                                          "amoxicillin is a penicillin"}),
               Call("find_patients", {"name": "Helen Brooks"}),
               Call("check_interactions", {"patient_id": "PAT-1001", "drug_id": "DRG-08"}),
               Call("dispense_prescription", {"rx_id": "RX-5042", "note": "Moderate interaction with lisinopril: "
                                              "counselled to take with food, short course, report swelling"}),
               Call("find_patients", {"name": "Kofi Asante"}),
               Call("check_interactions", {"patient_id": "PAT-1008", "drug_id": "DRG-11"}),
               Call("list_drugs", {"name": "sertraline"}),
               Call("reorder_stock", {"drug_id": "DRG-11", "packs": 6}),
               Call("find_patients", {"name": "Rosa Delgado"}),
               Call("check_interactions", {"patient_id": "PAT-1009", "drug_id": "DRG-20"}),
               Call("dispense_prescription", {"rx_id": "RX-5044", "note": "Moderate interaction with warfarin: "
                                              "counselled on bleeding signs; INR check advised"})],
    answer="RX-5040 (Grace Whitfield, clarithromycin) on hold: contraindicated with her simvastatin. RX-5041 (Diego "
           "Ramos, amoxicillin) on hold: penicillin allergy. RX-5042 (Helen Brooks, ibuprofen 30) dispensed with "
           "counselling (moderate interaction with lisinopril; her warfarin is completed). RX-5043 (Kofi Asante, "
           "sertraline 30) left pending: only 28 in stock; ordered 6 packs (180 tablets) of sertraline. RX-5044 "
           "(Rosa Delgado, azithromycin 6) dispensed with counselling (moderate interaction with warfarin).",
    wrong=[Call("list_prescriptions", {"status": "pending"}),
           Call("check_interactions", {"patient_id": "PAT-1005", "drug_id": "DRG-06"}),
           Call("hold_prescription", {"rx_id": "RX-5040", "reason": "Contraindicated with simvastatin"}),
           Call("check_interactions", {"patient_id": "PAT-1006", "drug_id": "DRG-05"}),
           Call("dispense_prescription", {"rx_id": "RX-5041", "note": "No interactions"}),
           Call("check_interactions", {"patient_id": "PAT-1001", "drug_id": "DRG-08"}),
           Call("dispense_prescription", {"rx_id": "RX-5042", "note": "Moderate interaction counselled"}),
           Call("reorder_stock", {"drug_id": "DRG-11", "packs": 6}),
           Call("dispense_prescription", {"rx_id": "RX-5044", "note": "Moderate interaction counselled"})],
    wrong_answer="Held RX-5040; dispensed RX-5041, RX-5042 and RX-5044; RX-5043 waits for stock (6 packs ordered).",
    rubric="Pending queue: RX-5040 clarithromycin for Grace Whitfield, who takes simvastatin (contraindicated) -> "
           "hold. RX-5041 amoxicillin for Diego Ramos, allergic to penicillin (amoxicillin's allergy class; the "
           "interaction check is clean, so the allergy must be read from the patient record) -> hold. RX-5042 "
           "ibuprofen for Helen Brooks: only a moderate interaction with active lisinopril (her warfarin RX-5002 is "
           "completed) -> dispense 30. RX-5043 sertraline 30 for Kofi Asante: no interaction but stock is 28 -> stays "
           "pending; order ceil((180 - 28) / 30) = 6 packs. RX-5044 azithromycin for Rosa Delgado: moderate with "
           "warfarin (her cephalosporin allergy does not apply to a macrolide) -> dispense 6.",
))
