"""Optimisation (hard): the cheapest server configuration for a service's peak load. The load is the highest hourly
peak in a traffic export; the sizing rule — headroom on top of the peak, one spare instance, a memory floor per
instance — is the platform architect's; the instance types and their prices are on the drive. Leaving out any part
of the rule gives another configuration."""

from __future__ import annotations

import math
import random

from occubench.workplace.model import Clue
from occubench.workplace.templates._shared import in_file, not_in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, call, colleague, task

#: Instance families: (name, GB of memory per vCPU, requests per second per vCPU, EUR per vCPU and month).
_FAMILIES = (("cpu", 2, (100, 125), (28, 34)), ("std", 4, (80, 100), (32, 40)), ("mem", 8, (65, 85), (42, 54)))
_VCPUS = (2, 4, 8, 16)
_SERVICES = ("checkout-api", "search-service", "recommendation-engine", "media-transcoder", "customer-portal",
             "booking-engine", "pricing-service", "notification-gateway")


#: An instance type: (name, vCPUs, GB of memory, requests per second one instance handles, EUR per month).
_Type = tuple[str, int, int, int, int]


def _needed(load: int, headroom: int) -> int:
    return math.ceil(load * (100 + headroom) / 100)


def _options(types: list[_Type], load: int, headroom: int, spare: int, memory: int) -> list[tuple[int, str, int]]:
    """(monthly cost, type, count) for every type with at least ``memory`` GB: enough instances for the load plus
    headroom, plus spares; cheapest first, ties in the order the types are listed."""
    needed = _needed(load, headroom)
    options = [((math.ceil(needed / rps) + spare) * price, name, math.ceil(needed / rps) + spare)
               for name, _, ram, rps, price in types if ram >= memory]
    return sorted(options, key=lambda o: o[0])


def _plan(types: list[_Type], load: int, headroom: int, spare: int, memory: int) -> tuple[str, int, int]:
    """The cheapest (type, count, monthly cost)."""
    cost, name, count = _options(types, load, headroom, spare, memory)[0]
    return name, count, cost


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    service = names.pick(_SERVICES)
    while True:
        types: list[_Type] = [(f"{family}-{vcpus}x{vcpus * ratio}", vcpus, vcpus * ratio,
                               vcpus * rng.randint(*rate) // 5 * 5, vcpus * rng.randint(*cost))
                              for family, ratio, rate, cost in _FAMILIES for vcpus in _VCPUS]
        types = sorted(rng.sample(types, rng.randint(7, 9)))
        peak = rng.randint(1200, 4200)
        headroom, memory = rng.choice((20, 25, 30, 40, 50)), rng.choice((8, 16))
        hours = [round(peak * rng.uniform(0.35, 0.97)) for _ in range(24)]
        hours[rng.randint(9, 20)] = peak
        averages = [round(h * rng.uniform(0.55, 0.8)) for h in hours]
        options = _options(types, peak, headroom, 1, memory)
        if len(options) < 2 or options[0][0] == options[1][0]:
            continue  # the cheapest must be unique
        total, name, count = options[0]
        no_memory, no_headroom = _plan(types, peak, headroom, 1, 0), _plan(types, peak, 0, 1, memory)
        careless = {no_memory, no_headroom, _plan(types, peak, headroom, 0, memory),
                    _plan(types, max(averages), headroom, 1, memory), _plan(types, peak, 0, 0, 0)}
        # The memory floor and the headroom each change the answer; no careless cost equals the right one or reads
        # like another figure of the plan.
        if no_memory[0] == name or no_headroom[:2] == (name, count) or \
                any(c[2] in (total, peak, _needed(peak, headroom), headroom, memory) for c in careless):
            continue
        break
    config = f"{count} x {name}"
    wrong = sorted({f"{c} x {n}" for n, c, _ in careless} | {str(cost) for _, _, cost in careless})
    architect = colleague(names, "Platform architect", "Infrastructure",
                          Clue(f"{task_id}-sizing",
                               f"Our sizing rule: take the highest hourly peak in requests per second, add "
                               f"{headroom}% headroom, and run enough instances for that — plus one spare instance "
                               f"on top (N+1). Each instance of {service} needs at least {memory} GB of memory. One "
                               "instance type for the whole service.",
                               [["sizing", "size", "headroom", "rule", "redundancy", "spare", "requirement",
                                 "capacity", "memory", "ram", "how many instances"]]))
    manager = colleague(names, "IT infrastructure manager", "Infrastructure")
    traffic = f"infra/{service}_traffic_{task_id}.csv"
    prices = f"infra/instance_types_{task_id}.csv"
    plan = f"capacity_plan_{task_id}.txt"
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{manager.name} wants the cheapest server configuration for {service} on the new cluster. Last "
                    f"month's busiest day is in {traffic} (hourly average and peak requests per second) and the "
                    f"instance types, with the requests per second one instance handles and the monthly price, are "
                    f"in {prices} on the drive. {architect.name}, the platform architect, owns the sizing rule. "
                    "Use one instance type. Write the configuration as '<count> x <instance type>' and its total "
                    f"monthly cost in whole euros to {plan} in your workspace (just the chosen configuration), and "
                    f"send both to {manager.name} by {{deadline}}.",
                    [in_file("cheapest configuration that meets the rule", 2, "Size for the highest hourly peak plus "
                             "the architect's headroom, add the spare instance, keep only instance types with enough "
                             "memory, and take the cheapest total; give the count, type and monthly cost.",
                             plan, [config, str(total)]),
                     not_in_file("no configuration from a partial rule", 1, "The plan should hold only the chosen "
                                 "configuration: not one that skips the headroom, the spare, the memory floor or sizes "
                                 "for the average load.", plan, wrong),
                     told("manager told", 1, "Send the manager the configuration and its monthly cost.",
                          manager.name, [config, str(total)])],
                    [read_file(traffic),
                     read_file(prices),
                     send_message(architect.name,
                                  f"What is the sizing rule for {service}: headroom, spares and memory per instance?"),
                     call("calculator", expression=f"{_needed(peak, headroom)} / "
                                                   f"{next(t[3] for t in types if t[0] == name)}"),
                     write_file(plan, f"{config}\nMonthly cost: EUR {total}\n"),
                     send_message(manager.name,
                                  f"Cheapest configuration for {service}: {config}, EUR {total} per month.")],
                    hints=(f"The load is in {traffic} and the instance types with their capacity and price in "
                           f"{prices}, both on the drive; the sizing rule is not written down there.",
                           f"Ask {architect.name}, the platform architect, for the sizing rule: how much headroom "
                           "over the peak, how many spare instances and how much memory each instance needs.",
                           f"read_file {traffic} and take the highest hourly peak, not an average; read_file "
                           f"{prices}; send_message {architect.name} for the sizing rule; add the headroom to the "
                           "peak; for every type with enough memory divide by its capacity, round up, add the "
                           "spare and multiply by its price (the calculator helps); pick the cheapest total; "
                           f"write_file {plan} with '<count> x <type>' and the cost; send_message "
                           f"{manager.name} the same."))],
        colleagues=[architect, manager],
        drive={traffic: "hour,avg_rps,peak_rps\n" + "".join(f"{h:02d}:00,{a},{p}\n" for h, (a, p) in
                                                            enumerate(zip(averages, hours))),
               prices: "instance_type,vcpus,memory_gb,max_rps,eur_per_month\n" + "".join(
                   f"{n},{vcpus},{ram},{rps},{price}\n" for n, vcpus, ram, rps, price in types)},
    )


FAMILY = Family("server_capacity_plan", "optimisation", "hard", "Technology & IT", build)
