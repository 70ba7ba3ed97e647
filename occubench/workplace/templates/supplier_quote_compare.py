"""Optimisation (easy): pick the cheapest supplier quote in total (unit price times quantity, plus shipping) among
those that deliver in time and accept the quantity. How soon the goods are needed is the store manager's to say;
the lowest unit price, or the cheapest quote that delivers too late, is not the answer."""

from __future__ import annotations

import random

from occubench.workplace.model import Clue
from occubench.workplace.templates._shared import csv, in_file, not_in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, colleague, task

#: Supplier names; no name occurs inside another.
_SUPPLIERS = ("Brightline Wholesale", "Keystone Traders", "Meridian Supply Co", "Oakridge Distribution",
              "Pioneer Packaging", "Redwood Retail Supply", "Silverline Goods", "Trident Wholesale", "Union Paper Co",
              "Westbrook Trading", "Harbourside Supplies", "Northgate Merchants")
#: (product, what it is counted in, unit price range in cents)
_PRODUCTS = (("Thermal receipt rolls", "boxes", (180, 420)), ("Paper carrier bags", "packs", (240, 610)),
             ("Shelf-edge price labels", "rolls", (320, 780)), ("Hand sanitiser refills", "bottles", (150, 390)),
             ("Medium gift boxes", "cartons", (90, 260)), ("Barcode scanner batteries", "packs", (410, 890)),
             ("Cleaning wipes", "tubs", (130, 340)), ("Coat hangers", "bundles", (210, 520)))
_STORES = ("Camden", "Brixton", "Leith", "Clifton", "Headingley", "Jesmond", "Ancoats", "Roath")


def _total(quote: tuple[str, int, int, int, int], quantity: int) -> int:
    _, cents, _, _, shipping = quote
    return cents * quantity // 100 + shipping


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    product, unit, (low, high) = rng.choice(_PRODUCTS)
    quantity = rng.choice((200, 300, 400, 500, 600, 800))
    days = rng.choice((3, 4, 5, 7))
    while True:
        suppliers = rng.sample(_SUPPLIERS, rng.randint(5, 7))
        quotes = []  # (supplier, unit price in cents, minimum order, delivery days, shipping EUR)
        for supplier in suppliers:
            quotes.append((supplier, rng.randint(low, high), rng.choice((50, 100, 100, 250, 500, 1000)),
                           rng.choice((2, 3, 4, 5, 6, 7, 8, 10, 12, 14)), rng.choice((0, 25, 40, 60, 85, 120, 150))))
        valid = sorted((q for q in quotes if q[3] <= days and q[2] <= quantity), key=lambda q: _total(q, quantity))
        if len(valid) < 2 or _total(valid[0], quantity) == _total(valid[1], quantity):
            continue
        best = valid[0]
        # The careless picks: the lowest unit price; the lowest total ignoring delivery; ignoring the minimum
        # order; the lowest unit price among the valid quotes (shipping forgotten). Each must be another supplier.
        careless = [min(quotes, key=lambda q: q[1]),
                    min((q for q in quotes if q[2] <= quantity), key=lambda q: _total(q, quantity)),
                    min((q for q in quotes if q[3] <= days), key=lambda q: _total(q, quantity)),
                    min(valid, key=lambda q: q[1])]
        traps = {q[0] for q in careless[:3]} - {best[0]}
        if len(traps) >= 2 and careless[1][0] != best[0] and \
                all(_total(q, quantity) != _total(best, quantity) for q in quotes if q is not best):
            break
    total = _total(best, quantity)
    others = sorted(q[0] for q in quotes if q is not best)
    store = rng.choice(_STORES)
    manager = colleague(names, "Store manager", f"{store} store",
                        Clue(f"{task_id}-delivery",
                             f"We run out in a few days: the {product.lower()} must be delivered within {days} days "
                             "of ordering. Any supplier that takes longer is no use to us, however cheap.",
                             [["deliver*", "lead time", "how soon", "how fast", "when", "days", "arrive", "urgent",
                               "deadline"]]))
    buyers = [colleague(names, "Buyer", "Procurement") for _ in range(2)]
    group = f"procurement-{task_id}"
    source = f"purchasing/quotes_{product.split()[0].lower()}_{task_id}.csv"
    note = f"quote_choice_{task_id}.txt"
    table = csv("supplier,unit_price_eur,min_order_qty,delivery_days,shipping_eur",
                ((s, f"{c / 100:.2f}", m, d, sh) for s, c, m, d, sh in quotes))
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"The {store} store needs {quantity} {unit} of {product.lower()}. Quotes from our suppliers are "
                    f"in {source} on the drive. Pick the quote with the lowest total cost (unit price times "
                    "quantity plus shipping) among the suppliers that accept the quantity and deliver in time — "
                    f"{manager.name}, the store manager, knows how soon it is needed. Write the supplier and the "
                    f"total in whole euros to {note} in your workspace (only the chosen supplier), and post both in "
                    f"the {group} group chat by {{deadline}}.",
                    [in_file("best valid quote chosen", 2, "Among the suppliers that accept the quantity and deliver "
                             "within the store manager's limit, take the lowest total of unit price times quantity "
                             "plus shipping, and give that total.", note, [best[0], str(total)]),
                     not_in_file("only the chosen supplier", 1,
                                 "The note should name only the chosen supplier, not the ones compared.", note, others),
                     told("procurement told", 1,
                          "Post the chosen supplier and the total in the procurement group chat.",
                          group, [best[0], str(total)])],
                    [read_file(source),
                     send_message(manager.name, f"How soon must the {product.lower()} be delivered?"),
                     write_file(note, f"Supplier: {best[0]}\nTotal: EUR {total}\n"),
                     send_message(group, f"Please order {quantity} {unit} of {product.lower()} from {best[0]}: EUR "
                                  f"{total} in total.")],
                    hints=(f"The quotes are in {source} on the drive; the delivery limit is not written there.",
                           f"Ask {manager.name}, the store manager, how many days the delivery may take at most; "
                           f"the {group} group chat receives the choice.",
                           f"read_file {source}; send_message {manager.name} for the delivery limit; drop the "
                           "quotes that deliver later or whose minimum order is above the quantity; for the rest "
                           "compute unit price times quantity plus shipping (the calculator helps) and take the "
                           f"lowest; write_file {note} with that supplier and total only; send_message the "
                           f"{group} group the supplier and the total."))],
        colleagues=[manager, *buyers],
        drive={source: table},
        groups={group: [b.name for b in buyers]},
    )


FAMILY = Family("supplier_quote_compare", "optimisation", "easy", "Commerce & Consumer", build)
