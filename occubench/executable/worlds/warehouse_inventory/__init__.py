"""Warehouse inventory control: bins with lots and quantities, purchase-order receiving, order allocation by
FEFO/FIFO rotation, and cycle-count reconciliation with inventory adjustments."""

from __future__ import annotations

import re
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

world = World(
    name="warehouse_inventory", scenario="Distribution Center Inventory Control",
    category="Transportation & Logistics", domain="Warehousing", directory=Path(__file__).parent,
    main_tables=("skus", "locations", "inventory", "outbound_orders"),
    description="A food and household-goods distribution center on 2025-11-14: SKUs with FEFO/FIFO rotation and "
                "standard costs, pick/reserve/quarantine/receiving locations holding lots, purchase orders to "
                "receive, sales orders to allocate, and cycle counts to reconcile.",
)

TODAY = "2025-11-14"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _sku(db: sqlite3.Connection, sku: str) -> dict[str, Any]:
    return found(db, "SELECT * FROM skus WHERE sku = ?", sku, missing=f"SKU {sku} not found")


def _order(db: sqlite3.Connection, order_id: str) -> dict[str, Any]:
    return found(db, "SELECT * FROM outbound_orders WHERE order_id = ?", order_id,
                 missing=f"sales order {order_id} not found")


def _purchase_order(db: sqlite3.Connection, po_id: str) -> dict[str, Any]:
    return found(db, "SELECT * FROM purchase_orders WHERE po_id = ?", po_id,
                 missing=f"purchase order {po_id} not found")


def _order_status(db: sqlite3.Connection, order_id: str) -> str:
    lines = rows(db, "SELECT qty_ordered, qty_allocated FROM order_lines WHERE order_id = ?", order_id)
    if all(line["qty_allocated"] >= line["qty_ordered"] for line in lines):
        status = "allocated"
    elif any(line["qty_allocated"] > 0 for line in lines):
        status = "partially_allocated"
    else:
        status = "open"
    db.execute("UPDATE outbound_orders SET status = ? WHERE order_id = ?", (status, order_id))
    return status


@world.tool
def get_sku(db: sqlite3.Connection, sku: str) -> dict[str, Any]:
    """An item's description, unit of measure, stock rotation rule (FEFO or FIFO) and standard unit cost.

    Args:
        sku: Item number, e.g. SKU-1002.
    """
    return _sku(db, sku)


@world.tool
def find_inventory(db: sqlite3.Connection, sku: str | None = None, location_id: str | None = None,
                   zone: str | None = None) -> dict[str, Any]:
    """Inventory records (one per SKU, lot and location) with on-hand, allocated and available quantities.

    Args:
        sku: Only this item, e.g. SKU-2005.
        location_id: Only this location, e.g. B-02-01.
        zone: Only locations in this zone: A, B, C (pick aisles), R (reserve), QA (quarantine), RCV (receiving).
    """
    if sku is None and location_id is None and zone is None:
        raise ToolError("give at least one of sku, location_id or zone")
    found = rows(db, "SELECT i.inv_id, i.sku, i.location_id, l.kind AS location_kind, l.status AS location_status, "
                     "i.lot, i.received_date, i.expiry_date, i.qty AS on_hand, i.qty_allocated AS allocated, "
                     "i.qty - i.qty_allocated AS available FROM inventory i JOIN locations l USING (location_id) "
                     "WHERE (? IS NULL OR i.sku = ?) AND (? IS NULL OR i.location_id = ?) "
                     "AND (? IS NULL OR l.zone = ?) "
                     "ORDER BY i.sku, i.location_id, i.inv_id", sku, sku, location_id, location_id, zone, zone)
    return {"inventory": found, "count": len(found)}


