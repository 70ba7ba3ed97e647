"""Optimisation: pick the projects to fund under a budget cap that only the CFO's office knows, maximising the total
expected value (a small knapsack with a unique best choice, where ranking by value for money falls short)."""

from __future__ import annotations

import random
from itertools import combinations

from occubench.workplace.model import Clue
from occubench.workplace.templates._shared import in_file, not_in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, colleague, task

_PROJECTS = (("Warehouse scanner refresh", "Supply Chain"), ("CRM migration", "Sales"),
             ("Customer portal redesign", "Customer Service"), ("Solar panels on depot roof", "Facilities"),
             ("Fleet telematics", "Supply Chain"), ("Data warehouse upgrade", "IT"),
             ("Call-centre workforce tool", "Customer Service"), ("ERP invoicing module", "Finance"),
             ("Cyber-security awareness programme", "IT"), ("Packaging line automation", "Operations"),
             ("Supplier portal", "Procurement"), ("Office energy retrofit", "Facilities"),
             ("Mobile sales app", "Sales"), ("Returns processing robot", "Operations"),
             ("Demand forecasting model", "Supply Chain"), ("Meeting-room video kits", "IT"),
             ("Support chatbot", "Customer Service"), ("Cold-storage expansion", "Operations"))


def _best(costs: list[int], values: list[int], cap: int) -> list[tuple[int, tuple[int, ...]]]:
    """Every subset within the cap, best total value first."""
    options = [(sum(values[i] for i in pick), pick) for size in range(len(costs) + 1)
               for pick in combinations(range(len(costs)), size) if sum(costs[i] for i in pick) <= cap]
    return sorted(options, key=lambda o: (-o[0], o[1]))


def _greedy(costs: list[int], values: list[int], cap: int) -> tuple[int, ...]:
    """Best value for money first, skipping what no longer fits: the careless answer."""
    chosen, spent = [], 0
    for i in sorted(range(len(costs)), key=lambda i: -values[i] / costs[i]):
        if spent + costs[i] <= cap:
            chosen.append(i)
            spent += costs[i]
    return tuple(sorted(chosen))


def _numbers(rng: random.Random, count: int) -> tuple[list[int], list[int], int, int, tuple[int, ...], int]:
    """Costs, values, cap, draft envelope, the unique best pick and its value (all in thousands of euros)."""
    while True:
        costs = [rng.randint(8, 44) * 5 for _ in range(count)]
        values = [round(c * rng.uniform(1.15, 2.4)) for c in costs]
        cap = round(sum(costs) * rng.uniform(0.4, 0.6) / 10) * 10
        draft = cap + rng.choice((-1, 1)) * rng.choice((40, 50, 60, 80))
        ranked = _best(costs, values, cap)
        (value, pick), runner_up = ranked[0], ranked[1]
        if runner_up[0] == value or not 2 <= len(pick) <= count - 2:
            continue
        greedy, drafted = _greedy(costs, values, cap), _best(costs, values, draft)[0]
        if pick in (greedy, drafted[1]):
            continue  # value-for-money ranking, or the draft envelope, must not already give the answer
        if any(str(value) in str(wrong) for wrong in (sum(values[i] for i in greedy), drafted[0])):
            continue  # nor a total that reads like the right one
        return costs, values, cap, draft, pick, value


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    count = rng.randint(6, 9)
    costs, values, cap, draft, pick, total = _numbers(rng, count)
    codes = [names.code("PRJ") for _ in range(count)]
    projects = rng.sample(_PROJECTS, count)
    cfo = colleague(names, "Financial planning analyst", "Office of the CFO",
                    Clue(f"{task_id}-cap", f"The CFO has capped next year's project budget at {cap}k EUR; total "
                         "spend on the approved projects must not go over that.",
                         [["budget", "cap", "capped", "ceiling", "limit", "envelope", "how much", "spend",
                           "spending", "funding", "maximum"]]))
    requester = colleague(names, "Head of Portfolio Management", "Strategy")
    chosen = [codes[i] for i in pick]
    rest = [codes[i] for i in range(count) if i not in pick]
    rows = [f"{codes[i]},{projects[i][0]},{projects[i][1]},{costs[i]},{values[i]}" for i in range(count)]
    source = f"portfolio/project_proposals_{task_id}.csv"
    memo = f"portfolio/planning_notes_{task_id}.txt"
    report = f"funded_projects_{task_id}.txt"
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{requester.name} needs the list of projects to fund next year. The proposals, with their cost "
                    f"and expected value in thousands of euros, are in {source} on the drive. Choose the projects "
                    "that give the highest total expected value without the total cost going over the budget cap "
                    f"(each project is funded fully or not at all). The cap is set by the Office of the CFO — "
                    f"{cfo.name} there can tell you. Write the chosen project codes, one per line, to {report} in "
                    f"your workspace and send {requester.name} the total expected value of your choice by "
                    "{deadline}.",
                    [in_file("best portfolio chosen", 2, "The file must list exactly the projects of the best-valued "
                             "combination whose total cost fits the CFO's cap; ranking by value per euro is not "
                             "enough, compare the combinations that fit.", report, chosen),
                     not_in_file("no project funded wrongly", 1,
                                 "Projects outside the best combination do not belong in the file.", report, rest),
                     told("requester told the total value", 1,
                          "Send the requester the total expected value of the chosen projects.",
                          requester.name, [str(total)])],
                    [read_file(source),
                     send_message(cfo.name, "What is the budget cap for next year's projects?"),
                     write_file(report, "\n".join(chosen) + "\n"),
                     send_message(requester.name,
                                  f"Proposed portfolio: {', '.join(chosen)}; total expected value {total}k EUR.")],
                    hints=(f"The proposals, with cost and expected value, are in {source} on the drive; the "
                           f"envelope in {memo} is superseded, and the final cap is not on the drive.",
                           f"Ask {cfo.name} in the Office of the CFO for next year's project budget cap; the total "
                           f"expected value goes to {requester.name}.",
                           f"Read {source}, ask the CFO's office for the cap, compare every combination of projects "
                           "whose total cost stays within it (ranking by value per euro is not enough) and keep the "
                           f"one with the highest total value, write its project codes, one per line, to {report}, "
                           f"and message {requester.name} its total expected value."))],
        colleagues=[cfo, requester],
        drive={source: "code,project,owner,cost_keur,expected_value_keur\n" + "\n".join(rows) + "\n",
               memo: f"Planning round notes\n- Spring draft envelope for projects: {draft}k EUR (superseded; the "
                     "final cap comes from the CFO's office).\n- Projects are funded in full or not at all.\n"
                     "- Expected values are five-year NPV estimates from the owners.\n"},
    )


FAMILY = Family("budget_allocation", "optimisation", "hard", "Business & Enterprise", build)
