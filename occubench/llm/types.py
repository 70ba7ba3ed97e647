"""What a model endpoint answers: replies, their tool calls, and the tokens they cost."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

Message = dict[str, Any]


@dataclass
class Usage:
    """Tokens and requests spent; one per role per task in the results."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.calls += other.calls

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        """Usage as a results file holds it; missing or malformed counts read as 0."""
        def count(key: str) -> int:
            value = data.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else 0
        return cls(prompt_tokens=count("prompt_tokens"), completion_tokens=count("completion_tokens"),
                   calls=count("calls"))


@dataclass(frozen=True)
class ToolCallRequest:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Reply:
    """One choice of a chat completion."""

    content: str | None
    tool_calls: tuple[ToolCallRequest, ...] = ()
    finish_reason: str | None = None

    def to_message(self) -> Message:
        """The assistant message to append to the conversation."""
        message: Message = {"role": "assistant", "content": self.content}
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