@world.tool
def get_order(db: sqlite3.Connection, order_id: str) -> dict[str, Any]:
    """A sales order with its lines (ordered and allocated quantities) and the stock allocated to it so far.

    Args:
        order_id: Sales order number, e.g. SO-7720.
    """
    order = _order(db, order_id)
    order["lines"] = rows(db, "SELECT line_no, sku, qty_ordered, qty_allocated, qty_ordered - qty_allocated AS "
                              "qty_open FROM order_lines WHERE order_id = ? ORDER BY line_no", order_id)
    order["allocations"] = rows(db, "SELECT a.allocation_id, a.line_no, a.inv_id, i.location_id, i.lot, a.qty "
                                    "FROM allocations a JOIN inventory i USING (inv_id) WHERE a.order_id = ? "
                                    "ORDER BY a.allocation_id", order_id)
    return order


@world.tool(writes=True)
def allocate_stock(db: sqlite3.Connection, order_id: str, line_no: int, inv_id: int, qty: int) -> dict[str, Any]:
    """Reserve a quantity of one inventory record (SKU, lot and location) for a sales order line.

    Args:
        order_id: The sales order, e.g. SO-7720.
        line_no: The order line to allocate.
        inv_id: The inventory record to take stock from (see find_inventory).
        qty: Number of units (cases) to allocate from that record.
    """
    order = _order(db, order_id)
    if order["status"] in ("shipped", "cancelled"):
        raise ToolError(f"sales order {order_id} is {order['status']}; it cannot be allocated")
    line = one(db, "SELECT * FROM order_lines WHERE order_id = ? AND line_no = ?", order_id, line_no)
    if line is None:
        raise ToolError(f"sales order {order_id} has no line {line_no}")
    stock = one(db, "SELECT i.*, l.kind, l.status AS location_status FROM inventory i JOIN locations l "
                    "USING (location_id) WHERE i.inv_id = ?", inv_id)
    if stock is None:
        raise ToolError(f"inventory record {inv_id} not found")
    if stock["sku"] != line["sku"]:
        raise ToolError(f"inventory record {inv_id} holds {stock['sku']}, but line {line_no} is for {line['sku']}")
    if stock["location_status"] != "active":
        raise ToolError(f"location {stock['location_id']} is on hold; its stock cannot be allocated")
    if stock["kind"] not in ("pick", "reserve"):
        raise ToolError(f"location {stock['location_id']} is a {stock['kind']} location; stock must be put away "
                        "to a pick or reserve location before it can be allocated")
    if stock["expiry_date"] is not None and stock["expiry_date"] < TODAY:
        raise ToolError(f"lot {stock['lot']} expired on {stock['expiry_date']}")
    if qty <= 0:
        raise ToolError("qty must be positive")
    available = stock["qty"] - stock["qty_allocated"]
    if qty > available:
        raise ToolError(f"only {available} available in inventory record {inv_id} ({stock['location_id']})")
    open_qty = line["qty_ordered"] - line["qty_allocated"]
    if qty > open_qty:
        raise ToolError(f"line {line_no} has only {open_qty} left to allocate")
    db.execute("UPDATE inventory SET qty_allocated = qty_allocated + ? WHERE inv_id = ?", (qty, inv_id))
    db.execute("UPDATE order_lines SET qty_allocated = qty_allocated + ? WHERE order_line_id = ?",
               (qty, line["order_line_id"]))
    cursor = db.execute("INSERT INTO allocations (order_id, line_no, inv_id, qty) VALUES (?, ?, ?, ?)",
                        (order_id, line_no, inv_id, qty))
    status = _order_status(db, order_id)
    return {"allocation_id": cursor.lastrowid, "order_id": order_id, "line_no": line_no, "inv_id": inv_id,
            "location_id": stock["location_id"], "lot": stock["lot"], "qty": qty,
            "line_open_qty": open_qty - qty, "order_status": status}


