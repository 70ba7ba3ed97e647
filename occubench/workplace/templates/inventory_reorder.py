"""Optimisation (easy): order each item up to its target stock, counting stock on hand and every shipment already on
the way; the target rule is the supply planner's."""

from __future__ import annotations

import random
import re

from occubench.workplace.model import Clue
from occubench.workplace.templates._shared import in_file, not_in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, colleague, task

_ITEMS = ("Nitrile gloves, box of 100", "A4 copy paper, ream", "Pallet wrap film, roll", "Packing tape, 6-pack",
          "Shipping cartons 40x30x30", "Thermal labels, roll", "Hand sanitiser 500 ml", "Safety glasses",
          "Hi-vis vests", "Cable ties, bag of 500", "Bubble wrap, roll", "Printer toner, black", "Mop heads",
          "Bin liners, pack of 50", "Ear plugs, box of 200", "AA batteries, 24-pack", "Void fill paper, roll",
          "Marker pens, box of 12")
_MONTHS = ("Mar", "Apr", "May", "Jun", "Sep", "Oct")


def _flat(text: str) -> str:
    """As the scorer reads a file: a comma between a digit and three more digits is a thousands separator, so
    "SKU-1234,150" is compared as "SKU-1234150"; checked values are given in that form too."""
    return re.sub(r"(?<=\d),(?=\d{3})", "", text)


def _orders(weeks: int, stock: list[tuple[int, int]], incoming: list[int]) -> list[int]:
    return [max(0, weeks * demand - on_hand - coming) for (on_hand, demand), coming in zip(stock, incoming)]


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    count = rng.randint(10, 14)
    items = rng.sample(_ITEMS, count)
    skus = [names.code("SKU") for _ in range(count)]
    weeks = rng.choice((3, 4, 5, 6))
    while True:
        stock = []  # (on hand, average weekly demand)
        for _ in range(count):
            demand = rng.randint(3, 30) * 2
            stock.append((rng.randint(0, (weeks + 1) * demand), demand))
        shipments = []  # (item index, quantity)
        for i in sorted(rng.sample(range(count), rng.randint(5, 7))):
            for _ in range(rng.choice((1, 1, 2))):
                shipments.append((i, rng.choice((10, 20, 25, 40, 50, 60, 80, 100))))
        incoming = [sum(q for j, q in shipments if j == i) for i in range(count)]
        first = [next((q for j, q in shipments if j == i), 0) for i in range(count)]
        last = [next((q for j, q in reversed(shipments) if j == i), 0) for i in range(count)]
        orders = _orders(weeks, stock, incoming)
        lines = [f"{skus[i]},{orders[i]}" for i in range(count) if orders[i] > 0]
        careless = [_orders(weeks, stock, [0] * count), _orders(weeks, stock, first), _orders(weeks, stock, last),
                    *(_orders(other, stock, incoming) for other in range(2, 8) if other != weeks)]
        if not 4 <= len(lines) <= 9 or len(lines) == count or not 6 <= len(shipments) <= 10:
            continue
        # Ignoring the shipments on the way must change the order, also by bringing in an item that needs
        # nothing; so must counting only one shipment of an item that has two, whichever one is counted.
        short = [weeks * stock[i][1] - stock[i][0] for i in range(count)]
        if not any(o == 0 < c for o, c in zip(orders, careless[0])) or \
                not any(short[i] > max(q for j, q in shipments if j == i) for i in range(count)
                        if sum(j == i for j, _ in shipments) > 1):
            continue
        # A wrong line count must not contain the right one ("14 order lines" holds "4 order lines").
        if any(str(sum(q > 0 for q in alternative)).endswith(str(len(lines))) and alternative != orders
               and sum(q > 0 for q in alternative) != len(lines) for alternative in careless):
            continue
        break
    content = "\n".join(lines) + "\n"
    skip = [skus[i] for i in range(count) if orders[i] == 0]
    wrong = {f"{skus[i]},{alternative[i]}" for alternative in careless for i in range(count) if alternative[i] > 0}
    absent = sorted({*skip, *(_flat(line) for line in wrong if _flat(line).lower() not in _flat(content).lower())})
    planner = colleague(names, "Supply planner", "Supply Chain",
                        Clue(f"{task_id}-target", f"Our target is {weeks} weeks of average weekly demand per item. "
                             "Order up to that, after counting what's on hand and everything already on the way.",
                             [["target", "rule", "how much", "how many", "week", "cover", "safety", "reorder*",
                               "policy", "level", "stock"]]))
    buyer = colleague(names, "Buyer", "Procurement")
    stock_file = f"inventory/stock_levels_{task_id}.csv"
    inbound_file = f"inventory/incoming_shipments_{task_id}.csv"
    report = f"reorder_{task_id}.csv"
    month = rng.choice(_MONTHS)
    stock_rows = [f'{skus[i]},"{items[i]}",{stock[i][0]},{stock[i][1]}' for i in range(count)]
    inbound_rows = sorted(f"{names.code('PO')},{skus[i]},{q},{rng.randint(2, 27)} {month}" for i, q in shipments)
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"Prepare this week's consumables reorder for {buyer.name} (purchasing). Stock on hand and "
                    f"average weekly demand are in {stock_file}, shipments already ordered are in {inbound_file} on "
                    f"the drive. Each item is ordered up to its target stock; {planner.name}, the supply planner, "
                    f"sets the target rule. Write the order lines to {report} in your workspace, one line per item "
                    "to order as sku,quantity (leave out items that need nothing), and tell "
                    f"{buyer.name} how many lines the order has, in the form '<n> order lines', by {{deadline}}.",
                    [in_file("order quantities right", 2, "Each quantity is the planner's target minus the stock on "
                             "hand minus every shipment already on the way for that item; ask the planner for the "
                             "target rule.", report, [_flat(line) for line in lines]),
                     not_in_file("nothing ordered wrongly", 1, "Items already covered by stock and incoming shipments "
                                 "must not be in the order, and no quantity may come from a different rule.",
                                 report, absent),
                     told("buyer told the line count", 1,
                          "Tell the buyer how many order lines there are, in the form asked for.",
                          buyer.name, [f"{len(lines)} order lines"])],
                    [read_file(stock_file),
                     read_file(inbound_file),
                     send_message(planner.name, "What is the target stock rule for reordering?"),
                     write_file(report, content),
                     send_message(buyer.name, f"The reorder is in {report}: {len(lines)} order lines.")],
                    hints=(f"Stock on hand and weekly demand are in {stock_file}, the shipments already ordered in "
                           f"{inbound_file}; the target stock rule is in neither.",
                           f"Ask {planner.name}, the supply planner, for the target stock rule; the line count goes "
                           f"to {buyer.name} (purchasing).",
                           "Read both files, ask the planner for the target, and for each item take the target minus "
                           "the stock on hand minus every shipment on the way for that sku; write sku,quantity for "
                           f"the items that need more than nothing to {report}, and message {buyer.name} how many "
                           "lines that is, as '<n> order lines'."))],
        colleagues=[planner, buyer],
        drive={stock_file: "sku,item,on_hand,avg_weekly_demand\n" + "\n".join(stock_rows) + "\n",
               inbound_file: "po,sku,quantity,expected\n" + "\n".join(inbound_rows) + "\n"},
    )


FAMILY = Family("inventory_reorder", "optimisation", "easy", "Transportation & Logistics", build)
