"""Each tool call of a traced episode as an ``execute_tool`` span (:mod:`occubench.telemetry`): a wrapper, so it
holds for every kind of world."""

from __future__ import annotations

from occubench import telemetry
from occubench.core.environment import Environment, JSONObject, Wrapper
from occubench.core.faults import FaultInjector


class ToolSpans(Wrapper):
    """Wraps the world and its fault injector: a span sees the call as the agent does, faults marked."""

    def __init__(self, env: Environment) -> None:
        super().__init__(env)
        self.injector = env.find(FaultInjector)

    async def acall(self, name: str, arguments: JSONObject) -> JSONObject:
        injector = self.injector
        before = len(injector.events) if injector else 0
        with telemetry.tool(name, arguments) as span:
            observation = await self.env.acall(name, arguments)
            span.done(observation, injector.events[before:] if injector else [])
        return observation
