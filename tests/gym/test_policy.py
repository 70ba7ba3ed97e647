"""EndpointPolicy: a model on an OpenAI-compatible endpoint (the mock server) as a Gymnasium policy, whose actions
carry the tokens the endpoint sent and whose turns keep them in the judged trajectory."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import extra_reason

pytest.importorskip("gymnasium", reason=extra_reason("gym"))

from occubench.gym import EndpointPolicy, OccuBenchEnv
from occubench.testing import MockLLMServer
from occubench.testing.chat import prompt_token_ids, token_ids, token_logprobs

TASK = "clinic_scheduling/book_urgent_cardiology"


@pytest.fixture
def env() -> Iterator[OccuBenchEnv]:
    env = OccuBenchEnv("executable", TASK)
    yield env
    env.close()


def _play(envs: list[OccuBenchEnv], policy: EndpointPolicy) -> list[list[dict[str, Any]]]:
    """One episode in each env, their steps taken in turn as a rollout pool takes them; each one's actions."""
    starts = [env.reset() for env in envs]
    pending = {index: (observation, {**info, "episode": index}) for index, (observation, info) in enumerate(starts)}
    actions: list[list[dict[str, Any]]] = [[] for _ in envs]
    while pending:
        for index, (observation, info) in list(pending.items()):
            actions[index].append(policy(observation, info))
            observation, _, terminated, truncated, step = envs[index].step(actions[index][-1])
            del pending[index]
            if not (terminated or truncated):
                pending[index] = (observation, {**starts[index][1], **step, "episode": index})
    return actions


def test_each_turn_keeps_the_tokens_the_server_sent(server: MockLLMServer, env: OccuBenchEnv) -> None:
    policy = EndpointPolicy("agent-m", base_url=server.base_url, api_key="k")
    actions, = _play([env], policy)
    steps = env.trajectory.steps
    assert len(steps) == len(actions) == len(server.requests) == 3  # the mock agent's two calls, then its answer
    for request, step, action in zip(server.requests, steps, actions):
        assert request["logprobs"] is True and request["return_token_ids"] is True
        turn = " ".join([step.content or "", *(f"{c.name} {c.arguments}" for c in step.tool_calls)])
        assert step.tokens == action["tokens"] == {"prompt_ids": prompt_token_ids(request["messages"]),
                                                   "completion_ids": token_ids(turn),
                                                   "logprobs": token_logprobs(turn)}
    # It talks as the agent loop does: the system prompt and the instruction, then each call and its result.
    first, last = server.requests[0], server.requests[-1]
    assert first["messages"] == [{"role": "system", "content": env.trajectory.system_prompt},
                                 {"role": "user", "content": env.task.instruction}]
    assert first["tools"] == last["tools"] and [t["function"]["name"] for t in first["tools"]] == \
        [spec.name for spec in env.suite.world(env.task).tools()]
    sent = [m for m in last["messages"] if m["role"] in ("assistant", "tool")]
    assert [m["role"] for m in sent] == ["assistant", "tool", "assistant", "tool"]
    assert [m["tool_call_id"] for m in sent[1::2]] == [m["tool_calls"][0]["id"] for m in sent[::2]]
    assert [m["content"] for m in sent[1::2]] == [json.dumps(call.observation, ensure_ascii=False)
                                                  for call in env.trajectory.tool_calls]


def test_without_token_recording_nothing_is_asked_or_carried(server: MockLLMServer, env: OccuBenchEnv) -> None:
    actions, = _play([env], EndpointPolicy("agent-m", base_url=server.base_url, api_key="k", record_tokens=False))
    assert not any("logprobs" in r or "return_token_ids" in r for r in server.requests)
    assert not any("tokens" in action for action in actions)
    assert all(step.tokens is None for step in env.trajectory.steps)


def test_a_turn_of_several_calls_is_played_a_call_a_step_and_its_tokens_kept_once(env: OccuBenchEnv) -> None:
    def two_calls(request: dict, index: int) -> str | dict:
        if any(m["role"] == "tool" for m in request["messages"]):
            return "Done."
        names = [tool["function"]["name"] for tool in request["tools"][:2]]
        return {"content": None, "tool_calls": [{"name": name, "arguments": {}} for name in names]}

    with MockLLMServer(two_calls) as server:
        actions, = _play([env], EndpointPolicy("agent-m", base_url=server.base_url, api_key="k"))
    assert [("name" in a, "tokens" in a) for a in actions] == [(True, True), (True, False), (False, True)]
    assert [step.tokens is not None for step in env.trajectory.steps] == [True, False, True]
    assert len(server.requests) == 2  # the second call is played without asking the model again
    assistant, *results = server.requests[1]["messages"][2:]
    assert [m["tool_call_id"] for m in results] == [call["id"] for call in assistant["tool_calls"]]


def test_episodes_played_at_once_keep_their_own_chats(server: MockLLMServer) -> None:
    tasks = OccuBenchEnv("executable", TASK).tasks[:2]
    envs = [OccuBenchEnv("executable", task.task_id) for task in tasks]
    _play(envs, EndpointPolicy("agent-m", base_url=server.base_url, api_key="k"))
    instructions = [r["messages"][1]["content"] for r in server.requests]
    assert instructions == [task.instruction for _ in range(3) for task in tasks]  # taken in turn, never mixed
    assert all(env.trajectory.stop_reason == "answer" for env in envs)
    for env in envs:
        env.close()
