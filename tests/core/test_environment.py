"""Wrappers compose around any environment and delegate what they do not change; a tool call has one override
point (acall), taken by synchronous callers and by episodes on the event loop alike."""

from __future__ import annotations

import asyncio

from occubench.core.environment import Environment, JSONObject, Wrapper
from occubench.core.tools import ToolSpec

BUMP = ToolSpec("bump", "Add one.", {"type": "object", "additionalProperties": False}, writes=True)


class Counter(Environment):
    def __init__(self) -> None:
        self.value = 0
        self.closed = False

    def tools(self) -> list[ToolSpec]:
        return [BUMP]

    def _call(self, name: str, arguments: JSONObject) -> JSONObject:
        self.value += 1
        return {"value": self.value}

    def reset(self) -> None:
        self.value = 0

    def close(self) -> None:
        self.closed = True


class Doubling(Wrapper):
    async def acall(self, name: str, arguments: JSONObject) -> JSONObject:
        observation = await self.env.acall(name, arguments)
        return {"value": observation["value"] * 2} if "value" in observation else observation


class Marker(Wrapper):
    pass


def test_wrappers_compose_and_delegate() -> None:
    base = Counter()
    env = Doubling(Doubling(base))
    assert env.call("bump", {}) == {"value": 4}
    assert env.tools() == base.tools() == [BUMP]
    assert env.unwrapped is base
    env.reset()
    assert base.value == 0
    with env:
        pass
    assert base.closed


def test_the_contract_runs_once_in_the_innermost_environment() -> None:
    base = Counter()
    env = Doubling(base)
    assert env.call("bump", {"extra": 1})["error"] == "invalid_arguments"  # rejected inside, before the world
    assert env.call("nope", {})["error"] == "unknown_tool"
    assert base.value == 0


def test_one_override_serves_synchronous_and_async_callers_and_find_walks_the_chain() -> None:
    base = Counter()
    env = Marker(Doubling(base))
    assert env.call("bump", {}) == {"value": 2}
    assert asyncio.run(env.acall("bump", {})) == {"value": 4}
    assert env.find(Doubling) is env.env and env.find(Marker) is env and env.find(Counter) is base
    assert Doubling(base).find(Marker) is None
