"""Optimisation (hard): consolidate the ready orders for one city into a single shipment and pick the cheapest carrier
quote that can take it: enough pallet places, certified for dangerous goods when an order needs it, and fast enough
for the customer — a limit only customer service knows. Each shortcut (ignoring the limit, the certification, the
capacity, or counting orders on hold) leads to another quote or another price."""

from __future__ import annotations

import random

from occubench.workplace.model import Clue
from occubench.workplace.templates._shared import in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, call, colleague, task

_CITIES = ("Lyon", "Milan", "Rotterdam", "Poznan", "Brno", "Ghent", "Bilbao", "Graz", "Porto", "Aarhus")
_CUSTOMERS = ("Keller Maschinenbau", "Dalsgaard Foods", "Moretti Ceramiche", "Van Dijk Retail", "Novak Components",
              "Iberia Paints", "Lindgren Medical", "Aurelio Textiles", "Hofer Pharma", "Baltic Timber")
_CARRIERS = ("Nordline Freight", "Trans-Alp Cargo", "BlueRoad Logistics", "EuroPal Express", "Kestrel Haulage",
             "Meridian Transport", "Swift Groupage", "Orion Road", "Delta Carriers", "Vanguard Trucking")
_SERVICES = ("groupage", "part load", "dedicated truck", "express part load")


def _cost(quote: dict, pallets: int) -> int:
    return quote["fixed"] + quote["rate"] * pallets


