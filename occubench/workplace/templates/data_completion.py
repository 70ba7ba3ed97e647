"""Information synthesis: fill the gaps in one column of a CSV. The missing values are on a supplier's spec sheet
somewhere on the drive (product shipping weights) or with Finance (employee cost centres)."""

from __future__ import annotations

import random

from occubench.workplace.model import Clue
from occubench.workplace.templates._shared import in_file, not_in_file, read_file, send_message, write_file
from occubench.workplace.templates.base import Family, Names, Piece, call, checkpoint, colleague, task

#: (product, category, packed weight range in tens of grams); no digits or commas, so a row matches as written.
_PRODUCTS = (("Desk lamp", "Lighting", 90, 260), ("Floor lamp", "Lighting", 350, 900),
             ("Storage crate", "Storage", 60, 180), ("Bamboo shelf", "Storage", 250, 700),
             ("Laundry basket", "Storage", 60, 150), ("Electric kettle", "Kitchen", 110, 190),
             ("Toaster", "Kitchen", 150, 320), ("Coffee grinder", "Kitchen", 60, 180),
             ("Mixing bowl set", "Kitchen", 90, 220), ("Chopping board", "Kitchen", 60, 190),
             ("Spice rack", "Kitchen", 80, 250), ("Door mat", "Home", 90, 300), ("Wall clock", "Home", 40, 140),
             ("Plant pot", "Garden", 50, 400), ("Watering can", "Garden", 40, 120),
             ("Cushion cover", "Textiles", 15, 60), ("Throw blanket", "Textiles", 50, 180),
             ("Bath towel set", "Textiles", 90, 250), ("Table runner", "Textiles", 15, 50))
_SUPPLIERS = ("Kestrel Components", "Lumen Works", "Brightfield Supply", "Orca Packaging", "Tallis Home",
              "Norrland Goods", "Cobalt Trading")
_DEPARTMENTS = ("Marketing", "Engineering", "Customer Support", "Logistics", "Legal", "Procurement")
_SITES = ("Lyon", "Porto", "Leeds", "Gdansk", "Utrecht", "Graz")


def _grams(rng: random.Random, low: int, high: int) -> int:
    """A weight in grams whose kilogram figure has exactly two decimals (e.g. 2350 g → 2.35 kg)."""
    while True:
        grams = rng.randint(low, high) * 10
        if grams % 100:
            return grams


def _near(rng: random.Random, grams: int, high: int, avoid: tuple[int, ...], signs: tuple[int, ...] = (-1, 1)) -> int:
    """Another such weight, 20 g to ``high`` tens of grams off ``grams`` (below it with ``signs=(-1,)``)."""
    while True:
        other = grams + rng.choice(signs) * rng.randint(2, max(3, high)) * 10
        if other > 0 and other % 100 and other not in avoid:
            return other


def _kg(grams: int) -> str:
    return f"{grams / 1000:.2f}"


def _fixable(bad: list[str], good: list[str]) -> list[str]:
    """Wrong values that never occur inside a right one (the checks compare substrings)."""
    return sorted({b for b in bad if not any(b.lower() in g.lower() for g in good)})


