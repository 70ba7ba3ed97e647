"""Our worlds and verifiers are synchronous code; Inspect is asynchronous. They meet here.

A world's call, a verdict, a day's scoring run in a worker thread (:func:`in_thread`); the models they ask (the
simulator, the judge, the colleagues) are Inspect models of the eval's model roles, called back on Inspect's event
loop (:class:`InspectChat`), so Inspect's providers, retries, limits and transcript apply to them as to the agent.

An Inspect exception raised inside such a call (a limit reached, a provider that gave up, a cancellation) must
reach Inspect as it was, not become a tool's error message for the agent: it crosses our code as
:class:`Tunnelled` (an :class:`~occubench.errors.OccuBenchError`, which the tool contract lets through) and is
raised again, unchanged, by :func:`in_thread`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import anyio.from_thread
import anyio.to_thread
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

T = TypeVar("T")

#: Request parameters of a role (``RunConfig.<role>_params`` and the run's defaults) that Inspect's GenerateConfig
#: has under the same name.
_PARAMS = ("max_tokens", "temperature", "top_p", "reasoning_effort", "seed")


class Tunnelled(OccuBenchError):
    """An exception of Inspect's on its way back to Inspect through our synchronous code."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(f"{type(original).__name__}: {original}")
        self.original = original


async def in_thread(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` in a worker thread, from which :class:`InspectChat` can reach the event loop."""
    try:
        return await anyio.to_thread.run_sync(functools.partial(function, *args))
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
    """A :class:`~occubench.llm.ChatClient` whose requests go to an Inspect model; call it from :func:`in_thread`.

    The role's default parameters (an output cap for the simulator, the judge and the colleagues, as ``occubench
    run`` sets them) apply only where the Inspect model's own configuration leaves them unset."""

    def __init__(self, model: InspectModel) -> None:
        self.model = model

    def chat(self, model: str, messages: list[Message], *, tools: list[dict[str, Any]] | None = None,
             params: dict[str, Any] | None = None, sample: int = 0, role: str = "model") -> Completion:
        return self._completion(self._generate(messages, params or {}, 1, role))

    def samples(self, model: str, messages: list[Message], count: int, *,
                params: dict[str, Any] | None = None, role: str = "model") -> Completion:
        completion = self._completion(self._generate(messages, params or {}, count, role))
        while len(completion.replies) < count:  # a provider that ignores num_choices
            more = self._completion(self._generate(messages, params or {}, 1, role))
            completion.usage.add(more.usage)
            completion = Completion(completion.replies + more.replies, completion.usage)
        return Completion(completion.replies[:count], completion.usage)

    def _generate(self, messages: list[Message], params: dict[str, Any], count: int, role: str) -> ModelOutput:
        own = self.model.config.model_dump(exclude_none=True)
        settings = {k: v for k, v in params.items() if k in _PARAMS and k not in own}
        config = GenerateConfig(**settings, num_choices=count if count > 1 else None)
        try:
            output = anyio.from_thread.run(functools.partial(self.model.generate, [_message(m) for m in messages],
                                                             config=config))
        except BaseException as exc:  # Inspect's own too (limits, cancellation): see the module docstring
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
