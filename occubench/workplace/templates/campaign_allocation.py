"""Optimisation: split an ad budget across channels with spend caps and different returns per euro, while a
marketing-policy floor for one low-return channel (known only to a colleague) must be respected."""

from __future__ import annotations

import random

from occubench.workplace.model import Clue
from occubench.workplace.templates._shared import in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, colleague, task

_CHANNELS = ("Paid Search", "Paid Social", "Display", "Online Video", "Affiliate", "Email", "Podcast", "Out-of-home",
             "Connected TV", "Retail Media", "Radio", "Print")
_CAMPAIGNS = ("spring launch", "back-to-school", "summer sale", "loyalty relaunch", "holiday season", "brand refresh")


def _allocate(budget: int, caps: list[int], rates: list[int], floor: tuple[int, int] | None) -> list[int]:
    """The best split: a mandated floor first, then the best return per euro filled up to its cap, and so on."""
    spend = [0] * len(caps)
    if floor is not None:
        spend[floor[0]] = floor[1]
    left = budget - sum(spend)
    for i in sorted(range(len(caps)), key=lambda i: -rates[i]):
        extra = min(caps[i] - spend[i], left)
        spend[i] += extra
        left -= extra
    return spend


def _lines(channels: list[str], spend: list[int]) -> list[str]:
    return [f"{c},{s}" for c, s in zip(channels, spend) if s > 0]


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    count, paused = rng.randint(4, 6), rng.randint(2, 3)
    listed = rng.sample(_CHANNELS, count + paused)
    channels = listed[:count]  # the rest are paused this quarter and get nothing
    while True:
        # Returns per euro in hundredths, all different, so the best split is unique.
        every_rate = rng.sample(range(110, 360, 5), count + paused)
        rates = every_rate[:count]
        caps = [rng.randint(4, 16) * 5000 for _ in range(count + paused)]
        budget = round(sum(caps[:count]) * rng.uniform(0.5, 0.8) / 20000) * 20000
        share = rng.choice((10, 15, 20, 25))
        mandated = min(range(count), key=lambda i: rates[i])  # the floor binds on the weakest channel
        minimum = budget * share // 100
        if not 0 < minimum <= caps[mandated] or budget >= sum(caps[:count]) - caps[mandated]:
            continue
        if max(every_rate[count:]) < sorted(rates)[count // 2]:
            continue  # at least one paused channel is tempting
        spend = _allocate(budget, caps[:count], rates, (mandated, minimum))
        careless = [_allocate(budget, caps[:count], rates, None),
                    _allocate(budget, caps, every_rate, (mandated, minimum)),
                    _allocate(budget, caps, every_rate, None)]
        total = sum(s * r for s, r in zip(spend, rates)) // 100
        returns = [sum(s * r for s, r in zip(alloc, rates if len(alloc) == count else every_rate)) // 100
                   for alloc in careless]
        if sum(spend) == budget and spend != careless[0] and not any(str(total) in str(r) for r in returns):
            break
    lines = _lines(channels, spend)
    content = "\n".join(lines) + "\n"
    wrong = {line for alloc in careless for line in _lines(listed, alloc)}
    tempting = sorted(line for line in wrong if line.lower() not in content.lower())
    campaign = rng.choice(_CAMPAIGNS)
    policy = colleague(names, "Brand governance lead", "Marketing",
                       Clue(f"{task_id}-floor", f"Marketing policy: at least {share}% of every paid campaign budget "
                            f"must go to {channels[mandated]}, whatever its return.",
                            [["minimum", "policy", "mandat*", "share of", "floor", "rule", "requir*", "constraint",
                              "guideline", "at least"]]))
    requester = colleague(names, "Performance marketing manager", "Marketing")
    source = f"marketing/channel_plan_{task_id}.csv"
    report = f"ad_allocation_{task_id}.csv"
    status = ["active"] * count + ["paused"] * paused
    order = sorted(range(count + paused), key=lambda i: listed[i])
    rows = [f"{listed[i]},{every_rate[i] / 100:.2f},{caps[i]},{status[i]}" for i in order]
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{requester.name} asks you to split the {budget} EUR budget of the {campaign} campaign across "
                    f"the active ad channels in {source} on the drive (expected return per euro spent and the most "
                    "each channel can absorb). Spend the whole budget so that the total expected return is as high "
                    f"as possible. Marketing policy sets a minimum share for one channel; {policy.name} (brand "
                    f"governance) knows the rule. Write the allocation to {report} in your workspace, one line per "
                    f"funded channel as channel,amount (whole euros), and send {requester.name} the total expected "
                    "return by {deadline}.",
                    [in_file("best allocation written", 2, "Every channel's amount must follow from meeting the policy "
                             "minimum first and then filling the active channels with the best return per euro up to "
                             "their caps; paused channels get nothing, and the policy had to be asked for, not "
                             "ignored.", report, lines, absent=tempting),
                     told("requester told the total return", 1, "Send the requester the total expected return of the "
                          "allocation (amount times return per euro, summed over the channels).",
                          requester.name, [str(total)])],
                    [read_file(source),
                     send_message(policy.name, "Is there a marketing policy on the minimum share a channel must get?"),
                     write_file(report, content),
                     send_message(requester.name,
                                  f"Allocation written to {report}; total expected return {total} EUR.")],
                    hints=(f"Each channel's return per euro, spending cap and status are in {source} on the drive; "
                           "the policy minimum is not in the file.",
                           f"Ask {policy.name} (brand governance) about the marketing policy's minimum share for a "
                           f"channel; the total expected return goes to {requester.name}.",
                           f"Read {source}, ask for the policy minimum, give the mandated channel its minimum first, "
                           "then fill the active channels (never the paused ones) in order of return per euro, each "
                           "up to its cap, until the budget is spent; write channel,amount lines to "
                           f"{report}, add up amount times return per euro with the calculator and message the total "
                           f"to {requester.name}."))],
        colleagues=[policy, requester],
        drive={source: "channel,return_per_euro,max_spend_eur,status\n" + "\n".join(rows) + "\n"},
    )


FAMILY = Family("campaign_allocation", "optimisation", "hard", "Education & Culture", build)
