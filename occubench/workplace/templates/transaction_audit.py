"""Information synthesis: audit a transaction export against an approval rule that only Finance knows."""

from __future__ import annotations

import random

from occubench.workplace.model import Clue
from occubench.workplace.templates._shared import in_file, not_in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, colleague, task

_VENDORS = ("Northwind Supplies", "Blue Harbor Freight", "Quill & Co", "Metro Cleaning", "Atlas Print",
            "Vega Catering", "Helix Software", "Summit Travel", "Orbit Telecom", "Pine Office")


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    threshold = rng.choice((2500, 3000, 4000, 4500, 5000))
    finance = colleague(names, "Finance controller", "Finance",
                        Clue(f"{task_id}-threshold", f"Any transaction above {threshold:,} needs a second approver.",
                             [["threshold", "limit", "cutoff", "cut off", "approval rule", "second approv*"]]))
    manager = colleague(names, "Operations manager", "Operations")
    rows: list[str] = []
    flagged: list[str] = []
    clean: list[str] = []
    for _ in range(12):
        code = names.code("TX")
        amount = rng.choice((rng.randint(200, threshold - 100), rng.randint(threshold + 100, threshold * 3)))
        second = rng.choice(("", names.person().split()[0])) if amount > threshold else ""
        rows.append(f"{code},{rng.choice(_VENDORS)},{amount},{second}")
        (flagged if amount > threshold and not second else clean).append(code)
    if not flagged:  # every audit must find something
        code, vendor, _, _ = rows[0].split(",")
        rows[0] = f"{code},{vendor},{threshold * 2},"
        flagged, clean = [code], [c for c in clean if c != code]
    source = f"finance/transactions_{task_id}.csv"
    report = f"audit_{task_id}.txt"
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"Audit the transactions in {source} on the drive: find every transaction above the approval "
                    f"threshold that has no second approver. Write their ids, one per line, to {report} in your "
                    f"workspace and send the list to {manager.name} by {{deadline}}. Finance sets the threshold.",
                    [in_file("every flagged transaction listed", 2, "The report must list every transaction above the "
                             "threshold without a second approver; ask Finance for the threshold instead of guessing "
                             "it.", report, flagged),
                     not_in_file("no transaction listed wrongly", 1, "Transactions under the threshold, or with a "
                                 "second approver, do not belong in the report.", report, clean),
                     told("manager informed", 1, "Send the flagged ids to the manager who asked.",
                          manager.name, flagged)],
                    [read_file(source),
                     send_message(finance.name, "What is the approval threshold for transactions?"),
                     write_file(report, "\n".join(flagged)),
                     send_message(manager.name, "Flagged transactions: " + ", ".join(flagged))],
                    hints=(f"The transactions are in {source} on the drive; the approval threshold is not in the "
                           "file.",
                           f"Ask {finance.name} (Finance) for the approval threshold above which a transaction needs "
                           f"a second approver; the flagged ids go to {manager.name}.",
                           f"Read {source} with read_file, ask Finance for the threshold, pick every transaction "
                           "above it whose second_approver column is empty, write just their ids, one per line, to "
                           f"{report} with write_file, and send the same ids to {manager.name}."))],
        colleagues=[finance, manager],
        drive={source: "id,vendor,amount,second_approver\n" + "\n".join(rows) + "\n"},
    )


FAMILY = Family("transaction_audit", "synthesis", "easy", "Business & Enterprise", build)
