"""Guidance tiers: every task of every family carries three hints — where to look, whom to ask and what for, the plan
step by step — and no hint gives away what a checkpoint checks for."""

from __future__ import annotations

import random
from typing import Any

import pytest

from occubench.workplace.model import WorkTask
from occubench.workplace.scoring import _flat, _has
from occubench.workplace.templates import FAMILIES
from occubench.workplace.templates.base import Names

DRAWS = 300


def checked(task: WorkTask) -> list[str]:
    """What a checkpoint of ``task`` looks for, as text: values that must be in a file or message and those that
    must not ("absent": wrong figures, which a hint must not suggest either), booking times, meeting ids, recipients
    and attendees — every entry of the check but its kind — leaving out anything under 3 characters (a seat count,
    "B1"): as a whole token it is too common to mean anything."""
    found: list[str] = []
    for checkpoint in task.checkpoints:
        for key, value in checkpoint.check.items():
            for item in value if isinstance(value, list) else [value]:
                if key != "kind" and len(str(item)) >= 3 and str(item) not in found:
                    found.append(str(item))
    return found


def leaks(task: WorkTask) -> list[tuple[int, str]]:
    """(tier, value) for each checked value a hint holds, compared as the scorer compares: as a whole token,
    case-insensitive, thousands separators ignored.

    A value the objective itself states is no secret, and a hint may repeat it: the recipients and attendees the
    task names, the file to write, the meeting id, the ward or city. Those are the places to look and the people to
    ask, which hints are meant to name. What the agent has to find out — an answer, a room, a time, a recipient only
    a colleague can name, such as the engineer on call — is not in the objective, so it stays checked.
    """
    flat = [_flat(hint) for hint in task.hints]
    return [(tier, value) for value in checked(task) for tier, hint in enumerate(task.hints, start=1)
            if _flat(value) in flat[tier - 1] and _has(hint, [value]) and not _has(task.objective, [value])]


def _tasks(family: str) -> list[tuple[int, WorkTask]]:
    tasks = []
    for draw in range(DRAWS):
        rng = random.Random(f"hints:{family}:{draw}")
        tasks += [(draw, task) for task in FAMILIES[family].build(rng, Names(rng), "t1").tasks]
    return tasks


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.slow
def test_every_task_has_three_tiers_that_give_nothing_away(family: str) -> None:
    for draw, task in _tasks(family):
        where: dict[str, Any] = {"family": family, "draw": draw, "task": task.id}
        assert len(task.hints) == 3, where
        assert all(isinstance(h, str) and h.strip() for h in task.hints), where
        assert len(set(task.hints)) == 3, where  # three tiers, not one hint three times
        assert not any("{" in h or "}" in h for h in task.hints), where  # no unfilled placeholder
        assert not leaks(task), (where, leaks(task))


def test_the_check_catches_a_leak() -> None:
    rng = random.Random(0)
    task = FAMILIES["transaction_audit"].build(rng, Names(rng), "t1").tasks[0]
    flagged = task.checkpoints[0].check["values"]
    assert flagged and not leaks(task)
    task.hints[1] += f" One of them is {flagged[0]}; the report goes to {task.checkpoints[0].check['path']}."
    assert leaks(task) == [(2, flagged[0])]  # the id is a leak, the report's name (in the objective) is not
