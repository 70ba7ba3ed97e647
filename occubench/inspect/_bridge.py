"""Where our episodes meet Inspect: the models of the suite's roles, and the exceptions that must cross our code.

Under Inspect our episode code is awaited on Inspect's event loop (the solver and the scorer await a world's
:meth:`~occubench.core.environment.Environment.acall` and the suite's
:meth:`~occubench.core.suite.Suite.averify`), and code that blocks runs in threads that loop lends
(:func:`occubench.util.aio.off_loop`). The models the suite asks (the simulator, the judges, the colleagues) are
Inspect models of the eval's model roles (:class:`InspectChat`), so Inspect's providers, retries, limits and
transcript apply to them as to the agent: their requests run on Inspect's loop, awaited there, or reached from a
thread it lent (a colleague in a world's own code), or from another loop (our synchronous code's harness loop).

An Inspect exception raised by such a request (a limit reached, a provider that gave up) must reach Inspect as it
was, not become a tool's error message for the agent: it crosses our code as :class:`Tunnelled` (an
:class:`~occubench.errors.OccuBenchError`, which the tool contract lets through) and is raised again, unchanged,
by :func:`untunnelled`. A cancellation (the sample's time limit) stays one on a loop, where our code never takes
it for a tool's failure; only a synchronous caller, which sees it as an ordinary exception, gets it tunnelled.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import anyio.from_thread
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
)
from inspect_ai.model import Model as InspectModel

from occubench.errors import LLMUnavailableError, OccuBenchError
from occubench.llm.types import Completion, Message, Reply, Usage
from occubench.util.aio import on_loop

T = TypeVar("T")

#: Request parameters of a role (``RunConfig.<role>_params`` and the run's defaults) that Inspect's GenerateConfig
#: has under the same name.
_PARAMS = ("max_tokens", "temperature", "top_p", "reasoning_effort", "seed")


class Tunnelled(OccuBenchError):
    """An exception of Inspect's on its way back to Inspect through our code."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(f"{type(original).__name__}: {original}")
        self.original = original


async def untunnelled(awaitable: Awaitable[T]) -> T:
    """``await awaitable`` (our episode code), with an Inspect exception that crossed it raised as it was."""
    try:
        return await awaitable
    except Tunnelled as exc:
        raise exc.original from None


def _message(message: Message) -> ChatMessage:
    content = message.get("content") or ""
    if message["role"] == "system":
        return ChatMessageSystem(content=content)
    if message["role"] == "assistant":
        return ChatMessageAssistant(content=content)
    return ChatMessageUser(content=content)


class InspectChat:
    """A :class:`~occubench.llm.ChatClient` whose requests go to an Inspect model, on Inspect's loop. Make it on
    that loop, while a sample runs (the model roles are the sample's).

    The role's default parameters (an output cap for the simulator, the judge and the colleagues, as ``occubench
    run`` sets them) apply only where the Inspect model's own configuration leaves them unset."""

    def __init__(self, model: InspectModel) -> None:
        self.model = model
        self.loop = asyncio.get_running_loop()

    async def achat(self, model: str, messages: list[Message], *, tools: list[dict[str, Any]] | None = None,
                    params: dict[str, Any] | None = None, sample: int = 0, role: str = "model") -> Completion:
        return self._completion(await self._generate(messages, params or {}, 1, role))

    async def asamples(self, model: str, messages: list[Message], count: int, *,
                       params: dict[str, Any] | None = None, role: str = "model") -> Completion:
        completion = self._completion(await self._generate(messages, params or {}, count, role))
        while len(completion.replies) < count:  # a provider that ignores num_choices
            more = self._completion(await self._generate(messages, params or {}, 1, role))
            completion.usage.add(more.usage)
            completion = Completion(completion.replies + more.replies, completion.usage)
        return Completion(completion.replies[:count], completion.usage)

    def chat(self, model: str, messages: list[Message], *, tools: list[dict[str, Any]] | None = None,
             params: dict[str, Any] | None = None, sample: int = 0, role: str = "model") -> Completion:
        return self._wait(functools.partial(self.achat, model, messages, tools=tools, params=params, sample=sample,
                                            role=role))

    def samples(self, model: str, messages: list[Message], count: int, *,
                params: dict[str, Any] | None = None, role: str = "model") -> Completion:
        return self._wait(functools.partial(self.asamples, model, messages, count, params=params, role=role))

    @staticmethod
    def _wait(request: Callable[[], Coroutine[Any, Any, Completion]]) -> Completion:
        """``request()`` from synchronous code, in a thread an event loop lent (off_loop): awaited on that loop
        (Inspect's, else the request moves there) in the caller's cancel scope, so the sample's time limit stops it
        too."""
        if on_loop():  # blocking here would stall the loop the request needs
            raise RuntimeError("InspectChat.chat/samples was called on a running event loop: await achat/asamples")
        try:
            return anyio.from_thread.run(request)
        except OccuBenchError:
            raise  # ours, or Inspect's already tunnelled
        except BaseException as exc:  # the crossing's own: a request Inspect cancelled arrives as an Exception here
            raise Tunnelled(exc) from exc

    async def _generate(self, messages: list[Message], params: dict[str, Any], count: int, role: str) -> ModelOutput:
        own = self.model.config.model_dump(exclude_none=True)
        settings = {k: v for k, v in params.items() if k in _PARAMS and k not in own}
        config = GenerateConfig(**settings, num_choices=count if count > 1 else None)
        request = functools.partial(self.model.generate, [_message(m) for m in messages], config=config)
        try:
            if asyncio.get_running_loop() is self.loop:
                output = await request()
            else:  # another loop (a judge our synchronous code runs with run_sync): Inspect's providers live on
                # Inspect's loop; the request runs there in a copy of this context (the sample's transcript, usage)
                output = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(request(), self.loop))
        except Exception as exc:  # Inspect's (a limit, a provider that gave up): see the module docstring
            raise Tunnelled(exc) from exc
        if not output.choices:  # not the agent's doing: an error, never an empty observation or verdict
            raise LLMUnavailableError(f"{role} model {self.model}: no reply ({output.error or 'no choices'})")
        return output

    @staticmethod
    def _completion(output: ModelOutput) -> Completion:
        usage = Usage(calls=1)
        if output.usage is not None:
            usage.prompt_tokens, usage.completion_tokens = output.usage.input_tokens, output.usage.output_tokens
        return Completion([Reply(choice.message.text, finish_reason=choice.stop_reason)
                           for choice in output.choices], usage)
