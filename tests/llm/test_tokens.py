"""Token-exact rollouts (``--record-tokens``): each agent turn keeps the token ids and logprobs the endpoint sent."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from occubench import RunConfig, run
from occubench.llm import LLMClient
from occubench.llm.types import Tokens
from occubench.testing import MockLLMServer
from occubench.testing.chat import token_ids, token_logprobs

QUIET = Console(quiet=True)


def _agent_requests(server: MockLLMServer) -> list[dict]:
    return [r for r in server.requests if r.get("tools")]


def test_each_agent_turn_keeps_the_tokens_the_server_sent(small_data: Path, tmp_path: Path) -> None:
    with MockLLMServer() as server:
        summary = run(RunConfig(agent_model="agent-m", world_model="world-m", base_url=server.base_url,
                                data_dir=str(small_data), output_dir=str(tmp_path), record_tokens=True,
                                skip_preflight=True, max_concurrency=1), console=QUIET)
        asked = _agent_requests(server)
    steps = [step for result in summary.results for step in result.steps]
    assert steps and len(steps) == len(asked)
    for request, step in zip(asked, steps):  # one episode at a time: turns in the order they were asked
        assert step.tokens is not None
        assert step.tokens["prompt_ids"] == token_ids(json.dumps(request["messages"]))
        turn = (step.content or "") + "".join(f"{c.name} {c.arguments}" for c in step.tool_calls)
        assert step.tokens["completion_ids"] == token_ids(turn)
        assert step.tokens["logprobs"] == token_logprobs(turn)
        assert step.tokens["params"]["logprobs"] is True and request["return_token_ids"] is True
    # and as the results file holds them
    saved = [json.loads(line) for path in tmp_path.glob("*/results.jsonl") for line in path.read_text().splitlines()]
    assert [s["tokens"] for r in saved for s in r["steps"]] == [step.tokens for step in steps]


def test_without_the_flag_nothing_is_asked_or_kept(small_data: Path, tmp_path: Path) -> None:
    with MockLLMServer() as server:
        summary = run(RunConfig(agent_model="agent-m", world_model="world-m", base_url=server.base_url,
                                data_dir=str(small_data), output_dir=str(tmp_path), skip_preflight=True), console=QUIET)
        asked = _agent_requests(server)
    assert not any("logprobs" in r or "return_token_ids" in r for r in asked)
    assert all(step.tokens is None for result in summary.results for step in result.steps)


def test_an_endpoint_that_refuses_token_ids_is_asked_for_logprobs_alone() -> None:
    with MockLLMServer(lambda request, index: "ok", refuse_token_ids=True) as server:
        client = LLMClient("k", server.base_url)
        reply = client.chat("m", [{"role": "user", "content": "hi"}],
                            params={"logprobs": True, "return_token_ids": True}).replies[0]
    assert reply.tokens == Tokens(None, None, tuple(token_logprobs("ok")))


def test_hostile_token_lists_are_left_out_not_kept_half_right() -> None:
    assert Tokens.read({"prompt_ids": [1, -2], "completion_ids": [3, True], "logprobs": [0.5, float("nan")]}) is None
    assert Tokens.read({"prompt_ids": [1, 2], "logprobs": "x"}) == Tokens((1, 2), None, None)
    assert Tokens.read("not a dict") is None
