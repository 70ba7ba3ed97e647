"""Wrappers compose around any environment and delegate what they do not change."""

from __future__ import annotations

from occubench.environment import Environment, JSONObject, Wrapper
from occubench.llm import Usage


class Counter(Environment):
    def __init__(self) -> None:
        self.value = 0
        self.closed = False

    def tools(self) -> list[JSONObject]:
        return [{"type": "function", "function": {"name": "bump", "parameters": {"type": "object"}}}]

    def call(self, name: str, arguments: JSONObject) -> JSONObject:
        self.value += 1
        return {"value": self.value}

    def reset(self) -> None:
        self.value = 0

    def close(self) -> None:
        self.closed = True


class Doubling(Wrapper):
    def call(self, name: str, arguments: JSONObject) -> JSONObject:
        observation = self.env.call(name, arguments)
        return {"value": observation["value"] * 2}


def test_wrappers_compose_and_delegate() -> None:
    base = Counter()
    env = Doubling(Doubling(base))
    assert env.call("bump", {}) == {"value": 4}
    assert env.tools() == base.tools()
    assert env.unwrapped is base
    env.reset()
    assert base.value == 0
    with env:
        pass
    assert base.closed
    assert env.usage == {} and isinstance(Usage(), Usage)
