"""What happened in an episode: the agent's turns and the tool calls they made."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class ToolCall:
    """One tool call as the agent issued it and the observation it received."""

    name: str
    arguments: str
    observation: dict[str, Any]
    #: Index among the calls that reached the environment; None when rejected before it (bad JSON, unknown tool).
    call_index: int | None = None


@dataclass
class Step:
    """One agent turn: optional text and the tool calls it made, executed in order."""

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    #: With ``--record-tokens``: the turn's prompt and completion token ids and logprobs as the endpoint returned
    #: them (see :class:`occubench.llm.types.Tokens`), and the request's sampling parameters under ``params``.
    tokens: dict[str, Any] | None = None


@dataclass
class Trajectory:
    steps: list[Step] = field(default_factory=list)
    final_answer: str = ""
    #: "answer" (a reply without tool calls), "max_steps", "context_length", a per-task limit
    #: ("max_tokens_per_task", "max_seconds_per_task"); empty until the agent stops, and "error" on a result whose
    #: episode failed before that.
    stop_reason: str = ""
    #: What a model-driven agent was told, and its conversation after that system prompt and the instruction
    #: (assistant turns, tool results): what the viewer shows. Scripted agents leave both empty.
    system_prompt: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    #: What an agent program printed (``--agent command:...``): its command line, exit code, stdout and stderr.
    agent_output: dict[str, Any] = field(default_factory=dict)

    @property
    def step_count(self) -> int:
        return len(self.steps)

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [call for step in self.steps for call in step.tool_calls]

    def render(self) -> str:
        """The trajectory as the text the verifier reads and results.jsonl stores."""
        lines: list[str] = []
        for step in self.steps:
            if step.content and step.tool_calls:
                lines.append(f"[Agent Thought]: {step.content}")
            for call in step.tool_calls:
                lines.append(f"[Agent Action]: Call tool `{call.name}` with arguments {call.arguments}")
                lines.append(f"[Observation]: {json.dumps(call.observation, ensure_ascii=False)}")
        lines.append(f"[Agent Final Response]: {self.final_answer}")
        if self.stop_reason not in ("answer", ""):
            lines.append(f"[Episode ended]: {self.stop_reason}")
        return "\n".join(lines)

    def to_steps_json(self) -> list[dict[str, Any]]:
        return [asdict(step) for step in self.steps]