@world.tool(writes=True)
def release_allocation(db: sqlite3.Connection, order_id: str, allocation_id: int) -> dict[str, Any]:
    """Undo an allocation on a sales order: the stock becomes available again and the order line reopens.

    Args:
        order_id: The sales order the allocation belongs to, e.g. SO-7720.
        allocation_id: The allocation to release (see get_order).
    """
    _order(db, order_id)
    allocation = one(db, "SELECT * FROM allocations WHERE allocation_id = ? AND order_id = ?", allocation_id, order_id)
    if allocation is None:
        raise ToolError(f"sales order {order_id} has no allocation {allocation_id}")
    if _order(db, allocation["order_id"])["status"] == "shipped":
        raise ToolError(f"sales order {allocation['order_id']} has shipped; its allocations cannot be released")
    db.execute("UPDATE inventory SET qty_allocated = qty_allocated - ? WHERE inv_id = ?",
               (allocation["qty"], allocation["inv_id"]))
    db.execute("UPDATE order_lines SET qty_allocated = qty_allocated - ? WHERE order_id = ? AND line_no = ?",
               (allocation["qty"], allocation["order_id"], allocation["line_no"]))
    db.execute("DELETE FROM allocations WHERE allocation_id = ?", (allocation_id,))
    return {"released": allocation, "order_status": _order_status(db, allocation["order_id"])}


@world.tool
def get_purchase_order(db: sqlite3.Connection, po_id: str) -> dict[str, Any]:
    """A purchase order with its supplier, status and lines (ordered, received and outstanding quantities).

    Args:
        po_id: Purchase order number, e.g. PO-5518.
    """
    po = _purchase_order(db, po_id)
    po["lines"] = rows(db, "SELECT p.line_no, p.sku, s.description, s.rotation, p.qty_ordered, p.qty_received, "
                           "p.qty_ordered - p.qty_received AS qty_outstanding FROM po_lines p JOIN skus s "
                           "USING (sku) WHERE p.po_id = ? ORDER BY p.line_no", po_id)
    return po


@world.tool(writes=True)
def receive_po_line(db: sqlite3.Connection, po_id: str, line_no: int, qty: int, location_id: str, lot: str,
                    expiry_date: str | None = None) -> dict[str, Any]:
    """Book goods received against a purchase order line into a receiving location, creating an inventory record.

    Args:
        po_id: The purchase order, e.g. PO-5518.
        line_no: The purchase order line received.
        qty: Units (cases) physically received.
        location_id: The receiving location the goods are in, e.g. RCV-01.
        lot: The supplier lot number on the cases.
        expiry_date: Best-before date YYYY-MM-DD; required for FEFO items.
    """
    po = _purchase_order(db, po_id)
    if po["status"] not in ("open", "partially_received"):
        raise ToolError(f"purchase order {po_id} is {po['status']}; nothing more can be received")
    line = one(db, "SELECT * FROM po_lines WHERE po_id = ? AND line_no = ?", po_id, line_no)
    if line is None:
        raise ToolError(f"purchase order {po_id} has no line {line_no}")
    outstanding = line["qty_ordered"] - line["qty_received"]
    if qty <= 0:
        raise ToolError("qty must be positive")
    if qty > outstanding:
        raise ToolError(f"over-receipt: line {line_no} has only {outstanding} outstanding")
    location = one(db, "SELECT * FROM locations WHERE location_id = ?", location_id)
    if location is None:
        raise ToolError(f"location {location_id} not found")
    if location["kind"] != "receiving" or location["status"] != "active":
        raise ToolError(f"location {location_id} is not an active receiving location")
    if not lot.strip():
        raise ToolError("a lot number is required")
    sku = _sku(db, line["sku"])
    if expiry_date is not None and not _DATE.match(expiry_date):
        raise ToolError("expiry_date must be YYYY-MM-DD")
    if sku["rotation"] == "FEFO" and expiry_date is None:
        raise ToolError(f"{sku['sku']} is expiry-controlled (FEFO); give the expiry_date")
    if expiry_date is not None and expiry_date <= TODAY:
        raise ToolError(f"expiry date {expiry_date} is not in the future; refuse the goods instead")
    cursor = db.execute("INSERT INTO inventory (sku, location_id, lot, received_date, expiry_date, qty, qty_allocated) "
                        "VALUES (?, ?, ?, ?, ?, ?, 0)",
                        (line["sku"], location_id, lot.strip(), TODAY, expiry_date, qty))
    db.execute("UPDATE po_lines SET qty_received = qty_received + ? WHERE po_line_id = ?", (qty, line["po_line_id"]))
    remaining = scalar(db, "SELECT SUM(qty_ordered - qty_received) FROM po_lines WHERE po_id = ?", po_id)
    status = "received" if remaining == 0 else "partially_received"
    db.execute("UPDATE purchase_orders SET status = ? WHERE po_id = ?", (status, po_id))
    return {"inv_id": cursor.lastrowid, "po_id": po_id, "line_no": line_no, "sku": line["sku"], "qty": qty,
            "line_outstanding": outstanding - qty, "po_status": status}


