"""A run of working days, for every task library: the first days, then each later phase of days told what the day
before left (its arms), as the results of the phase before come in."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console

from occubench.config import RunConfig
from occubench.core.agent import Agent
from occubench.core.results import Result
from occubench.core.suite import Suite, SuitePlan, TaskSet, select_tasks
from occubench.errors import ConfigError
from occubench.llm import Model
from occubench.sandbox.provider import Provider
from occubench.workplace.record import DayRecord
from occubench.workplace.suite import ARMS, DaySuite, Library, PlannedDay, told


def reflection_model(config: RunConfig, arms: Sequence[str], console: Console) -> str | None:
    """The model that reflects on a day for the reflection arm: ``--reflection-model``, else the agent's; None (and
    the arm left out, with a warning) for an agent without a model."""
    model = config.reflection_model or (config.agent_model if config.agent == "llm" else None)
    if "reflection" in arms and not model:
        console.print(f"[yellow]--agent {config.agent}: no model to reflect on a day, so the days after run without "
                      "the reflection arm (give --reflection-model for it)[/yellow]")
    return model


def learning_arms(config: RunConfig, learning: bool, console: Console) -> tuple[str, ...]:
    """The arms of the days after a first day: all three with ``--learning`` (the reflection arm only with a model
    to reflect), none without; ``--reflection-model`` without ``--learning`` is refused."""
    if config.reflection_model and not learning:
        raise ConfigError("--reflection-model reflects on a day for the day after: add --learning")
    if learning and config.trials > 1:
        # A day after is told of one day before; trials of it would be told of another trial's day.
        raise ConfigError("--learning runs one trial per day (--trials 1): each day after starts with what one day "
                          "before left; for more samples, run more days")
    if not learning:
        return ()
    return tuple(arm for arm in ARMS if arm != "reflection" or reflection_model(config, ARMS, console))


def day_plan(config: RunConfig, console: Console, library: Library, phases: Sequence[Sequence[PlannedDay]],
             arms: Sequence[str], *, provider: Provider | None, settings: dict[str, Any], reference: Agent | None,
             task_set: TaskSet) -> SuitePlan:
    """The run of ``phases``: phase 0 its first days (chosen by ``--task-ids``, ``--limit`` and the like), each
    later phase days that follow one of the phase before (:attr:`PlannedDay.after`), one task per day and arm of
    ``arms``, started once the day before was scored."""
    reflects = "reflection" in arms and len(phases) > 1
    roles: dict[str, str | None] = {**({"npc": config.npc_model} if config.npc_model else {}),
                                    **({"verifier": config.verifier_model} if library.judged and
                                       config.verifier_model else {}),
                                    **({"reflection": reflection_model(config, arms, console)} if reflects else {})}
    several = len(arms) > 1

    def phase(number: int, days: list[PlannedDay], told_now: dict[str, dict[str, str]]) -> SuitePlan:
        def make(models: dict[str, Model], fault_rules: str | None) -> Suite:
            last = number + 1 == len(phases)
            return DaySuite(library, days, provider=provider, colleagues=models.get("npc"),
                            judge=models.get("verifier"), guidance=config.guidance, told=told_now,
                            reflector=None if last or not reflects else models.get("reflection"))

        def follow_up(results: dict[Any, Result]) -> SuitePlan:
            # A day whose day before was chosen and scored follows it, in each arm, told what that day left; a day
            # before that ended in an error gets its day after when the next run has retried it.
            after: dict[str, dict[str, str]] = {}
            for planned in phases[number + 1]:
                for arm in arms:
                    before = planned.after + (f"-{arm}" if several and number else "")
                    result = results.get((before, 0))
                    if result is not None and (record := DayRecord.from_result(result)) is not None:
                        after.setdefault(planned.task_id, {})[arm] = told(
                            arm, record, told_now.get(planned.after, {}).get(arm, ""))
            chosen = [planned for planned in phases[number + 1] if planned.task_id in after]
            return phase(number + 1, chosen, after)

        tasks = DaySuite(library, days, guidance=config.guidance, told=told_now).tasks()
        return SuitePlan(select_tasks(tasks, config, console) if number == 0 else tasks, roles, make,
                         world_label=None, simulated=False, settings=settings, reference=reference,
                         follow_up=follow_up if number + 1 < len(phases) else None, task_set=task_set)
    return phase(0, list(phases[0]), {})
