"""Information synthesis (hard): per-region sales of one product line during a campaign, from several regional
exports. Marketing has the campaign dates, product management the line's SKUs; the exports' README says which
orders count and that one region writes its dates day first."""

from __future__ import annotations

import datetime as dt
import random

from occubench.workplace.model import Clue
from occubench.workplace.templates._shared import in_file, not_in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, call, colleague, task

#: SKU prefix → (product line, product names). Names that sound like another line are the trap.
_CATALOGUE = {
    "DSK": ("Home Office", ("Standing desk", "Compact desk")),
    "CHR": ("Home Office", ("Ergonomic chair", "Task chair")),
    "LMP": ("Lighting", ("Desk lamp", "Floor lamp")),
    "LED": ("Lighting", ("LED light strip", "Ceiling panel")),
    "CAB": ("Storage", ("Filing cabinet", "Mobile pedestal")),
    "SHF": ("Storage", ("Wall shelf", "Bookcase")),
    "MAT": ("Accessories", ("Desk mat", "Chair mat")),
    "ARM": ("Accessories", ("Monitor arm", "Cable tray")),
    "ORG": ("Accessories", ("Drawer organiser", "Storage box")),
}
_LINES = ("Home Office", "Lighting", "Storage")
_REGIONS = ("Nordics", "Iberia", "Benelux", "DACH", "Baltics", "Alpine")
_CAMPAIGNS = ("Spring Refresh", "Back to Work", "Bright Days", "Smart Space", "Fresh Start", "Workspace Week")
_GROUPS = ("Regional sales leads", "Sales leadership", "Sales managers")
YEAR = 2024
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def _in_line(sku: str, line: str) -> bool:
    return _CATALOGUE[sku.split("-")[0]][0] == line


