"""What a model endpoint answers: replies, their tool calls, and the tokens they cost."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

Message = dict[str, Any]


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


@dataclass
class Usage:
    """Tokens and requests spent, and the requests sent again by cause; one per role per task in the results."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    #: Prompt tokens the provider served from its prompt cache (part of ``prompt_tokens``).
    cached_tokens: int = 0
    #: Requests sent again, by cause: rate_limited, server_error, timeout, connection, malformed.
    retries: dict[str, int] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        """Prompt and completion tokens together."""
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.calls += other.calls
        self.cached_tokens += other.cached_tokens
        for cause, count in other.retries.items():
            self.retries[cause] = self.retries.get(cause, 0) + count

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        """Usage as a results file holds it; missing or malformed counts read as 0."""
        retries = data.get("retries")
        return cls(prompt_tokens=_count(data.get("prompt_tokens")),
                   completion_tokens=_count(data.get("completion_tokens")),
                   calls=_count(data.get("calls")), cached_tokens=_count(data.get("cached_tokens")),
                   retries={str(k): _count(v) for k, v in retries.items()} if isinstance(retries, dict) else {})


@dataclass(frozen=True)
class ToolCallRequest:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Tokens:
    """A reply's tokens exactly as the endpoint returned them, so a trainer needs no re-tokenization: the prompt's
    and the completion's token ids (vLLM's ``return_token_ids``) and each completion token's logprob (``logprobs``,
    which the OpenAI API returns too). What the endpoint did not return is None."""

    prompt_ids: tuple[int, ...] | None = None
    completion_ids: tuple[int, ...] | None = None
    logprobs: tuple[float, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {name: None if value is None else list(value) for name, value in asdict(self).items()}

    @classmethod
    def read(cls, data: Any) -> Tokens | None:
        """Tokens as a file or an answer holds them; a list that is not all ids (or all finite numbers) is left
        out rather than kept half right."""
        if not isinstance(data, dict):
            return None
        tokens = cls(_ids(data.get("prompt_ids")), _ids(data.get("completion_ids")), _numbers(data.get("logprobs")))
        return tokens if tokens != cls() else None


def _ids(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        return tuple(value)
    return None


def _numbers(value: Any) -> tuple[float, ...] | None:
    if isinstance(value, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) and v == v
                                       and abs(v) != float("inf") for v in value):
        return tuple(float(v) for v in value)
    return None


@dataclass(frozen=True)
class Reply:
    """One choice of a chat completion."""

    content: str | None
    tool_calls: tuple[ToolCallRequest, ...] = ()
    finish_reason: str | None = None
    #: The model's reasoning (``<think>`` text, ``reasoning_content``), kept apart from ``content``.
    reasoning: str | None = None
    #: Its tokens, when the request asked for them (``--record-tokens``).
    tokens: Tokens | None = None

    def to_message(self) -> Message:
        """The assistant message to append to the conversation: text content, ``""`` rather than null beside tool
        calls (servers such as llama.cpp's refuse null)."""
        message: Message = {"role": "assistant", "content": self.content or ""}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message


@dataclass(frozen=True)
class Completion:
    replies: list[Reply]
    usage: Usage = field(default_factory=Usage)
    #: The model that answered, as the endpoint names it (None where it does not say; not kept by the response
    #: cache, so not compared).
    model: str | None = field(default=None, compare=False)
