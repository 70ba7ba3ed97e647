"""An environment simulated by an LLM: each tool call is answered by a world model from the config."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from occubench.environment import Environment, JSONObject
from occubench.errors import WorldError
from occubench.llm.model import Model
from occubench.llm.parsing import extract_tagged_json
from occubench.llm.types import Message
from occubench.lwm.config import WorldModelConfig
from occubench.tools import ToolSpec, json_arguments, tool_error

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


class LWMEnvironment(Environment):
    """A Language World Model environment.

    Calls follow the contract of :class:`Environment`: an unknown tool or arguments that do not match the config's
    schema are answered at once, without asking the world model. The world model sees the config's system prompt,
    every earlier action with its observation, and the current action. A reply without a parsable
    ``<predicted_observation>`` object is asked again, at most ``max_reasks`` times; after that the call raises
    :class:`WorldError` (an environment error, never a silent ``{}``). Calls have no time limit: the world model's
    requests have their own timeouts.
    """

    def __init__(self, config: WorldModelConfig, client: ChatClient | openai.OpenAI, world_model: str = "gpt-4o", *,
                 params: dict[str, Any] | None = None, fault_rules: str | None = None, max_reasks: int = 2) -> None:
        self.config = config
        from occubench.llm.client import as_llm_client  # the openai SDK loads once a world is simulated

        self.model = Model(as_llm_client(client), world_model, dict(params or {}), role="world")
        self.system_prompt = config.system_prompt + (f"\n\n{fault_rules}" if fault_rules else "") + _PROTOCOL
        self.max_reasks = max_reasks
        self.history: list[tuple[JSONObject, JSONObject]] = []

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

    def _call(self, name: str, arguments: JSONObject) -> JSONObject:
        action = {"name": name, "arguments": arguments}
        log.debug("[LWM] Simulating: %s, history_len=%d", name, len(self.history))
        messages: list[Message] = [{"role": "system", "content": self.system_prompt}]
        for past_action, observation in self.history:
            messages.append({"role": "user", "content": json.dumps(past_action, ensure_ascii=False)})
            messages.append({"role": "assistant",
                             "content": f"<{TAG}>{json.dumps(observation, ensure_ascii=False)}</{TAG}>"})
        messages.append({"role": "user", "content": json.dumps(action, ensure_ascii=False)})
        for attempt in range(self.max_reasks + 1):
            completion = self.model.chat(messages)
            content = completion.replies[0].content
            try:
                observation = extract_tagged_json(content, TAG)
            except ValueError as exc:
                reason = str(exc)
                log.debug("[LWM] Unparsable observation (attempt %d): %s", attempt + 1, reason)
                messages += [{"role": "assistant", "content": content or ""},
                             {"role": "user", "content": f"Your reply could not be used: {reason}. Reply again "
                              f"with exactly one JSON object between <{TAG}> and </{TAG}> tags."}]
                continue
            self.history.append((action, observation))
            log.debug("[LWM] Observation: %s", _clip(json.dumps(observation, ensure_ascii=False)))
            return observation
        raise WorldError(f"world model {self.model.name} gave no parsable observation for `{name}` in "
                         f"{self.max_reasks + 1} attempts: {reason}; last reply: {_clip(content or '')!r}")

    def reset(self) -> None:
        self.history.clear()



def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