@world.tool(writes=True)
def close_purchase_order(db: sqlite3.Connection, po_id: str, reason: str) -> dict[str, Any]:
    """Close a purchase order short: quantities still outstanding are cancelled and will not be received.

    Args:
        po_id: The purchase order to close.
        reason: Why the outstanding quantity is cancelled.
    """
    po = _purchase_order(db, po_id)
    if po["status"] not in ("open", "partially_received"):
        raise ToolError(f"purchase order {po_id} is {po['status']}; only open or partially received orders can "
                        "be closed short")
    cancelled = rows(db, "SELECT line_no, sku, qty_ordered - qty_received AS qty_cancelled FROM po_lines "
                         "WHERE po_id = ? AND qty_received < qty_ordered ORDER BY line_no", po_id)
    db.execute("UPDATE purchase_orders SET status = 'closed_short', close_reason = ? WHERE po_id = ?", (reason, po_id))
    return {"po_id": po_id, "status": "closed_short", "cancelled": cancelled}


@world.tool
def list_cycle_counts(db: sqlite3.Connection, status: str | None = None, zone: str | None = None,
                      count_date: str | None = None) -> dict[str, Any]:
    """Cycle counts with the system quantity at count time, the counted quantity and the variance in units.

    Args:
        status: counted (awaiting reconciliation), posted or recount.
        zone: Only counts in this zone, e.g. B.
        count_date: Only counts taken on this date, YYYY-MM-DD.
    """
    found = rows(db, "SELECT c.count_id, c.count_date, c.counted_by, c.inv_id, i.location_id, i.sku, i.lot, "
                     "c.system_qty, c.counted_qty, c.counted_qty - c.system_qty AS variance, c.status "
                     "FROM cycle_counts c JOIN inventory i USING (inv_id) JOIN locations l USING (location_id) "
                     "WHERE (? IS NULL OR c.status = ?) AND (? IS NULL OR l.zone = ?) "
                     "AND (? IS NULL OR c.count_date = ?) "
                     "ORDER BY c.count_id", status, status, zone, zone, count_date, count_date)
    return {"counts": found, "count": len(found)}


@world.tool(writes=True)
def resolve_cycle_count(db: sqlite3.Connection, count_id: str, action: Literal["post", "recount"]) -> dict[str, Any]:
    """Reconcile a counted cycle count: post it (the inventory is adjusted to the counted quantity and an
    adjustment is recorded at standard cost) or send the location for a recount (inventory unchanged).

    Args:
        count_id: The cycle count, e.g. CC-0301.
        action: post or recount.
    """
    count = one(db, "SELECT * FROM cycle_counts WHERE count_id = ?", count_id)
    if count is None:
        raise ToolError(f"cycle count {count_id} not found")
    if count["status"] != "counted":
        raise ToolError(f"cycle count {count_id} is already {count['status']}")
    if action == "recount":
        db.execute("UPDATE cycle_counts SET status = 'recount' WHERE count_id = ?", (count_id,))
        return {"count_id": count_id, "status": "recount"}
    stock = one(db, "SELECT * FROM inventory WHERE inv_id = ?", count["inv_id"])
    if stock is None:
        raise ToolError(f"inventory record {count['inv_id']} of count {count_id} no longer exists")
    if stock["qty"] != count["system_qty"]:
        raise ToolError(f"stock in {stock['location_id']} moved since the count (system now {stock['qty']}, "
                        f"{count['system_qty']} at count time); request a recount")
    delta = count["counted_qty"] - count["system_qty"]
    if stock["qty"] + delta < stock["qty_allocated"]:
        raise ToolError(f"posting would leave {stock['qty'] + delta} on hand, below the {stock['qty_allocated']} "
                        "allocated; release allocations first")
    value = round(delta * _sku(db, stock["sku"])["unit_cost"], 2)
    adjustment_id = None
    if delta:
        db.execute("UPDATE inventory SET qty = qty + ? WHERE inv_id = ?", (delta, stock["inv_id"]))
        adjustment_id = db.execute(
            "INSERT INTO adjustments (inv_id, sku, location_id, delta, value, reason, reference, posted_on) "
            "VALUES (?, ?, ?, ?, ?, 'CYCLE_COUNT', ?, ?)",
            (stock["inv_id"], stock["sku"], stock["location_id"], delta, value, count_id, TODAY)).lastrowid
    db.execute("UPDATE cycle_counts SET status = 'posted' WHERE count_id = ?", (count_id,))
    return {"count_id": count_id, "status": "posted", "delta": delta, "value": value,
            "adjustment_id": adjustment_id, "new_on_hand": stock["qty"] + delta}


