"""The suite's models under Inspect (:class:`InspectChat`): every request runs on Inspect's loop, whether our code
awaits it there, asks it synchronously from a thread that loop lent (world code), or awaits it on the harness loop
(synchronous code run by ``run_sync``); an exception of Inspect's crosses a world's tool contract unchanged; a
cancelled sample stops its requests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.conftest import extra_reason

pytest.importorskip("inspect_ai", reason=extra_reason("inspect"))

import anyio
from inspect_ai.model import get_model
from inspect_ai.util import LimitExceededError

from occubench.core.environment import AsyncEnvironment, Environment, JSONObject
from occubench.core.tools import ToolSpec
from occubench.inspect._bridge import InspectChat, untunnelled
from occubench.llm import Message, Model
from occubench.testing import MockLLMServer
from occubench.util.aio import off_loop, run_sync

ASK: list[Message] = [{"role": "user", "content": "Who approves refunds?"}]
SPEC = ToolSpec("ask", "Ask a colleague.", {"type": "object", "properties": {}})


def _on_inspect_loop(test: Callable[[Model, list[asyncio.AbstractEventLoop]], Awaitable[None]],
                     generate: Callable[..., Awaitable[Any]] | None = None) -> None:
    """Run ``test`` on a loop standing for Inspect's, with a model whose requests note the loop they run on."""
    with MockLLMServer(lambda request, index: "Ask Dana in finance.") as server:
        async def main() -> None:
            inspect_model = get_model("openai/gpt-4o-mini", base_url=server.base_url, api_key="k", memoize=False)
            real, loops = generate or inspect_model.generate, []

            async def noting(*args: Any, **kwargs: Any) -> Any:
                loops.append(asyncio.get_running_loop())
                return await real(*args, **kwargs)

            inspect_model.generate = noting  # type: ignore[method-assign]
            await test(Model(InspectChat(inspect_model), "gpt-4o-mini", role="npc"), loops)

        asyncio.run(main())


def test_every_request_runs_on_inspect_s_loop_whoever_asks() -> None:
    async def test(model: Model, loops: list[asyncio.AbstractEventLoop]) -> None:
        async def on_harness_loop() -> str:
            return (await model.achat(ASK)).replies[0].content or ""

        answers = [(await model.achat(ASK)).replies[0].content,  # our episode code, on Inspect's loop
                   (await off_loop(model.chat, ASK)).replies[0].content,  # world code in a thread the loop lent
                   await off_loop(run_sync, on_harness_loop()),  # synchronous code's coroutine on the harness loop
                   (await off_loop(model.samples, ASK, 2)).replies[1].content]
        assert answers == ["Ask Dana in finance."] * 4
        assert loops and set(loops) == {asyncio.get_running_loop()}
        with pytest.raises(RuntimeError, match="await achat"):  # blocking on the loop the request needs
            model.chat(ASK)

    _on_inspect_loop(test)


class _Colleagues(Environment):
    """A world whose code asks a model synchronously."""

    def __init__(self, model: Model) -> None:
        self.model = model

    def tools(self) -> list[ToolSpec]:
        return [SPEC]

    def _call(self, name: str, arguments: JSONObject) -> Any:
        return self.model.chat(ASK).replies[0].content


class _Simulated(AsyncEnvironment):
    """A world whose calls await a model."""

    def __init__(self, model: Model) -> None:
        self.model = model

    def tools(self) -> list[ToolSpec]:
        return [SPEC]

    async def _acall(self, name: str, arguments: JSONObject) -> Any:
        return (await self.model.achat(ASK)).replies[0].content


def test_an_inspect_exception_crosses_the_tool_contract_unchanged() -> None:
    limit = LimitExceededError("token", value=101, limit=100)

    async def exceeded(*args: Any, **kwargs: Any) -> Any:
        raise limit

    async def test(model: Model, loops: list[asyncio.AbstractEventLoop]) -> None:
        for world in (_Colleagues(model), _Simulated(model)):
            # Not a tool_failed observation for the agent: Inspect's own, to end the sample.
            with pytest.raises(LimitExceededError) as raised:
                await untunnelled(world.acall("ask", {}))
            assert raised.value is limit

    _on_inspect_loop(test, exceeded)


def test_a_cancelled_sample_stops_its_requests() -> None:
    async def stalled(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(60)

    async def test(model: Model, loops: list[asyncio.AbstractEventLoop]) -> None:
        for world in (_Colleagues(model), _Simulated(model)):
            started = time.monotonic()
            with anyio.move_on_after(0.2) as scope:  # a sample's time limit
                await untunnelled(world.acall("ask", {}))
            assert scope.cancelled_caught and time.monotonic() - started < 10

    _on_inspect_loop(test, stalled)
