"""An environment simulated by an LLM: each tool call is answered by a world model from the config."""

from __future__ import annotations

import json
import logging
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any

from occubench.core.environment import AsyncEnvironment, JSONObject
from occubench.core.tools import ToolSpec, json_arguments, tool_error
from occubench.errors import WorldError
from occubench.llm.ask import aask_json
from occubench.llm.budget import prompt_chars
from occubench.llm.model import Model
from occubench.llm.parsing import extract_tagged_json
from occubench.llm.types import Message
from occubench.simulated.config import WorldModelConfig

if TYPE_CHECKING:
    import openai

    from occubench.llm.model import ChatClient

log = logging.getLogger("occubench")

TAG = "predicted_observation"

_PROTOCOL = f"""

### Response protocol for this session
Each user message is one action, a JSON object with the tool "name" and its "arguments". Update the environment \
state as the action implies, then reply with the observation the agent receives: exactly one JSON object between \
<{TAG}> and </{TAG}> tags. Earlier exchanges in this conversation are the history of the episode; keep the state \
consistent with them."""


@lru_cache(maxsize=1024)
def _system_prompt(prompt: str, fault_rules: str | None) -> str:
    """The world model's system prompt: one string for every episode of a world, not a copy each (thousands of
    episodes in flight held about 9 kB each)."""
    return prompt + (f"\n\n{fault_rules}" if fault_rules else "") + _PROTOCOL


class SimulatedEnvironment(AsyncEnvironment):
    """A Language World Model environment.

    Calls follow the contract of :class:`Environment`: an unknown tool or arguments that do not match the config's
    schema are answered at once, without asking the world model. The world model sees the config's system prompt,
    every earlier action with its observation, and the current action. A reply without a parsable
    ``<predicted_observation>`` object is asked again, at most ``max_reasks`` times; after that the call raises
    :class:`WorldError` (an environment error, never a silent ``{}``). Calls have no time limit: the world model's
    requests have their own timeouts.
    """

    def __init__(self, config: WorldModelConfig, client: ChatClient | openai.OpenAI | openai.AsyncOpenAI,
                 world_model: str = "gpt-4o", *,
                 params: dict[str, Any] | None = None, fault_rules: str | None = None, max_reasks: int = 2,
                 context: int | None = None) -> None:
        self.config = config
        from occubench.llm.client import as_llm_client  # the client loads only once a world is simulated

        self.model = Model(as_llm_client(client), world_model, dict(params or {}), role="world")
        self.system_prompt = _system_prompt(config.system_prompt, fault_rules)
        self.max_reasks = max_reasks
        self.history: list[tuple[JSONObject, JSONObject]] = []
        #: Characters the prompt may have, from the world model's context window (None: no limit).
        self.budget = prompt_chars(context, self.model.params)
        #: The most earlier calls left out of one request to fit the context window, for the result.
        self.left_out = 0

    def tools(self) -> list[ToolSpec]:
        return list(self.config.specs)

    def get_tool_schemas(self) -> list[JSONObject]:
        """The tools in OpenAI function-calling format (the name the OccuBench API uses)."""
        return self.config.tool_schemas()

    def simulate(self, tool_name: str, arguments: str | JSONObject) -> str:
        """Simulate one call; ``arguments`` may be the JSON text a model produced. Returns the observation as JSON
        text, ready to be a tool message's content."""
        if isinstance(arguments, str):
            try:
                arguments = json_arguments(arguments)
            except ValueError as exc:
                return json.dumps(tool_error("invalid_arguments", str(exc)), ensure_ascii=False)
        return json.dumps(self.call(tool_name, arguments), ensure_ascii=False)

    async def _acall(self, name: str, arguments: JSONObject) -> JSONObject:
        action = {"name": name, "arguments": arguments}
        log.debug("[LWM] Simulating: %s, history_len=%d", name, len(self.history))
        exchanges = [[{"role": "user", "content": json.dumps(past, ensure_ascii=False)},
                      {"role": "assistant", "content": f"<{TAG}>{json.dumps(observation, ensure_ascii=False)}</{TAG}>"}]
                     for past, observation in self.history]
        current: Message = {"role": "user", "content": json.dumps(action, ensure_ascii=False)}
        kept = self._fit(exchanges, len(self.system_prompt) + len(current["content"]))
        messages: list[Message] = [{"role": "system", "content": self.system_prompt},
                                   *(message for exchange in kept for message in exchange), current]
        if len(kept) < len(exchanges):  # the oldest calls go first, and the world model is told so
            self.left_out = max(self.left_out, len(exchanges) - len(kept))
            first = messages[1]
            messages[1] = {**first, "content": f"[{len(exchanges) - len(kept)} earlier call(s) and their observations "
                           "left out here to fit the context window; stay consistent with the state they left]\n"
                           f"{first['content']}"}
        answer = await aask_json(self.model, messages, partial(extract_tagged_json, tag=TAG), reasks=self.max_reasks,
                                 correction=_correction, label="[LWM] Unparsable observation")
        if answer.value is None:
            raise WorldError(f"world model {self.model.name} gave no parsable observation for `{name}` in "
                             f"{answer.attempts} attempts: {answer.reason}; last reply: {_clip(answer.reply or '')!r}")
        self.history.append((action, answer.value))
        log.debug("[LWM] Observation: %s", _clip(json.dumps(answer.value, ensure_ascii=False)))
        return answer.value

    def _fit(self, exchanges: list[list[Message]], fixed: int) -> list[list[Message]]:
        """The newest ``exchanges`` that fit the budget beside ``fixed`` characters (all of them without one)."""
        if self.budget is None:
            return exchanges
        room, start = self.budget - fixed, len(exchanges)
        while start > 0 and (size := sum(len(str(m["content"])) for m in exchanges[start - 1])) <= room:
            room -= size
            start -= 1
        return exchanges[start:]

    def info(self) -> dict[str, Any]:
        return {"world_calls_left_out": self.left_out} if self.left_out else {}

    def reset(self) -> None:
        self.history.clear()
        self.left_out = 0


def _correction(problems: list[str]) -> str:
    return (f"Your reply could not be used: {'; '.join(problems)}. Reply again with exactly one JSON object between "
            f"<{TAG}> and </{TAG}> tags.")


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
