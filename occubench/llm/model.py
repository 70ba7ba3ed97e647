"""A model as a role uses it: which endpoint, which model name, which request parameters, and the role it plays
(agent, world, verifier, npc, ...), which names it in errors and in the usage it is counted under."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from occubench.llm.types import Completion, Message


class ChatClient(Protocol):
    """What a model's requests go through: :class:`~occubench.llm.LLMClient` (an OpenAI-compatible endpoint), or
    another harness's model layer (Inspect's model roles, :mod:`occubench.inspect`). The async methods serve
    episodes; the synchronous ones, code that is not a coroutine (synthesis, a world's own code)."""

    async def achat(self, model: str, messages: list[Message], *, tools: list[dict[str, Any]] | None = None,
                    params: dict[str, Any] | None = None, sample: int = 0, role: str = "model") -> Completion: ...

    async def asamples(self, model: str, messages: list[Message], count: int, *,
                       params: dict[str, Any] | None = None, role: str = "model") -> Completion: ...

    def chat(self, model: str, messages: list[Message], *, tools: list[dict[str, Any]] | None = None,
             params: dict[str, Any] | None = None, sample: int = 0, role: str = "model") -> Completion: ...

    def samples(self, model: str, messages: list[Message], count: int, *,
                params: dict[str, Any] | None = None, role: str = "model") -> Completion: ...


@dataclass(frozen=True)
class Model:
    client: ChatClient
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    role: str = "model"

    def chat(self, messages: list[Message], *, tools: list[dict[str, Any]] | None = None,
             sample: int = 0) -> Completion:
        return self.client.chat(self.name, messages, tools=tools, params=self.params, sample=sample, role=self.role)

    def samples(self, messages: list[Message], count: int) -> Completion:
        return self.client.samples(self.name, messages, count, params=self.params, role=self.role)

    async def achat(self, messages: list[Message], *, tools: list[dict[str, Any]] | None = None,
                    sample: int = 0) -> Completion:
        return await self.client.achat(self.name, messages, tools=tools, params=self.params, sample=sample,
                                       role=self.role)

    async def asamples(self, messages: list[Message], count: int) -> Completion:
        return await self.client.asamples(self.name, messages, count, params=self.params, role=self.role)
