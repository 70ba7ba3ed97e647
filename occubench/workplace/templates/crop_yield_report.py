"""Information synthesis (easy): one crop's harvest per field and its average yield, from the farm's field register
and the weighbridge log on the drive. Other crops' fields are in the same files, and one field of the crop is not
harvested yet: its area must not count towards the average."""

from __future__ import annotations

import datetime as dt
import random
from fractions import Fraction

from occubench.workplace.templates._shared import in_file, not_in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, call, colleague, task

#: No field name is another's first words, so a name found in a text is that field.
_FIELDS = ("North Meadow", "Mill Field", "Long Acre", "Church Close", "Brook Piece", "Top Ground", "Kiln Field",
           "Barn Paddock", "Stony Lane", "Windmill Hill", "Oak Furlong", "Home Field", "Pond Close", "Rye Croft")
#: Crop → yield range in tenths of a tonne per hectare.
_CROPS = {"winter wheat": (70, 105), "spring barley": (50, 75), "oilseed rape": (30, 48), "oats": (50, 70),
          "field beans": (35, 55)}
_FARMS = ("Ashcombe", "Brackenridge", "Coldharbour", "Dunmore", "Eastleigh", "Fernhill")


def _average(total_kg: int, area_tenths: int) -> Fraction:
    """Tonnes per hectare."""
    return Fraction(total_kg, area_tenths * 100)


def _one_decimal(value: Fraction) -> str:
    return f"{round(value * 10) / 10:.1f}"


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    crop = rng.choice(("winter wheat", "spring barley", "oilseed rape"))
    others = [c for c in _CROPS if c != crop]
    farm = names.pick(_FARMS)
    while True:
        fields = rng.sample(_FIELDS, 7)
        harvested = fields[:rng.randint(3, 4)]
        pending = fields[len(harvested)]
        rest = fields[len(harvested) + 1:]
        area = {f: rng.randint(40, 160) for f in fields}  # tenths of a hectare
        crops = {**dict.fromkeys([*harvested, pending], crop), **{f: rng.choice(others) for f in rest}}
        tenths = {f: rng.randint(*_CROPS[crops[f]]) for f in fields}  # yield, tenths of t/ha
        total = {f: area[f] * tenths[f] * 10 for f in fields}  # kg: exact, so each field's yield has one decimal
        average = _average(sum(total[f] for f in harvested), sum(area[f] for f in harvested))
        with_pending = _average(sum(total[f] for f in harvested), sum(area[f] for f in [*harvested, pending]))
        unweighted = sum((Fraction(tenths[f], 10) for f in harvested), Fraction(0)) / len(harvested)
        # Far from a rounding edge, and different from the careless averages once rounded.
        if abs(average * 10 - round(average * 10)) < Fraction(2, 5) and \
                _one_decimal(average) not in (_one_decimal(with_pending), _one_decimal(unweighted)):
            break
    start = dt.date(2024, rng.choice((7, 8)), rng.randint(1, 12))
    log = []  # (date, field, loads, net kg): each harvested field over one to three days
    for f in [*harvested, *(f for f in rest if rng.random() < 0.7)]:
        days = rng.randint(1, 3)
        cuts = sorted(rng.sample(range(1, total[f] // 10), days - 1))
        parts = [10 * (b - a) for a, b in zip([0, *cuts], [*cuts, total[f] // 10])]
        first = start + dt.timedelta(days=rng.randint(0, 14))
        for day, kg in enumerate(parts):
            log.append((first + dt.timedelta(days=day), f, max(1, round(kg / 12000)), kg))
    log.sort()
    status = {f: "harvested" if any(row[1] == f for row in log) else "to harvest" for f in fields}
    manager = colleague(names, "Farm manager", f"{farm} Farm")
    register = f"farm/fields_{task_id}.csv"
    weighbridge = f"farm/weighbridge_log_{task_id}.csv"
    report = f"{crop.replace(' ', '_')}_yield_{task_id}.csv"
    lines = [f"{f},{total[f]},{tenths[f] / 10:.1f}" for f in sorted(harvested)]
    answer = _one_decimal(average)
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{manager.name} wants this season's {crop} harvest report for {farm} Farm. The field register "
                    f"(crop, area, harvest status) is {register} and the weighbridge log of every trailer weighed "
                    f"in is {weighbridge}, both on the drive. Write {report} in your workspace with one line per "
                    f"{crop} field harvested so far, as field,total_kg,t_per_ha (whole kilograms; tonnes per "
                    f"hectare with one decimal, e.g. Far Field,54320,7.6), and send {manager.name} the average "
                    f"{crop} yield in t/ha — all harvested weight over all harvested area, one decimal — by "
                    "{deadline}.",
                    [in_file("field totals right", 2, "Each line needs the field's harvested weight summed over every "
                             "day in the weighbridge log and that weight over the field's area from the register.",
                             report, lines),
                     not_in_file("only harvested fields of the crop", 1, "Fields of other crops, and fields of the "
                                 "crop not harvested yet, do not belong in the report.", report, [pending, *rest]),
                     told("manager told the average", 1, "The average is the total harvested weight over the total "
                          "harvested area — not the mean of the fields' yields, and not counting fields still to "
                          "harvest.", manager.name, [answer])],
                    [read_file(register),
                     read_file(weighbridge),
                     call("calculator", expression=" + ".join(str(row[3]) for row in log if row[1] == harvested[0])),
                     call("calculator", expression=f"({' + '.join(str(total[f]) for f in harvested)}) / "
                                                   f"({' + '.join(str(area[f] / 10) for f in harvested)}) / 1000"),
                     write_file(report, "\n".join(lines) + "\n"),
                     send_message(manager.name, f"The {crop} report is in {report}; average yield {answer} t/ha.")],
                    hints=(f"The field register {register} gives each field's crop, area and harvest status; the "
                           f"weighbridge log {weighbridge} has the weight harvested per field and day.",
                           f"Nobody needs to be asked: both files are on the drive, and {manager.name}, the farm "
                           "manager, only needs the report and the average.",
                           f"Read both files, keep the {crop} fields the register marks as harvested, add up each "
                           "one's weighbridge weights with the calculator and divide by its area (kg to tonnes), "
                           f"write field,total_kg,t_per_ha lines to {report}, then divide the summed weight by the "
                           f"summed area of those fields and message that average to {manager.name}."))],
        colleagues=[manager],
        drive={register: "field,crop,area_ha,status\n" + "".join(
                   f"{f},{crops[f]},{area[f] / 10:.1f},{status[f]}\n" for f in sorted(fields)),
               weighbridge: "date,field,trailer_loads,net_weight_kg\n" + "".join(
                   f"{d.isoformat()},{f},{n},{kg}\n" for d, f, n, kg in log)},
    )


FAMILY = Family("crop_yield_report", "synthesis", "easy", "Agriculture & Environment", build)
