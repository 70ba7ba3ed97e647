"""A policy that samples from an OpenAI-compatible endpoint (a vLLM server with the weights being trained) and
returns its turns as actions that carry its tokens: ``agent_fn`` of :class:`~occubench.distributed.RolloutPool`,
or of a Gymnasium loop.

    policy = EndpointPolicy("my-model", base_url="http://127.0.0.1:8000/v1", temperature=1.0)
    with RolloutPool("executable") as pool:
        rollouts = pool.rollout(policy, tasks, n=8)
    rows = [row for rollout in rollouts for row in rollout.rows()]

It talks as the built-in agent does (:class:`~occubench.core.agent.ToolCallingAgent`): the system prompt and the
instruction, then each assistant turn and the tool results, one chat per episode. Each model turn asks for
``logprobs`` and vLLM's ``return_token_ids`` (``record_tokens=False`` asks for neither) and its action carries the
tokens the endpoint sent (:mod:`occubench.gym.env`). A turn with several tool calls is played one call per step:
the first call's action carries the turn's tokens, the others none.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from occubench.config import RunConfig
from occubench.core.agent import assistant_message
from occubench.engine.models import build_models
from occubench.llm import Message, Model


@dataclass
class _Chat:
    messages: list[Message]
    tools: list[dict[str, Any]]
    #: The calls of the model's last turn not played yet, as (id, action).
    pending: deque[tuple[str, dict[str, Any]]] = field(default_factory=deque)
    #: The id of the call whose result the next observation is.
    called: str = ""


class EndpointPolicy:
    """``agent_fn(observation, info) -> action`` for a model on an endpoint (see the module docstring).

    ``model`` is the model's name on the endpoint; ``config`` and ``settings`` are the agent's run settings
    (``base_url``, ``api_key``, ``temperature``, ``max_tokens``, ``agent_params``, ``request_timeout``...), from
    which the model is built as ``occubench run`` builds the agent's. ``info`` is the one
    :class:`~occubench.distributed.RolloutPool` gives: the episode's reset info updated with its last step's, and
    ``episode``, which keeps the chats of episodes played at once apart (without it, ``task_id`` does). A Gymnasium
    loop of its own passes the same: the reset info, then ``{**reset_info, **step_info}``. An episode's chat starts
    when ``info`` has no ``step`` (the reset's) and ends with its answer. A failure of the endpoint raises.
    """

    def __init__(self, model: str, *, config: RunConfig | None = None, record_tokens: bool = True,
                 **settings: Any) -> None:
        self.config = RunConfig.create({**(dict(config) if config else {}), **settings, "agent_model": model,
                                        "record_tokens": record_tokens})
        self.model: Model = build_models(self.config, [self.config.model_role("agent")])["agent"]
        self._chats: dict[Any, _Chat] = {}

    def __call__(self, observation: str, info: dict[str, Any]) -> dict[str, Any]:
        key = info.get("episode", info.get("task_id"))
        if "step" not in info:
            chat = self._chats[key] = _Chat([{"role": "system", "content": info["system_prompt"]},
                                             {"role": "user", "content": observation}], info["tools"])
        else:
            chat = self._chats[key]
            chat.messages.append({"role": "tool", "tool_call_id": chat.called, "content": observation})
        if not chat.pending and (answer := self._turn(chat)) is not None:
            del self._chats[key]
            return answer
        chat.called, action = chat.pending.popleft()
        return action

    def _turn(self, chat: _Chat) -> dict[str, Any] | None:
        """Ask the model: its answer as an action, or None with its calls queued in ``chat.pending``."""
        reply = self.model.chat(chat.messages, tools=chat.tools).replies[0]
        tokens = {"tokens": reply.tokens.to_dict()} if reply.tokens is not None else {}
        if not reply.tool_calls:
            return {"answer": reply.content or "", **tokens}
        message = assistant_message(reply, sum(1 for sent in chat.messages if sent["role"] == "assistant") + 1)
        for call in message["tool_calls"]:
            chat.pending.append((call["id"], {"name": call["function"]["name"],
                                              "arguments": call["function"]["arguments"], **tokens}))
            tokens = {}  # the turn's tokens once, on its first call
        chat.messages.append(message)
        return None
