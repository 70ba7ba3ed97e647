"""The twin gate: a world synthesized for a scenario that also has an executable world is kept only if it answers as
that world does.

Each of the executable world's tasks is played by its reference solution in the synthesized world, simulated by the
calibration world model, with the executable world kept in step (:class:`~occubench.twin.shadow.Shadow`); the calls
are compared as a twin run compares them (:mod:`occubench.twin.agreement`, the calibration judge deciding what the
cheap checks leave open). A world whose call agreement is below ``--min-agreement`` (default 0.9) is dropped as
``unfaithful`` before any calibration run is paid for; one that cannot answer the world's tools at all agrees on
nothing. Every candidate of one environment shares one measurement.
"""

from __future__ import annotations

import asyncio
from typing import Any

from occubench.errors import OccuBenchError
from occubench.executable.isolated import IsolatedWorld, open_environment
from occubench.executable.plugin import listed_worlds
from occubench.llm import Model
from occubench.simulated.config import WorldModelConfig
from occubench.simulated.environment import SimulatedEnvironment
from occubench.synth.simulated.calibrate import env_name
from occubench.synth.simulated.candidate import Candidate
from occubench.synth.simulated.config import SimulatedSynthConfig
from occubench.twin.shadow import Shadow
from occubench.util.aio import off_loop, run_sync


def twins(config: SimulatedSynthConfig) -> dict[str, IsolatedWorld]:
    """The executable worlds by scenario name (lower case, spaces folded): the built-in ones, or ``worlds_dir``'s."""
    return {_key(world.scenario): world for world in listed_worlds(config.worlds_dir, config.trust_world_code)}


def _key(scenario: str) -> str:
    return " ".join(scenario.lower().split())


def gate(candidates: list[Candidate], worlds: dict[str, IsolatedWorld], config: SimulatedSynthConfig,
         models: dict[str, Model]) -> None:
    """Measure the candidates whose scenario has an executable world; drop the unfaithful (see the module)."""
    measured = [c for c in candidates if c.status == "pending" and _key(c.scenario.name) in worlds]
    environments = {env_name(c.environment): c.environment for c in measured}
    found = run_sync(_measure_all(environments, measured, worlds, models))
    for candidate in measured:
        agreement = found[env_name(candidate.environment)]
        candidate.agreement = agreement
        if agreement["errors"]:
            candidate.status = "incomplete"
            candidate.reason = (f"{agreement['errors']} episode(s) measuring it against the executable world "
                                f"{agreement['world']} failed (endpoint or world trouble); run the same command "
                                "again to retry")
        elif agreement["rate"] is None or agreement["rate"] < config.min_agreement:
            shown = "no call decided" if agreement["rate"] is None else f"{agreement['rate']:.0%}"
            candidate.status = "unfaithful"
            candidate.reason = (f"it answered {shown} of the executable world {agreement['world']}'s reference calls "
                                f"as that world does, below --min-agreement {config.min_agreement:.0%}")


async def _measure_all(environments: dict[str, dict[str, Any]], measured: list[Candidate],
                       worlds: dict[str, IsolatedWorld], models: dict[str, Model]) -> dict[str, dict[str, Any]]:
    world_of = {env_name(c.environment): worlds[_key(c.scenario.name)] for c in measured}
    names = list(environments)
    found = await asyncio.gather(*(_measure(environments[name], world_of[name], models) for name in names))
    return dict(zip(names, found))


async def _measure(environment: dict[str, Any], world: IsolatedWorld, models: dict[str, Model]) -> dict[str, Any]:
    config = WorldModelConfig.from_dict({"environment_name": world.name, **environment}, "synthesized environment")
    simulator = models["world"]
    calls: list[dict[str, Any]] = []
    errors = 0
    for task in world.tasks:  # one episode per task: each starts from the initial state
        real = await off_loop(open_environment, world)
        shadow = Shadow(SimulatedEnvironment(config, simulator.client, simulator.name, params=simulator.params), real,
                        models["verifier"])
        try:
            for call in task.reference:
                await shadow.acall(call.tool, call.arguments)
        except OccuBenchError:  # an endpoint or a world that failed: no measurement, never a verdict
            errors += 1
        finally:
            await off_loop(shadow.close)
        calls += shadow.calls
    decided = [call for call in calls if call["agree"] is not None]
    agreeing = sum(call["agree"] is True for call in decided)
    return {"world": world.name, "calls": len(calls), "decided": len(decided), "agreeing": agreeing, "errors": errors,
            "rate": agreeing / len(decided) if decided else None,
            "kinds": {kind: sum(call["kind"] == kind for call in decided) for kind in
                      sorted({call["kind"] for call in decided if call["kind"]})}}