def _cheapest(quotes: list[dict], pallets: int, *, limit: int | None, hazardous: bool,
              capacity: bool = True) -> dict | None:
    """The cheapest quote that takes the shipment; a rule is ignored when its argument says so."""
    fit = [q for q in quotes if (not capacity or q["max"] >= pallets) and (limit is None or q["days"] <= limit)
           and (q["adr"] or not hazardous)]
    return min(fit, key=lambda q: _cost(q, pallets), default=None)


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    city, elsewhere = names.pick(_CITIES), names.pick(_CITIES)
    customer = rng.choice(_CUSTOMERS)
    limit = rng.choice((1, 2, 3))
    carriers = rng.sample(_CARRIERS, 7)
    while True:
        # Orders: the ready ones for the city, some on hold for it, and some ready for another city.
        ready = [(rng.randint(2, 8), rng.random() < 0.3) for _ in range(rng.randint(3, 5))]
        held = [(rng.randint(2, 8), rng.random() < 0.3) for _ in range(rng.randint(1, 2))]
        pallets = sum(p for p, _ in ready)
        hazardous = any(h for _, h in ready)
        quotes = [{"carrier": c, "service": rng.choice(_SERVICES), "fixed": rng.randint(6, 40) * 10,
                   "rate": rng.randint(8, 30) * 5, "max": rng.choice((12, 18, 24, 33)), "days": rng.randint(1, 5),
                   "adr": rng.random() < 0.6} for c in carriers]
        best = _cheapest(quotes, pallets, limit=limit, hazardous=hazardous)
        if best is None:
            continue
        costs = sorted(_cost(q, pallets) for q in quotes if _cheapest([q], pallets, limit=limit,
                                                                        hazardous=hazardous))
        if len(costs) < 2 or costs[1] - costs[0] < 30:
            continue  # a clear winner among the quotes that qualify
        careless = [_cheapest(quotes, pallets, limit=None, hazardous=hazardous),
                    _cheapest(quotes, pallets, limit=limit, hazardous=False),
                    _cheapest(quotes, pallets, limit=limit, hazardous=hazardous, capacity=False)]
        if careless[0] is best or not any(c is not best for c in careless[1:]):
            continue  # the customer's limit always matters, and so does one of the other rules
        break
    total = _cost(best, pallets)
    codes = [names.code("QT") for _ in quotes]
    chosen = codes[quotes.index(best)]
    other_lane = [{"carrier": rng.choice(carriers), "service": rng.choice(_SERVICES),
                   "fixed": rng.randint(6, 40) * 10, "rate": rng.randint(5, 20) * 5, "max": 33,
                   "days": rng.randint(1, 2), "adr": True} for _ in range(2)]  # cheap and fast, but the wrong lane
    lines = sorted([(code, city, q) for code, q in zip(codes, quotes)] +
                   [(names.code("QT"), elsewhere, q) for q in other_lane], key=lambda r: r[0])
    orders = [(names.code("SO"), customer, city, p, h, "ready") for p, h in ready]
    orders += [(names.code("SO"), customer, city, p, h, "on hold") for p, h in held]
    orders += [(names.code("SO"), rng.choice([c for c in _CUSTOMERS if c != customer]), elsewhere,
                rng.randint(2, 8), rng.random() < 0.3, "ready") for _ in range(rng.randint(2, 3))]
    orders.sort()
    service = colleague(names, "Customer service representative", "Customer Service",
                        Clue(f"{task_id}-limit", f"{customer} needs the goods within {limit} transit day"
                             f"{'s' if limit > 1 else ''} of collection — their line in {city} stops otherwise, so "
                             "nothing slower will do.",
                             [["transit", "deliver*", "deadline", "lead time", "how fast", "how quickly", "by when",
                               "latest", "arrive", "arrival", "urgent*", "days"]]))
    manager = colleague(names, "Logistics manager", "Logistics")
    order_file = f"logistics/open_orders_{task_id}.csv"
    quote_file = f"logistics/carrier_quotes_{task_id}.csv"
    note = f"freight_choice_{task_id}.txt"
    rejected = [code for code in codes if code != chosen]
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{manager.name} wants all {customer} orders that are ready to ship to {city} sent as one "
                    f"consolidated shipment at the lowest cost. Open orders (pallets, dangerous goods) are in "
                    f"{order_file} and this week's carrier quotes per lane in {quote_file} on the drive; a quote's "
                    "price is its fixed fee plus its rate per pallet, and dangerous goods need a carrier with ADR "
                    "certification. Customer service knows how fast the customer needs the goods. Write the "
                    f"chosen quote id and its total price (whole euros) to {note} in your workspace, and send both "
                    f"to {manager.name} by {{deadline}}.",
                    [in_file("cheapest feasible quote chosen", 2, "Count the pallets of the ready orders only; keep "
                             "the quotes for that city with room for all of them, within the customer's transit limit "
                             "(ask customer service) and ADR-certified if any order is dangerous goods; then take the "
                             "lowest fixed fee plus rate times pallets.", note, [chosen, str(total)], absent=rejected),
                     told("manager told the choice", 1, "Send the manager the chosen quote and its total price.",
                          manager.name, [chosen, str(total)])],
                    [read_file(order_file),
                     read_file(quote_file),
                     send_message(service.name,
                                  f"How many transit days can {customer} accept for the {city} delivery?"),
                     call("calculator", expression=f"{best['fixed']} + {best['rate']} * {pallets}"),
                     write_file(note, f"{chosen}: EUR {total}\n"),
                     send_message(manager.name,
                                  f"Cheapest feasible option for the {city} shipment: quote {chosen}, EUR {total}.")],
                    hints=(f"The orders are in {order_file} and the carrier quotes in {quote_file} on the drive; "
                           "the customer's transit limit is in neither.",
                           f"Ask {service.name} (customer service) how many transit days {customer} can accept; "
                           f"the choice goes to {manager.name}.",
                           f"Read both files, add up the pallets of the ready {customer} orders to {city} and note "
                           "whether any is dangerous goods, ask customer service for the transit limit, drop the "
                           f"{city} quotes that are too slow, too small or not ADR-certified when needed, price the "
                           "rest as fixed fee plus rate times pallets with the calculator, write the cheapest quote's "
                           f"id and price to {note}, and message both to {manager.name}."))],
        colleagues=[service, manager],
        drive={order_file: "order_id,customer,city,pallets,dangerous_goods,status\n" + "".join(
                   f"{o},{c},{t},{p},{'yes' if h else 'no'},{s}\n" for o, c, t, p, h, s in orders),
               quote_file: "quote_id,lane,carrier,service,fixed_fee_eur,rate_per_pallet_eur,max_pallets,"
                           "transit_days,adr_certified\n" + "".join(
                   f"{code},to {lane},{q['carrier']},{q['service']},{q['fixed']},{q['rate']},{q['max']},"
                   f"{q['days']},{'yes' if q['adr'] else 'no'}\n" for code, lane, q in lines)},
    )


FAMILY = Family("freight_consolidation", "optimisation", "hard", "Transportation & Logistics", build)