def _total(rows: list[dict], line: str, start: dt.date, end: dt.date, *, cancelled: bool = False,
           swap: bool = False, exclusive: bool = False) -> int:
    """The line's sales in the window; the keywords compute the tempting wrong totals (``swap``: the rows' dates
    are written day first and read month first)."""
    total = 0
    for row in rows:
        day = row["date"]
        if swap:  # a day-first date read month first (when that is a date at all)
            if day.day > 12:
                continue
            day = dt.date(day.year, day.day, day.month)
        inside = start <= day < end if exclusive else start <= day <= end
        if inside and _in_line(row["sku"], line) and (cancelled or row["status"] == "completed"):
            total += row["amount"]
    return total


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    line = rng.choice(_LINES)
    prefixes = sorted(p for p, (owner, _) in _CATALOGUE.items() if owner == line)
    others = sorted(p for p in _CATALOGUE if p not in prefixes)
    month = rng.randint(2, 9)
    first = dt.date(YEAR, month, 1)
    last = dt.date(YEAR, month + 2, 1) - dt.timedelta(days=1)  # exports cover two months
    start = dt.date(YEAR, month, rng.randint(8, 24))
    end = start + dt.timedelta(days=rng.randint(16, 27))
    campaign = names.pick(_CAMPAIGNS)
    regions = sorted(rng.sample(_REGIONS, rng.randint(3, 4)))
    legacy = rng.choice(regions)  # this region's export writes DD/MM/YYYY

    def date_in(low: dt.date, high: dt.date) -> dt.date:
        return low + dt.timedelta(days=rng.randint(0, (high - low).days))

    def row(sku_prefix: str, when: dt.date, status: str = "completed") -> dict:
        product = rng.choice(_CATALOGUE[sku_prefix][1])
        return {"date": when, "sku": names.code(sku_prefix), "product": product,
                "amount": rng.randint(6, 160) * 25, "status": status}

    exports: dict[str, list[dict]] = {}
    for region in regions:
        while True:
            rows = [row(rng.choice(prefixes), date_in(start, end)) for _ in range(2)]  # certainly counted
            rows.append(row(rng.choice(prefixes), date_in(first, start - dt.timedelta(days=1))
                            if rng.random() < 0.5 else date_in(end + dt.timedelta(days=1), last)))  # outside
            rows.append(row(rng.choice(others), date_in(start, end)))  # in the window, another line
            if region == regions[0]:
                rows.append(row(rng.choice(prefixes), date_in(start, end), "cancelled"))
                rows.append(row(rng.choice(prefixes), end))  # the last campaign day still counts
            for _ in range(rng.randint(6, 9)):
                rows.append(row(rng.choice(prefixes + others), date_in(first, last),
                                "cancelled" if rng.random() < 0.12 else "completed"))
            rows.sort(key=lambda r: (r["date"], r["sku"]))
            taken = [_total(exports[r], line, start, end) for r in exports]  # every region's total differs
            if _total(rows, line, start, end) not in taken:
                exports[region] = rows
                break
    totals = {region: _total(exports[region], line, start, end) for region in regions}
    right = [f"{region},{totals[region]}" for region in regions]
    summary_text = "\n".join(right) + "\n"
    tempting = []
    for region in regions:
        for wrong in (_total(exports[region], line, first, last), _total(exports[region], line, start, end,
                                                                          cancelled=True),
                      _total(exports[region], line, start, end, swap=region == legacy),
                      _total(exports[region], line, start, end, exclusive=True)):
            value = f"{region},{wrong}"
            if value.lower() not in summary_text.lower():  # the right total is in the text too
                tempting.append(value)
    tempting = sorted(set(tempting))

    folder = f"sales/exports_{task_id}"
    files = {}
    for region in regions:
        fmt = "%d/%m/%Y" if region == legacy else "%Y-%m-%d"
        files[f"{folder}/{region.lower()}.csv"] = "date,order_id,sku,product,amount_eur,status\n" + "\n".join(
            f"{r['date'].strftime(fmt)},{names.code('SO')},{r['sku']},{r['product']},{r['amount']},{r['status']}"
            for r in exports[region]) + "\n"
    period = f"{_MONTHS[first.month - 1]} and {_MONTHS[last.month - 1]} {YEAR}"
    files[f"{folder}/README.txt"] = (
        f"Regional sales exports for {period}, one file per region.\n"
        "Amounts are in EUR excluding VAT.\n"
        "Cancelled orders stay in the exports with status 'cancelled'; they never count towards sales.\n"
        f"The {legacy} file comes from the old ERP and writes dates as DD/MM/YYYY; the other files use "
        "YYYY-MM-DD.\n")

    head = colleague(names, "Head of Sales", "Sales")
    leads = [colleague(names, f"Sales lead {region}", "Sales") for region in regions]
    group = names.pick(_GROUPS)
    marketing = colleague(names, "Campaign manager", "Marketing",
                          Clue(f"{task_id}-window",
                               f"The {campaign} campaign ran from {start.day} {_MONTHS[start.month - 1]} to "
                               f"{end.day} {_MONTHS[end.month - 1]} {YEAR}, both days included.",
                               [["campaign", "date", "period", "window", "when", "start", "started", "end", "ended"]]))
    names_of = {p: " and ".join(s.lower() + "s" for s in _CATALOGUE[p][1]) for p in prefixes}
    product = colleague(names, "Product manager", "Product",
                        Clue(f"{task_id}-line", f"The {line} line is exactly the SKUs starting with " +
                             " or ".join(f"{p}- ({names_of[p]})" for p in prefixes) +
                             ". Anything else belongs to another line, whatever its name suggests.",
                             [["line", "sku", "product", "belong", "include", "included", "definition", "define",
                               "defined", "consist", "range", "which items"]]))
    summary = f"{line.lower().replace(' ', '_')}_campaign_{task_id}.csv"
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{head.name} wants the {line} sales per region for the {campaign} campaign. The regional "
                    f"exports, with a README, are in {folder}/ on the drive. Marketing knows the campaign dates and "
                    f"product management decides which SKUs make up the {line} line. Write {summary} in your "
                    "workspace with one line per region as region,total (whole euros, e.g. Nordics,12500) and "
                    f"post the totals to the {group} group chat by {{deadline}}.",
                    [in_file("regional totals right", 3, "Each region's total is the sum of its completed orders for "
                             "the product line's SKUs dated within the campaign, both end days included; the campaign "
                             "dates come from Marketing, the line's SKUs from product management, and the README "
                             "explains the export formats.", summary, right),
                     not_in_file("no out-of-scope sales", 1, "Totals must leave out cancelled orders, orders outside "
                                 "the campaign window and other product lines, and read each export's dates in its own "
                                 "format.", summary, tempting),
                     told("totals posted to the group", 2,
                          "Post every region's total to the group chat named in the task.",
                          group, [str(totals[r]) for r in regions])],
                    [call("open_folder", folder_path=folder),
                     read_file(f"{folder}/README.txt"),
                     *(read_file(f"{folder}/{region.lower()}.csv") for region in regions),
                     send_message(marketing.name, f"When did the {campaign} campaign run?"),
                     send_message(product.name, f"Which SKUs belong to the {line} product line?"),
                     call("calculator", expression=" + ".join(
                         str(r["amount"]) for r in exports[regions[0]]
                         if start <= r["date"] <= end and r["status"] == "completed" and _in_line(r["sku"], line))),
                     write_file(summary, summary_text),
                     call("send_message", to=group, text=f"{line} sales during the {campaign} campaign: " +
                          "; ".join(f"{r} {totals[r]}" for r in regions))],
                    hints=(f"The regional exports and a README are in {folder}/ on the drive; the README says "
                           "which orders count and how each file writes its dates.",
                           f"Ask {marketing.name} (Marketing) when the {campaign} campaign ran, and {product.name} "
                           f"(product management) which SKUs make up the {line} line.",
                           f"List {folder}/ and read the README and every export, ask for the campaign dates and the "
                           "line's SKUs, add up per region the completed orders of those SKUs dated within the "
                           "campaign (both end days included, each file's dates read in its own format) with the "
                           f"calculator, write region,total lines to {summary}, and post the totals to the {group} "
                           "group chat."))],
        colleagues=[head, *leads, marketing, product],
        drive=files,
        groups={group: sorted([head.name, *(lead.name for lead in leads)])},
    )


FAMILY = Family("sales_summary", "synthesis", "hard", "Commerce & Consumer", build)