# --- tasks --------------------------------------------------------------------------------------------------------

def _new_inventory(initial: sqlite3.Connection, final: sqlite3.Connection) -> list[dict[str, Any]]:
    old = {r["inv_id"] for r in rows(initial, "SELECT inv_id FROM inventory")}
    return [r for r in rows(final, "SELECT * FROM inventory ORDER BY inv_id") if r["inv_id"] not in old]


def _verify_short_receipt(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    new = _new_inventory(initial, final)
    got = sorted((r["sku"], r["location_id"], r["lot"], r["expiry_date"], r["qty"]) for r in new)
    want = [("SKU-1001", "RCV-02", "OT-25311", "2026-08-31", 40), ("SKU-1004", "RCV-02", "CP-25307", "2028-03-31", 120)]
    lines = {r["line_no"]: r["qty_received"] for r in rows(final, "SELECT * FROM po_lines WHERE po_id = 'PO-5521'")}
    po = one(final, "SELECT * FROM purchase_orders WHERE po_id = 'PO-5521'") or {}
    return [
        Check("received 40 oats and 120 chickpeas into RCV-02 with their lots and expiry dates", got == want,
              f"new inventory {got}"),
        Check("PO-5521 lines show 40 and 120 received", lines == {1: 40, 2: 120}, f"received {lines}"),
        Check("PO-5521 closed short", po.get("status") == "closed_short", f"status is {po.get('status')}"),
        only_changed(initial, final, "inventory", "inv_id", {r["inv_id"] for r in new}),
        only_changed(initial, final, "po_lines", "po_line_id", {11, 12}),
        only_changed(initial, final, "purchase_orders", "po_id", {"PO-5521"}),
        Check("answer states the 20-case shortage", mentions_number(answer, 20)),
    ]


world.task(ExecTask(
    id="receive_short_shipment", difficulty=1,
    instruction="Nordic Pantry's delivery for PO-5521 has been unloaded at dock location RCV-02. The dock team "
                "counted 40 cases of rolled oats (lot OT-25311, best before 2026-08-31) and 120 cases of canned "
                "chickpeas (lot CP-25307, best before 2028-03-31). Nordic Pantry has confirmed that anything missing "
                "will not be shipped. Receive what actually arrived and close out the PO, then tell me how much was "
                "short.",
    verify=_verify_short_receipt,
    reference=[Call("get_purchase_order", {"po_id": "PO-5521"}),
               Call("receive_po_line", {"po_id": "PO-5521", "line_no": 1, "qty": 40, "location_id": "RCV-02",
                                        "lot": "OT-25311", "expiry_date": "2026-08-31"}),
               Call("receive_po_line", {"po_id": "PO-5521", "line_no": 2, "qty": 120, "location_id": "RCV-02",
                                        "lot": "CP-25307", "expiry_date": "2028-03-31"}),
               Call("close_purchase_order", {"po_id": "PO-5521",
                                             "reason": "supplier short-shipped 20 cases of SKU-1001; "
                                                       "balance cancelled"})],
    answer="PO-5521 received into RCV-02: 40 of 60 cases of SKU-1001 rolled oats and all 120 cases of SKU-1004 "
           "chickpeas. The PO was closed short; 20 cases of oats were short and cancelled.",
    wrong=[Call("get_purchase_order", {"po_id": "PO-5521"}),
           Call("receive_po_line", {"po_id": "PO-5521", "line_no": 1, "qty": 60, "location_id": "RCV-02",
                                    "lot": "OT-25311", "expiry_date": "2026-08-31"}),
           Call("receive_po_line", {"po_id": "PO-5521", "line_no": 2, "qty": 120, "location_id": "RCV-02",
                                    "lot": "CP-25307", "expiry_date": "2028-03-31"})],
    wrong_answer="PO-5521 was received in full (60 cases of oats, 120 of chickpeas); nothing was short.",
    rubric="Line 1 (SKU-1001) ordered 60, 40 arrived; line 2 (SKU-1004) ordered 120, 120 arrived. Both go into "
           "RCV-02 with the given lots and expiry dates, the PO is closed short (status closed_short) and the "
           "shortage is 60 - 40 = 20 cases of oats. Receiving the ordered 60 instead of the counted 40 is wrong.",
))

_ALLOCATION = {(1, 11): 40, (1, 10): 50, (2, 21): 18, (2, 22): 6}


def _verify_allocation(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    got: dict[tuple[int, int], int] = {}
    for a in rows(final, "SELECT * FROM allocations WHERE order_id = 'SO-7728'"):
        got[(a["line_no"], a["inv_id"])] = got.get((a["line_no"], a["inv_id"]), 0) + a["qty"]
    allocated = {r["inv_id"]: r["qty_allocated"] for r in rows(final, "SELECT * FROM inventory")}
    order = one(final, "SELECT * FROM outbound_orders WHERE order_id = 'SO-7728'") or {}
    others = "SELECT * FROM allocations WHERE order_id <> 'SO-7728' ORDER BY allocation_id"
    return [
        Check("almond milk: 40 from lot AM2510B (exp 2025-12-05), 50 from AM2508 (exp 2026-03-01); gloves: 18 from "
              "B-02-02 (received 2025-08-14), 6 from R-11-01 (received 2025-09-30)", got == _ALLOCATION,
              f"allocations (line, inv_id): qty = {sorted(got.items())}"),
        Check("inventory allocated quantities updated",
              (allocated.get(10), allocated.get(11), allocated.get(21), allocated.get(22)) == (70, 40, 18, 6),
              f"inv 10/11/21/22 allocated {allocated.get(10)}/{allocated.get(11)}/{allocated.get(21)}/"
              f"{allocated.get(22)}"),
        Check("SO-7728 fully allocated", order.get("status") == "allocated", f"status is {order.get('status')}"),
        only_changed(initial, final, "inventory", "inv_id", {10, 11, 21, 22}),
        only_changed(initial, final, "order_lines", "order_line_id", {24, 25}),
        only_changed(initial, final, "outbound_orders", "order_id", {"SO-7728"}),
        Check("other orders' allocations untouched", rows(final, others) == rows(initial, others)),
    ]


world.task(ExecTask(
    id="allocate_by_rotation", difficulty=2,
    instruction="Allocate sales order SO-7728 for Fjord Market Bergen (ships 2025-11-20) in full. Follow each "
                "SKU's rotation rule: FEFO items take the lot with the nearest expiry first, FIFO items take the "
                "oldest received stock first. Use only stock that is still available (not already allocated) in "
                "active pick or reserve locations, and never allocate a lot that expires before the ship date.",
    verify=_verify_allocation,
    reference=[Call("get_order", {"order_id": "SO-7728"}),
               Call("get_sku", {"sku": "SKU-1002"}),
               Call("find_inventory", {"sku": "SKU-1002"}),
               Call("allocate_stock", {"order_id": "SO-7728", "line_no": 1, "inv_id": 11, "qty": 40}),
               Call("allocate_stock", {"order_id": "SO-7728", "line_no": 1, "inv_id": 10, "qty": 50}),
               Call("get_sku", {"sku": "SKU-2005"}),
               Call("find_inventory", {"sku": "SKU-2005"}),
               Call("allocate_stock", {"order_id": "SO-7728", "line_no": 2, "inv_id": 21, "qty": 18}),
               Call("allocate_stock", {"order_id": "SO-7728", "line_no": 2, "inv_id": 22, "qty": 6})],
    answer="SO-7728 is fully allocated. Almond milk (SKU-1002, FEFO): 40 from lot AM2510B in A-02-02 (exp "
           "2025-12-05) and 50 from lot AM2508 in A-02-01 (exp 2026-03-01); lot AM2507 expires 2025-11-18, before "
           "the ship date, and AM2509 is in quarantine. Gloves (SKU-2005, FIFO): 18 from B-02-02 (received "
           "2025-08-14) and 6 from R-11-01 (received 2025-09-30); the older B-02-01 stock is fully allocated.",
    wrong=[Call("get_order", {"order_id": "SO-7728"}),
           Call("find_inventory", {"sku": "SKU-1002"}),
           Call("allocate_stock", {"order_id": "SO-7728", "line_no": 1, "inv_id": 13, "qty": 30}),
           Call("allocate_stock", {"order_id": "SO-7728", "line_no": 1, "inv_id": 10, "qty": 60}),
           Call("find_inventory", {"sku": "SKU-2005"}),
           Call("allocate_stock", {"order_id": "SO-7728", "line_no": 2, "inv_id": 21, "qty": 18}),
           Call("allocate_stock", {"order_id": "SO-7728", "line_no": 2, "inv_id": 22, "qty": 6})],
    wrong_answer="SO-7728 allocated oldest stock first: almond milk 30 from A-03-01 and 60 from A-02-01; gloves 18 "
                 "from B-02-02 and 6 from R-11-01.",
    rubric="SKU-1002 is FEFO. Its lots: AM2507 (A-03-01) expires 2025-11-18, before the 2025-11-20 ship date - "
           "excluded; AM2509 is in quarantine QA-01 (on hold) - excluded; AM2510B (A-02-02) exp 2025-12-05, 40 "
           "available; AM2508 (A-02-01) exp 2026-03-01, 80 available (20 already allocated); AM2511 exp 2026-05-01. "
           "So 40 from inv 11 + 50 from inv 10. SKU-2005 is FIFO: B-02-01 (2025-07-02) has 0 available; B-02-02 "
           "(2025-08-14) 18; R-11-01 (2025-09-30) 60; C-01-01 (2025-10-28) 24. So 18 from inv 21 + 6 from inv 22. "
           "Allocating by received date for the almond milk (taking the short-dated AM2507) is wrong.",
))

_COUNTS_POSTED, _COUNTS_RECOUNT = {"CC-0301", "CC-0302", "CC-0304"}, {"CC-0303", "CC-0305"}


def _verify_cycle_counts(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    status = {r["count_id"]: r["status"] for r in rows(final, "SELECT * FROM cycle_counts")}
    on_hand = {r["inv_id"]: r["qty"] for r in rows(final, "SELECT * FROM inventory")}
    old = {r["adjustment_id"] for r in rows(initial, "SELECT adjustment_id FROM adjustments")}
    new = sorted((r["inv_id"], r["delta"], r["value"]) for r in rows(final, "SELECT * FROM adjustments")
                 if r["adjustment_id"] not in old)
    return [
        Check("CC-0301, CC-0302 and CC-0304 posted", all(status.get(c) == "posted" for c in _COUNTS_POSTED),
              f"statuses {sorted((c, status.get(c)) for c in _COUNTS_POSTED)}"),
        Check("CC-0303 ($192.00) and CC-0305 ($155.60) sent to recount",
              all(status.get(c) == "recount" for c in _COUNTS_RECOUNT),
              f"statuses {sorted((c, status.get(c)) for c in _COUNTS_RECOUNT)}"),
        Check("on hand: B-01-01 46, B-03-02 64; B-03-01 stays 30, B-04-01 stays 22",
              (on_hand.get(30), on_hand.get(33), on_hand.get(32), on_hand.get(34)) == (46, 64, 30, 22),
              f"inv 30/33/32/34 on hand {on_hand.get(30)}/{on_hand.get(33)}/{on_hand.get(32)}/{on_hand.get(34)}"),
        Check("exactly two adjustments: -2 (-43.20) and +4 (+50.00)", new == [(30, -2, -43.2), (33, 4, 50.0)],
              f"new adjustments {new}"),
        only_changed(initial, final, "inventory", "inv_id", {30, 33}),
        only_changed(initial, final, "cycle_counts", "count_id", _COUNTS_POSTED | _COUNTS_RECOUNT),
        Check("answer states the net posted value of 6.80", mentions_number(answer, 6.80)),
        Check("answer names the counts sent to recount", all(c in answer for c in _COUNTS_RECOUNT)),
    ]


world.task(ExecTask(
    id="reconcile_cycle_counts", difficulty=3,
    instruction="Reconcile the aisle B cycle counts taken on 2025-11-13 that are waiting for review. Policy: value "
                "each variance at the SKU's standard unit cost; if the absolute value is $150 or less, post the "
                "count (counts with no variance are posted too); if it is more than $150, send the location for a "
                "recount instead of posting. Tell me the net dollar value of the adjustments you posted and which "
                "counts went to recount.",
    verify=_verify_cycle_counts,
    reference=[Call("list_cycle_counts", {"status": "counted", "zone": "B", "count_date": "2025-11-13"}),
               Call("get_sku", {"sku": "SKU-2002"}),
               Call("get_sku", {"sku": "SKU-2006"}),
               Call("get_sku", {"sku": "SKU-2008"}),
               Call("get_sku", {"sku": "SKU-2003"}),
               Call("resolve_cycle_count", {"count_id": "CC-0301", "action": "post"}),
               Call("resolve_cycle_count", {"count_id": "CC-0302", "action": "post"}),
               Call("resolve_cycle_count", {"count_id": "CC-0303", "action": "recount"}),
               Call("resolve_cycle_count", {"count_id": "CC-0304", "action": "post"}),
               Call("resolve_cycle_count", {"count_id": "CC-0305", "action": "recount"})],
    answer="Posted CC-0301 (dish soap -2 = -$43.20), CC-0302 (no variance) and CC-0304 (zip bags +4 = +$50.00): net "
           "+$6.80. Sent to recount: CC-0303 (AA batteries -3 = -$192.00) and CC-0305 (laundry pods -4 = "
           "-$155.60), both over the $150 threshold.",
    wrong=[Call("list_cycle_counts", {"status": "counted", "zone": "B"}),
           Call("resolve_cycle_count", {"count_id": "CC-0301", "action": "post"}),
           Call("resolve_cycle_count", {"count_id": "CC-0302", "action": "post"}),
           Call("resolve_cycle_count", {"count_id": "CC-0303", "action": "post"}),
           Call("resolve_cycle_count", {"count_id": "CC-0304", "action": "post"}),
           Call("resolve_cycle_count", {"count_id": "CC-0305", "action": "post"})],
    wrong_answer="All five aisle B counts posted; variances are only a few cases each. Net adjustment -$340.80.",
    rubric="Aisle B counts of 2025-11-13: CC-0301 SKU-2002 -2 x 21.60 = -43.20 (post); CC-0302 SKU-2004 no "
           "variance (post); CC-0303 SKU-2006 -3 x 64.00 = -192.00 (recount); CC-0304 SKU-2008 +4 x 12.50 = "
           "+50.00 (post); CC-0305 SKU-2003 -4 x 38.90 = -155.60 (recount). Net posted = +6.80. Counts in aisles "
           "A and C (CC-0306, CC-0307) are out of scope and stay counted. Posting everything because the unit "
           "variances look small is wrong.",
))
