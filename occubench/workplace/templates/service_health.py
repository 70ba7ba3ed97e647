"""Inquiry: find the services that meet the alerting rule in a health-check export and page the engineer on call.
The rule (how many failed checks in a row) is the SRE lead's; the on-call rota is the IT coordinator's."""

from __future__ import annotations

import random

from occubench.workplace.model import Clue, clock
from occubench.workplace.templates._shared import in_file, not_in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, colleague, task

#: No name occurs inside another, so a name found in a text is that service.
_SERVICES = ("payments-api", "auth-gateway", "search-indexer", "inventory-sync", "email-relay", "billing-worker",
             "image-resizer", "order-router", "session-store", "report-builder", "pricing-engine", "ledger-writer",
             "notification-hub", "geo-lookup", "cart-service", "audit-trail")
CHECKS = 8


def _trailing(statuses: list[str]) -> int:
    """How many of the last checks failed in a row (FAIL or TIMEOUT)."""
    count = 0
    for status in reversed(statuses):
        if status == "OK":
            break
        count += 1
    return count


def _bad(rng: random.Random) -> str:
    return rng.choice(("FAIL", "FAIL", "TIMEOUT"))


def _quiet(rng: random.Random, length: int) -> list[str]:
    """Mostly healthy history: the odd isolated failure, never two in a row."""
    history: list[str] = []
    for _ in range(length):
        history.append(_bad(rng) if rng.random() < 0.2 and (not history or history[-1] == "OK") else "OK")
    return history


def _ending(rng: random.Random, run: int) -> list[str]:
    """A history whose last ``run`` checks failed, right after a passing one."""
    if run >= CHECKS:
        return [_bad(rng) for _ in range(CHECKS)]
    return [*_quiet(rng, CHECKS - run - 1), "OK", *(_bad(rng) for _ in range(run))]


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    rule = rng.choice((3, 4, 5))
    services = rng.sample(_SERVICES, 10)
    history: dict[str, list[str]] = {}
    # Failing: one with exactly `rule` failures at the end, one longer run that ends in a TIMEOUT, maybe a third.
    history[services[0]] = _ending(rng, rule)
    longer = _ending(rng, rng.randint(rule + 1, min(rule + 3, CHECKS)))
    longer[-1] = "TIMEOUT"
    longer[-2] = "FAIL"
    history[services[1]] = longer
    rest = services[2:]
    if rng.random() < 0.5:
        history[rest.pop(0)] = _ending(rng, rng.randint(rule, min(rule + 2, CHECKS)))
    # Near misses: one check short of the rule.
    for _ in range(rng.randint(1, 2)):
        history[rest.pop(0)] = _ending(rng, rule - 1)
    # Recovered: a run as long as the rule earlier on, then passing again.
    recovered = rest.pop(0)
    tail = rng.randint(1, 2)
    history[recovered] = _ending(rng, rule + rng.randint(0, 1))[tail:] + ["OK"] * tail
    # Flapping: more failures than the rule in all, but never more than two in a row.
    flapping = rest.pop(0)
    history[flapping] = [_bad(rng) if status else "OK" for status in (1, 1, 0, 1, 1, 0, 1, 1)]
    for service in rest:
        history[service] = _quiet(rng, CHECKS - 1) + ["OK"]
    failing = sorted(s for s in services if _trailing(history[s]) >= rule)
    healthy = sorted(s for s in services if s not in failing)
    assert len(failing) >= 2 and any(_trailing(history[s]) == rule for s in failing)

    lead = colleague(names, "SRE lead", "Platform",
                     Clue(f"{task_id}-rule", f"We alert when a service has failed its last {rule} health checks in a "
                          "row. A TIMEOUT counts as a failure; one failure followed by a pass doesn't count.",
                          [["alert", "alerting", "rule", "threshold", "criteri*", "how many", "consecutive",
                            "in a row", "page", "paging", "fail", "failed", "failing", "failure", "unhealthy",
                            "down"]]))
    engineers = [colleague(names, "Site reliability engineer", "Platform") for _ in range(3)]
    on_call, backup = rng.sample(engineers, 2)
    coordinator = colleague(names, "IT coordinator", "IT",
                            Clue(f"{task_id}-rota", f"Per the rota, {on_call.name} is on call today; {backup.name} is "
                                 f"the secondary and only takes pages if {on_call.name.split()[0]} doesn't answer "
                                 "within 15 minutes.",
                                 [["on call", "oncall", "rota", "roster", "pager", "who to page", "duty",
                                   "standby"]]))
    times = [clock(8 * 60 + 10 * i) for i in range(CHECKS)]
    export = f"ops/healthchecks_{task_id}.csv"
    note = f"alerts_{task_id}.txt"
    content = ("service," + ",".join(times) + "\n" +
               "\n".join(f"{s},{','.join(history[s])}" for s in sorted(services)) + "\n")
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"The morning health-check export is at {export} on the drive (one row per service, checks "
                    "oldest to newest). Find every service that meets our alerting rule — the SRE lead owns the "
                    f"rule — and write just those service names, one per line, to {note} in your workspace. Then "
                    "message the failing services to the engineer on call today; the IT coordinator keeps the "
                    f"on-call rota. Do it by {{deadline}}.",
                    [in_file("failing services found", 2, "The note must name every service that failed its latest "
                             "checks as many times in a row as the SRE lead's alerting rule says, timeouts included; "
                             "ask for the rule rather than guessing it.", note, failing),
                     not_in_file("no false alarms", 1, "Only services failing their most recent checks in a row belong "
                                 "in the note: not those one check short of the rule, nor those that failed earlier "
                                 "and recovered.", note, healthy),
                     told("on-call engineer paged", 2, "Send the failing services to the engineer the rota names as on "
                          "call today (the IT coordinator has it), not to any engineer.", on_call.name, failing)],
                    [read_file(export),
                     send_message(lead.name, "What is the alerting rule for failing health checks?"),
                     send_message(coordinator.name, "Who is on call today according to the rota?"),
                     write_file(note, "\n".join(failing)),
                     send_message(on_call.name, "These services meet the alerting rule: " + ", ".join(failing))],
                    hints=(f"The health-check export is {export} on the drive; neither the alerting rule nor the "
                           "on-call rota is in it.",
                           f"Ask {lead.name}, the SRE lead, for the alerting rule, and {coordinator.name}, the IT "
                           "coordinator, who is on call today.",
                           f"Read {export}, ask for the rule and the rota, pick the services whose latest checks "
                           "failed in a row at least as often as the rule says (timeouts count as failures), write "
                           f"them one per line to {note}, and message them to the engineer on call."))],
        colleagues=[lead, coordinator, *engineers],
        drive={export: content},
    )


FAMILY = Family("service_health", "inquiry", "easy", "Technology & IT", build)
