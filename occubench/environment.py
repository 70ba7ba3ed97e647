"""The one interface every world implements, and the wrapper base for behaviour that applies to any world.

A world exposes tools in OpenAI function-calling format and answers each call with a JSON object. Cross-cutting
behaviour (fault injection, recording) wraps an environment instead of being built into one, as Gymnasium's
``Env``/``Wrapper`` do, so it composes with every kind of world.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from occubench.llm import Usage

JSONObject = dict[str, Any]


class Environment(ABC):
    """A world an agent acts in through tool calls.

    ``call`` returns the observation. A world that cannot produce one (say, a simulator that keeps answering
    garbage) raises :class:`occubench.errors.WorldError`, so the episode is recorded as an environment error
    rather than scored against the agent. Tool-level failures (bad arguments, a record not found) are ordinary
    observations such as ``{"error": "..."}``.
    """

    @abstractmethod
    def tools(self) -> list[JSONObject]:
        """Tool schemas in OpenAI function-calling format: ``{"type": "function", "function": {...}}``."""

    @abstractmethod
    def call(self, name: str, arguments: JSONObject) -> JSONObject:
        """Run one tool call and return its observation."""

    def reset(self) -> None:
        """Return the world to its initial state."""

    def close(self) -> None:
        """Release what the world holds (connections, files)."""

    @property
    def usage(self) -> dict[str, Usage]:
        """Model usage by role spent inside the world (a simulator, colleagues); empty for worlds that are code."""
        return {}

    def info(self) -> dict[str, Any]:
        """Facts about the episode to keep in its result (a wrapper's fault log, say)."""
        return {}

    @property
    def unwrapped(self) -> Environment:
        return self

    def __enter__(self) -> Environment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Wrapper(Environment):
    """Delegates everything to the wrapped environment; subclasses override what they change."""

    def __init__(self, env: Environment) -> None:
        self.env = env

    def tools(self) -> list[JSONObject]:
        return self.env.tools()

    def call(self, name: str, arguments: JSONObject) -> JSONObject:
        return self.env.call(name, arguments)

    def reset(self) -> None:
        self.env.reset()

    def close(self) -> None:
        self.env.close()

    @property
    def usage(self) -> dict[str, Usage]:
        return self.env.usage

    def info(self) -> dict[str, Any]:
        return self.env.info()

    @property
    def unwrapped(self) -> Environment:
        return self.env.unwrapped


def tool_names(tools: list[JSONObject]) -> list[str]:
    return [tool["function"]["name"] for tool in tools]
