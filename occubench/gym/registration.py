"""Gymnasium ids for the installed suites: ``occubench/<suite>-v0``, one per suite, the task chosen by ``task_id``.

A Gymnasium id is ``[namespace/]name[-vN]`` with no ``/`` in the name, so a task id such as
``clinic_scheduling/book_urgent_cardiology`` cannot be part of one; nor could every task be registered up front,
since a simulated suite's tasks come from its data and a workplace suite's from its seed.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

import gymnasium
from gymnasium.envs.registration import parse_env_id

from occubench.config import SUITES

NAMESPACE = "occubench"


def env_id(suite: str) -> str:
    """The Gymnasium id of an installed suite."""
    return f"{NAMESPACE}/{suite}-v0"


def _fits(name: str) -> bool:
    # "module:id" is Gymnasium's syntax for importing a module first, so a name with ":" would be misread.
    try:
        return ":" not in name and parse_env_id(env_id(name)) == (NAMESPACE, name, 0)
    except gymnasium.error.Error:
        return False


def register_envs() -> list[str]:
    """Register every suite of the ``occubench.suites`` entry points (without importing them); returns the ids.

    A suite whose name cannot be part of a Gymnasium id is left out: build it with
    :class:`~occubench.gym.OccuBenchEnv`, as a ``package.module:attribute`` suite."""
    ids = []
    for point in entry_points(group=SUITES):
        name = point.name
        if not _fits(name):
            continue
        if env_id(name) not in gymnasium.registry:
            gymnasium.register(env_id(name), entry_point="occubench.gym.env:OccuBenchEnv", kwargs={"suite": name})
        ids.append(env_id(name))
    return ids


def make(suite: str, task_id: str | int | None = None, **kwargs: Any) -> gymnasium.Env[str, Any]:
    """``gymnasium.make(env_id(suite), task_id=task_id, **kwargs)``: an installed suite's task with Gymnasium's
    usual wrappers (order enforcing, passive checks); ``kwargs`` are those of :class:`~occubench.gym.OccuBenchEnv`."""
    return gymnasium.make(env_id(suite), task_id=task_id, **kwargs)