def _weights(rng: random.Random, names: Names, task_id: str) -> Piece:
    supplier = names.pick(_SUPPLIERS)
    slug = supplier.split()[0].lower()
    items = rng.sample(_PRODUCTS, rng.randint(10, 13))
    skus = [names.code(slug[:2].upper()) for _ in items]
    packed = {sku: _grams(rng, low, high) for sku, (_, _, low, high) in zip(skus, items)}
    # The product without its packaging, a tempting column; and last year's sheet, before the packaging changed.
    net = {sku: _near(rng, packed[sku], packed[sku] // 50, (), (-1,)) for sku in skus}
    old = {sku: _near(rng, packed[sku], packed[sku] // 80, (net[sku],)) for sku in skus}
    missing = sorted(rng.sample(skus, rng.randint(4, 5)))
    product = {sku: item[0] for sku, item in zip(skus, items)}
    rows = {sku: f"{sku},{name},{category}" for sku, (name, category, _, _) in zip(skus, items)}
    complete = {sku: f"{rows[sku]},{_kg(packed[sku])}" for sku in skus}
    source = f"catalogue/products_{task_id}.csv"
    sheet = f"suppliers/{slug}/spec_sheet_{task_id}.csv"
    archive = f"suppliers/{slug}/archive/spec_sheet_{task_id}_previous_year.csv"
    output = f"products_{task_id}_complete.csv"
    header = "sku,product,category,shipping_weight_kg"
    original = header + "\n" + "\n".join(rows[sku] + "," if sku in missing else complete[sku] for sku in skus) + "\n"
    final = header + "\n" + "\n".join(complete[sku] for sku in skus) + "\n"
    others = [item for item in _PRODUCTS if item[0] not in product.values()]
    for name, _, low, high in rng.sample(others, rng.randint(2, 3)):  # the supplier's products we do not sell
        sku = names.code(slug[:2].upper())
        product[sku] = name
        packed[sku] = _grams(rng, low, high)
        net[sku] = _near(rng, packed[sku], packed[sku] // 50, (), (-1,))
    spec = "sku,description,net_weight_g,packed_weight_g\n" + "\n".join(
        f"{sku},{product[sku]},{net[sku]},{packed[sku]}" for sku in sorted(product)) + "\n"
    old_spec = "sku,description,net_weight_g,packed_weight_g\n" + "\n".join(
        f"{sku},{product[sku]},{net[sku]},{old[sku]}" for sku in sorted(skus)) + "\n"
    right = [complete[sku] for sku in missing]
    wrong = _fixable([f"{rows[sku]},{value}" for sku in missing
                      for value in (_kg(net[sku]), _kg(old[sku]), str(packed[sku]), str(net[sku]))], right)
    manager = colleague(names, "E-commerce manager", "Digital")
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{manager.name} needs the product catalogue {source} complete before it goes to the web shop: "
                    f"some products have no shipping weight. The missing weights are on {supplier}'s current spec "
                    f"sheet, which is somewhere on the shared drive. Write the completed catalogue, same columns "
                    f"and rows, weights in kg, to {output} in your workspace by {{deadline}}.",
                    [in_file("missing weights filled", 2, "Every product without a shipping weight needed its weight "
                             "from the supplier's current spec sheet: the packed (shipping) weight, converted from "
                             "grams to kg. Find the sheet with open_folder instead of estimating.", output, right),
                     checkpoint("existing rows kept", 1,
                                "The completed file must keep every original row and value in the same columns.",
                                kind="file", path=output, values=[complete[sku] for sku in skus
                                                                  if sku not in missing]),
                     not_in_file("no wrong weights", 1, "The shipping weight is the packed weight from the current "
                                 "sheet in kg — not the net weight, not grams, and not last year's archived sheet. The "
                                 "rows already filled show which column matches.", output, wrong)],
                    [read_file(source),
                     call("open_folder", folder_path="suppliers"),
                     call("open_folder", folder_path=sheet.rpartition("/")[0]),
                     read_file(sheet),
                     write_file(output, final)],
                    hints=(f"The gaps are in {source}; {supplier}'s current spec sheet is somewhere under "
                           "suppliers/ on the drive, next to an archived one from last year.",
                           "Nobody needs to be asked: the weights are on the supplier's current sheet, and "
                           f"{manager.name} (Digital) only needs the completed file.",
                           f"Read {source}, use open_folder on suppliers/ to find {supplier}'s current spec sheet and "
                           "read it, take each missing product's packed weight in grams and convert it to kg with "
                           f"two decimals, then write the whole catalogue, gaps filled, to {output}."))],
        colleagues=[manager],
        drive={source: original, sheet: spec, archive: old_spec},
    )


def _cost_centres(rng: random.Random, names: Names, task_id: str) -> Piece:
    departments = sorted(rng.sample(_DEPARTMENTS, 3))
    sites = sorted(rng.sample(_SITES, 2))
    centre = {(d, s): names.code("CC") for d in departments for s in sites}
    # The gaps are department/site pairs no filled row shows; their department does appear at the other site.
    gaps = [(d, rng.choice(sites)) for d in rng.sample(departments, 2)]
    known = [pair for pair in centre if pair not in gaps]
    people = []
    for pair in gaps:
        people += [(pair, True) for _ in range(rng.randint(2, 3))]
    people += [(rng.choice(known), False) for _ in range(rng.randint(7, 9))]
    for pair in known:  # every known pair shows up at least once
        if not any(p == pair for p, _ in people):
            people.append((pair, False))
    rng.shuffle(people)
    rows, complete, missing = [], [], []
    for (department, site), gap in people:
        row = f"{names.code('E')},{names.person()},{department},{site}"
        rows.append(row + "," if gap else f"{row},{centre[department, site]}")
        complete.append(f"{row},{centre[department, site]}")
        if gap:
            missing.append((row, department, site))
    finance = colleague(
        names, "Management accountant", "Finance",
        Clue(f"{task_id}-cost-centres", "Cost centres go by department and site: " + "; ".join(
            f"{d} in {s}: {centre[d, s]}" for d, s in sorted(centre)) + ".",
             [["cost cent*", "costcent*", "cost code", "cc code"]]))
    manager = colleague(names, "HR manager", "People")
    source = f"hr/new_starters_{task_id}.csv"
    output = f"new_starters_{task_id}_complete.csv"
    header = "employee_id,name,department,site,cost_centre"
    right = [f"{row},{centre[d, s]}" for row, d, s in missing]
    wrong = _fixable([f"{row},{centre[d, other]}" for row, d, s in missing for other in sites if other != s] +
                     [f"{row},{centre[o, s]}" for row, d, s in missing for o in departments if o != d], right)
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{manager.name} needs the new-starter list {source} complete for payroll: some people have no "
                    "cost centre yet. Finance keeps the cost-centre list. Write the completed list, same columns "
                    f"and rows, to {output} in your workspace by {{deadline}}.",
                    [in_file("missing cost centres filled", 2, "Every new starter without a cost centre needed the one "
                             "Finance assigns to their department at their site; ask Finance rather than copying a "
                             "colleague's code.", output, right),
                     in_file("existing rows kept", 1,
                             "The completed file must keep every original row and value in the same columns.",
                             output, [c for c, r in zip(complete, rows) if c == r]),
                     not_in_file("no wrong cost centres", 1, "Cost centres depend on both the department and the site: "
                                 "the code of the same department at another site is wrong.", output, wrong)],
                    [read_file(source),
                     send_message(finance.name, "Could you send me the cost centres for each department and site?"),
                     write_file(output, header + "\n" + "\n".join(complete) + "\n")],
                    hints=(f"The gaps are in {source}; the cost-centre list is not on the drive, Finance keeps it.",
                           f"Ask {finance.name} (Finance) for the cost centre of each department at each site.",
                           f"Read {source}, ask Finance for the cost centres by department and site, fill each "
                           "empty cost_centre with the code of that row's department at that row's site, and write "
                           f"the whole list, same columns and rows, to {output}."))],
        colleagues=[finance, manager],
        drive={source: header + "\n" + "\n".join(rows) + "\n"},
    )


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    return rng.choice((_weights, _cost_centres))(rng, names, task_id)


FAMILY = Family("data_completion", "synthesis", "easy", "Commerce & Consumer", build)
