"""The one interface every world implements, and the wrapper base for behaviour that applies to any world.

A world declares its tools as :class:`~occubench.core.tools.ToolSpec` and answers each call with a JSON object. Every
world keeps the same contract, implemented once here by :meth:`Environment.call` around the world's own
:meth:`Environment._call`:

- a call to a tool that does not exist is answered ``{"error": "unknown_tool", "message": ...}``, and one whose
  arguments are not a JSON object matching the tool's schema (strict types: ``1.0`` is not an integer, ``true``
  not a number) ``{"error": "invalid_arguments", "message": ...}`` naming each argument at fault; neither reaches
  the world, so a rejected call changes nothing (not even a clock);
- a :class:`~occubench.core.tools.ToolError` raised by the tool is ``{"error": "tool_error", ...}`` (a domain failure
  such as a record not found), any other exception ``{"error": "tool_failed", "message": "Type: message"}``, and
  a call that runs past :attr:`Environment.time_limit` is interrupted and answered ``{"error": "timeout", ...}``;
  the episode goes on;
- an :class:`occubench.errors.OccuBenchError` (a simulator that stays unparsable, a model endpoint that is down)
  is not the agent's doing: it propagates, and the episode is recorded as an error rather than scored; so does a
  ``MemoryError`` (a world past its memory bound: in a sandbox worker, an environment error), and any exception
  that says the world ran out of a resource of its own (:func:`occubench.core.blame.exhausted`: a full disk, a
  refused thread or process, no file left), raised as a :class:`~occubench.errors.WorldError`;
- a result that is not a JSON object is wrapped as ``{"result": value}``;
- an :class:`~occubench.core.images.Image` in a result (or as the result) is written in the reserved shape
  ``{"$image": {...}}`` of :mod:`occubench.core.images`, which agents receive through
  :func:`~occubench.core.images.deliver`.

Cross-cutting behaviour (fault injection, recording) wraps an environment instead of being built into one, as
Gymnasium's ``Env``/``Wrapper`` do, so it composes with every kind of world; a wrapper hands calls to the wrapped
environment, so the contract runs once, in the innermost one.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from typing import Any, TypeVar

from occubench.core.blame import exhausted
from occubench.core.images import json_default
from occubench.core.tools import (
    JSONObject,
    TimeLimitExceeded,
    ToolError,
    ToolSpec,
    call_with_time_limit,
    describe,
    tool_error,
    unknown_tool,
)
from occubench.errors import OccuBenchError, WorldError
from occubench.util.aio import off_loop, run_sync
from occubench.util.jsonsafe import json_safe

__all__ = ["AsyncEnvironment", "Environment", "JSONObject", "Wrapper"]


E = TypeVar("E", bound="Environment")

class Environment(ABC):
    """A world an agent acts in through tool calls (see the module docstring for the contract of :meth:`call`)."""

    #: Seconds a call may run before it is interrupted with a ``timeout`` observation; None for no limit (worlds
    #: that wait on a model, whose requests carry their own timeouts).
    time_limit: float | None = None

    @abstractmethod
    def tools(self) -> list[ToolSpec]:
        """The tools, in a fixed order."""

    def call(self, name: str, arguments: JSONObject) -> JSONObject:
        """Run one tool call and return its observation."""
        if (rejected := self._rejected(name, arguments)) is not None:
            return rejected
        try:
            with self._transaction():
                result = call_with_time_limit(lambda: self._call(name, arguments), self.time_limit)
                return _observation(result)
        except Exception as exc:  # noqa: BLE001 - see _failure: the agent's error, or raised again
            return _failure(name, exc)

    async def acall(self, name: str, arguments: JSONObject) -> JSONObject:
        """:meth:`call` for an episode on an event loop: a world whose code blocks (SQLite, a sandbox worker's
        pipe) runs it in a thread off the loop; :class:`AsyncEnvironment` answers on the loop itself."""
        return await off_loop(self.call, name, arguments)

    def _rejected(self, name: str, arguments: JSONObject) -> JSONObject | None:
        """The answer to a call that never reaches the world: an unknown tool, arguments that do not fit."""
        specs = self.tools()
        spec = next((s for s in specs if s.name == name), None)
        if spec is None:
            return unknown_tool(name, specs)
        problem = spec.check(arguments)
        return None if problem is None else tool_error("invalid_arguments", problem)

    def _call(self, name: str, arguments: JSONObject) -> Any:
        """Run tool ``name`` with arguments that match its schema; return its result or raise (see :meth:`call`).

        Every world implements this; a :class:`Wrapper` hands :meth:`call` to the wrapped world instead."""
        raise NotImplementedError(f"{type(self).__name__} implements neither _call nor call")

    def _transaction(self) -> contextlib.AbstractContextManager[object]:
        """What a call runs inside, so that one that fails or times out can be undone (a database transaction);
        entered before the time limit starts and left after it ends, so an interrupt never lands in a commit."""
        return contextlib.nullcontext()

    def reset(self) -> None:
        """Return the world to its initial state."""

    def close(self) -> None:
        """Release what the world holds (connections, files)."""


    def info(self) -> dict[str, Any]:
        """Facts about the episode to keep in its result (a wrapper's fault log, say)."""
        return {}

    @property
    def unwrapped(self) -> Environment:
        return self

    def find(self, kind: type[E]) -> E | None:
        """The first environment of type ``kind`` down the chain of wrappers from this one (a fault injector, say),
        or None."""
        return self if isinstance(self, kind) else None

    def __enter__(self) -> Environment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncEnvironment(Environment):
    """A world whose calls wait on a model (a simulator): it implements :meth:`_acall`, which an episode awaits on
    its event loop; the synchronous :meth:`call` runs it on the harness loop. The contract is :meth:`call`'s, with no
    time limit (the model's requests have their own)."""

    async def acall(self, name: str, arguments: JSONObject) -> JSONObject:
        if (rejected := self._rejected(name, arguments)) is not None:
            return rejected
        try:
            return _observation(await self._acall(name, arguments))
        except Exception as exc:  # noqa: BLE001 - see _failure
            return _failure(name, exc)

    def _call(self, name: str, arguments: JSONObject) -> Any:
        return run_sync(self._acall(name, arguments))

    @abstractmethod
    async def _acall(self, name: str, arguments: JSONObject) -> Any:
        """Answer tool ``name`` with arguments that match its schema (see :meth:`Environment._call`)."""


def _observation(result: Any) -> JSONObject:
    # What reaches the agent is strict JSON: NaN, sets, dates and the like become marked text, images their shape.
    return json_safe(result if isinstance(result, dict) else {"result": result}, default=json_default)


def _failure(name: str, exc: Exception) -> JSONObject:
    """What the agent is told of a call that raised; what is not the agent's doing is raised again."""
    if isinstance(exc, TimeLimitExceeded):
        return tool_error("timeout", f"{name}: {describe(exc)}")
    if isinstance(exc, ToolError):
        return tool_error("tool_error", describe(exc))
    if isinstance(exc, (OccuBenchError, MemoryError)):  # not the agent's doing: an environment error
        raise exc
    if (resource := exhausted(exc)) is not None:
        raise WorldError(f"{name}: the world ran out of {resource}: {type(exc).__name__}: {describe(exc)}") from exc
    return tool_error("tool_failed", f"{type(exc).__name__}: {describe(exc)}")


class Wrapper(Environment):
    """Delegates everything to the wrapped environment; subclasses override what they change. A tool call has one
    override point, :meth:`acall`: :meth:`call` runs it on the harness loop, so a synchronous caller and an episode
    on the loop go through the same code."""

    def __init__(self, env: Environment) -> None:
        self.env = env

    def tools(self) -> list[ToolSpec]:
        return self.env.tools()

    def call(self, name: str, arguments: JSONObject) -> JSONObject:
        return run_sync(self.acall(name, arguments))

    async def acall(self, name: str, arguments: JSONObject) -> JSONObject:
        return await self.env.acall(name, arguments)

    def reset(self) -> None:
        self.env.reset()

    def close(self) -> None:
        self.env.close()


    def info(self) -> dict[str, Any]:
        return self.env.info()

    @property
    def unwrapped(self) -> Environment:
        return self.env.unwrapped

    def find(self, kind: type[E]) -> E | None:
        return self if isinstance(self, kind) else self.env.find(kind)
