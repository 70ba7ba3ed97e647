"""Synthesis from an image: bill a client for a pool van's trip. The odometer at return is only on the yard's
photographed return-check form (beside other numbers: the next service, the fuel), the odometer at departure in the
fleet log (beside the van's earlier trips), and the rate per km Finance bills for pool vans is Finance's to tell."""

from __future__ import annotations

import random

from occubench.workplace.model import Clue, Drawing
from occubench.workplace.templates._shared import read_file, send_message, told
from occubench.workplace.templates.base import Family, Names, Piece, call, colleague, task

_CLIENTS = ("Halden Foods", "Marlow Events", "Crestline Builders", "Oakridge Clinic", "Pellham Studios",
            "Vantage Retail", "Northgate School", "Brookfield Farms")
_FUEL = ("1/4", "1/2", "3/4", "full")


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    van, other = names.code("VAN"), names.code("CAR")
    client = names.pick(_CLIENTS)
    driver, yard = names.person(), names.person()
    # Per km, for pool vans and for pool cars; the charge has a last cent that is not 0, so it is written one way.
    cents, car_cents = rng.sample([c for c in range(35, 62) if c % 10], 2)
    km = rng.choice([k for k in range(60, 481) if k * cents % 10])
    trips = sorted(rng.sample(range(3, 20), rng.randint(2, 3)), reverse=True)  # earlier trips, days ago
    departure = rng.randint(20_000, 90_000)
    legs = [rng.randint(40, 400) for _ in trips]
    odometer, rows = departure - sum(legs), []
    for days, leg in zip(trips, legs):  # the van's earlier trips, each ending where the next starts; another car's
        rows.append(f"2025-09-{30 - days:02d},{van},{odometer},{names.person()}")
        rows.append(f"2025-09-{30 - days:02d},{other},{rng.randint(20_000, 90_000)},{names.person()}")
        odometer += leg
    rows.append(f"2025-10-01,{van},{departure},{driver}")
    service = (departure + km) // 10_000 * 10_000 + 10_000
    charge = f"{km * cents / 100:.2f}"
    log, form = f"fleet/departures_{task_id}.csv", f"fleet/return_check_{van}.png"
    finance = colleague(names, "Billing accountant", "Finance", Clue(
        f"{task_id}-rate", f"Clients are billed EUR 0.{cents} per km for pool vans and EUR 0.{car_cents} per km for "
        "pool cars.", [["rate*", "per km", "per kilomet*", "mileage", "price*", "tariff*", "charge*", "bill*"]]))
    manager = colleague(names, "Fleet manager", "Logistics")
    fields = [["Vehicle", van], ["Driver", driver], ["Date", "1 Oct 2025"], ["Odometer at return (km)",
              str(departure + km)], ["Fuel level", rng.choice(_FUEL)], ["Next service due (km)", str(service)],
              ["Damage", "none"], ["Checked by", yard]]
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{driver} took pool van {van} to {client} this morning and brought it back. Work out the trip's "
                    f"distance in km (the yard photographed the van's return-check form: {form}; the departures are "
                    f"logged in {log}) and what {client} is charged for it at the rate per km that Finance bills "
                    f"for pool vans, then send {manager.name} the distance and the charge in EUR by {{deadline}}.",
                    [told("trip distance", 1, "The distance is the odometer at return, on the photographed "
                          "return-check form, less the odometer at this trip's departure in the fleet log (not an "
                          "earlier trip's).", manager.name, [str(km)]),
                     told("charge at the pool-van rate", 2, "The charge is the distance times the rate per km Finance "
                          "bills for pool vans (not the one for cars), in EUR with cents.", manager.name, [charge])],
                    [read_file(log),
                     call("read_image", file_path=form),
                     send_message(finance.name, "What rate per km do we bill clients for pool vans?"),
                     call("calculator", expression=f"({departure + km} - {departure}) * 0.{cents}"),
                     send_message(manager.name, f"{van}'s trip to {client}: {km} km, charged EUR {charge}.")],
                    hints=(f"The odometer at return is only on the photographed form {form}; the departure reading "
                           f"is in {log}, among earlier trips.",
                           f"Ask {finance.name} (Finance) what rate per km clients are billed for pool vans; the "
                           f"distance and the charge go to {manager.name}.",
                           f"read_image {form} for the odometer at return, read_file {log} for today's departure "
                           f"reading of {van}, subtract, ask {finance.name} for the pool-van rate, multiply with the "
                           f"calculator and send_message {manager.name} the distance and the charge."))],
        colleagues=[finance, manager],
        drive={log: "date,vehicle,odometer_out_km,driver\n" + "\n".join(rows) + "\n"},
        images={form: Drawing({"kind": "form", "title": "VEHICLE RETURN CHECK", "fields": fields},
                              "A photographed vehicle return-check form, filled in by hand. " +
                              ". ".join(f"{label}: {value}" for label, value in fields) + ".")},
    )


FAMILY = Family("fleet_mileage_claim", "synthesis", "easy", "Transportation & Logistics", build,
                tools=frozenset({"read_image"}))
