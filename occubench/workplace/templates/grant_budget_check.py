"""Optimisation (easy): of a grant proposal's budget scenarios, the largest one the funding call allows — under the
call's cap on the total request and its limit on the equipment share. The biggest scenario goes over the cap, the
next breaks the equipment limit."""

from __future__ import annotations

import random

from occubench.workplace.templates._shared import in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, call, colleague, task

_FUNDERS = ("Northern Science Council", "Cortex Research Trust", "Polaris Innovation Agency", "Blue Ocean Foundation",
            "Meridian Health Fund", "Lowland Research Council")
_PROJECTS = ("soil microbiome", "coastal erosion", "protein folding", "urban heat islands", "antibiotic resistance",
             "quantum sensing", "wildfire smoke", "battery ageing", "bee pollination", "glacier melt")


def _scenario(rng: random.Random, total: int, equipment_share: float) -> dict[str, int]:
    """Budget lines, in multiples of 500 EUR, that add up to ``total`` with about that share of equipment."""
    equipment = round(total * equipment_share / 500) * 500
    travel = rng.randint(8, 30) * 500
    consumables = rng.randint(20, 120) * 500
    return {"personnel": total - equipment - travel - consumables, "equipment": equipment,
            "consumables": consumables, "travel": travel}


def _fits(lines: dict[str, int], cap: int, share: int) -> bool:
    total = sum(lines.values())
    return total <= cap and lines["equipment"] * 100 <= share * total


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    funder = names.pick(_FUNDERS)
    project = names.pick(_PROJECTS)
    cap = rng.randint(6, 16) * 50_000
    share = rng.choice((15, 20, 25, 30))
    old_cap = cap + rng.choice((-2, 2)) * 50_000
    while True:
        low = share / 100 - 0.1
        scenarios = [
            _scenario(rng, cap + rng.randint(2, 40) * 500, low),                      # over the cap
            _scenario(rng, cap - rng.randint(0, 20) * 500, share / 100 + 0.08),       # too much equipment
            _scenario(rng, cap - rng.randint(30, 60) * 500, low + rng.uniform(0, 0.08)),  # the answer
            *(_scenario(rng, cap - rng.randint(80, 200) * 500, low + rng.uniform(-0.05, 0.08))
              for _ in range(rng.randint(1, 2))),
        ]
        totals = [sum(s.values()) for s in scenarios]
        fitting = [i for i, s in enumerate(scenarios) if _fits(s, cap, share)]
        if all(s["personnel"] > 0 and s["equipment"] > 0 for s in scenarios) and len(set(totals)) == len(totals) \
                and fitting and max(fitting, key=lambda i: totals[i]) == 2 and not _fits(scenarios[1], cap, share) \
                and not _fits(scenarios[0], cap, share):
            break
    codes = [names.code("BGT") for _ in scenarios]
    chosen, total = codes[2], totals[2]
    order = sorted(range(len(scenarios)), key=lambda i: codes[i])
    pi = colleague(names, "Principal investigator", "Research group")
    officer = colleague(names, "Research grants officer", "Research Office")
    scenario_file = f"grants/{project.replace(' ', '_')}_budget_scenarios_{task_id}.csv"
    call_file = f"grants/{funder.split()[0].lower()}_call_{task_id}.txt"
    note = f"grant_budget_{task_id}.txt"
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{pi.name} is applying to the {funder} with the {project} project and has drafted several "
                    f"budget scenarios in {scenario_file} on the drive (EUR per budget line). The rules of the call "
                    f"are in {call_file}. Pick the scenario with the largest total request that the call allows, "
                    f"write its id and total (whole euros) to {note} in your workspace, and send both to "
                    f"{pi.name} by {{deadline}}.",
                    [in_file("largest allowed scenario chosen", 2, "Add up each scenario's lines; keep those within "
                             "the call's cap on the total request whose equipment stays within the call's share of the "
                             "total, and take the one with the largest total. The cap in the call is the current one, "
                             "not the previous call's.",
                             note, [chosen, str(total)], absent=[c for c in codes if c != chosen]),
                     told("investigator told", 1, "Send the investigator the chosen scenario and its total.",
                          pi.name, [chosen, str(total)])],
                    [read_file(scenario_file),
                     read_file(call_file),
                     call("calculator", expression=" + ".join(str(v) for v in scenarios[2].values())),
                     write_file(note, f"{chosen}: EUR {total}\n"),
                     send_message(pi.name,
                                  f"The largest budget the call allows is scenario {chosen}, EUR {total} in total.")],
                    hints=(f"The scenarios are in {scenario_file} and the call's rules in {call_file}, both on the "
                           "drive; the scenario file has no totals, you add them up.",
                           "Nobody needs to be asked: the call's rules and the scenarios are both on the drive; "
                           f"the result goes to {pi.name}, the principal investigator.",
                           f"Read both files, add up each scenario's budget lines with the calculator, drop the "
                           "scenarios above the call's cap and those whose equipment exceeds the call's share of "
                           f"their total, write the id and total of the largest one left to {note}, and message both "
                           f"to {pi.name}."))],
        colleagues=[pi, officer],
        drive={scenario_file: "scenario,personnel,equipment,consumables,travel\n" + "".join(
                   f"{codes[i]},{','.join(str(v) for v in scenarios[i].values())}\n" for i in order),
               call_file: f"{funder.upper()} — CALL FOR PROPOSALS 2025\nProjects of up to three years.\n"
                          f"Maximum request per project: EUR {cap:,} in total, all costs included.\n"
                          f"Equipment may not exceed {share}% of the total request.\nTravel must be justified in "
                          f"the proposal.\nNote: the 2023 call allowed up to EUR {old_cap:,}; that limit no longer "
                          "applies.\n"},
    )


FAMILY = Family("grant_budget_check", "optimisation", "easy", "Science & Research", build)
