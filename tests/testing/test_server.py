"""The mock server, driven through the real openai SDK, and the scripted responder."""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import openai
import pytest

from occubench.cli import main
from occubench.store import read_results
from occubench.testing import MockLLMServer, ServerStats, make_scripted_responder, scripted_responder
from occubench.testing.server import _server_from_args
from occubench.util.openfiles import raise_open_files
from tests.core.test_images import PNG_TEXT

USER = [{"role": "user", "content": "hi"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup_patient",
            "parameters": {
                "type": "object",
                "properties": {
                    "patient_id": {"type": "string"},
                    "ward": {"type": "string", "enum": ["ICU", "ER"]},
                    "limit": {"type": "integer"},
                    "verbose": {"type": "boolean"},
                },
                "required": ["patient_id", "ward", "limit"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "schedule",
            "parameters": {
                "type": "object",
                "properties": {"dose": {"type": "number"}, "slots": {"type": "array"}, "meta": {"type": "object"}},
                "required": ["dose", "slots", "meta"],
            },
        },
    },
]
WORLD_SYSTEM = "Simulate the tool. Reply as <predicted_observation>{json}</predicted_observation>."
VERIFIER_PROMPT = "Judge the trajectory below. Answer with <verdict>{...}</verdict>.\nTrajectory: step 1 ..."


@pytest.fixture
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer(lambda request, index: f"reply {index}") as srv:
        yield srv


def _client(srv: MockLLMServer, **kwargs: object) -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0, timeout=5, **kwargs)


def _world_request(action_text: str) -> dict:
    return {
        "messages": [
            {"role": "system", "content": WORLD_SYSTEM},
            {"role": "user", "content": 'Earlier: {"name": "old", "arguments": {}}'},
            {"role": "user", "content": action_text},
        ]
    }


# --- server -----------------------------------------------------------------------------------


def test_plain_reply_and_stats(server: MockLLMServer) -> None:
    completion = _client(server).chat.completions.create(model="m", messages=USER)
    assert completion.choices[0].message.content == "reply 0"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "m"
    assert completion.usage is not None and completion.usage.prompt_tokens > 0
    assert completion.usage.total_tokens == completion.usage.prompt_tokens + completion.usage.completion_tokens
    assert server.requests == [{"model": "m", "messages": USER}]
    stats = server.stats
    assert isinstance(stats, ServerStats)
    assert (stats.requests, stats.responses_by_status, stats.max_in_flight) == (1, {200: 1}, 1)
    assert stats.total_prompt_tokens == completion.usage.prompt_tokens
    assert stats.total_completion_tokens == completion.usage.completion_tokens


def test_tool_call_reply_parses() -> None:
    def responder(request: dict, index: int) -> dict:
        return {"content": None, "tool_calls": [{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": "{}"}]}

    with MockLLMServer(responder) as srv:
        choice = _client(srv).chat.completions.create(model="m", messages=USER).choices[0]
    assert choice.finish_reason == "tool_calls"
    calls = choice.message.tool_calls
    assert calls is not None and [c.function.name for c in calls] == ["a", "b"]
    assert json.loads(calls[0].function.arguments) == {"x": 1}
    assert calls[1].function.arguments == "{}"
    assert all(c.type == "function" and c.id.startswith("call_") for c in calls)
    assert calls[0].id != calls[1].id


def test_n_choices(server: MockLLMServer) -> None:
    completion = _client(server).chat.completions.create(model="m", messages=USER, n=3)
    assert [c.index for c in completion.choices] == [0, 1, 2]
    assert [c.message.content for c in completion.choices] == ["reply 0", "reply 1", "reply 2"]


def test_n_unsupported_is_bad_request() -> None:
    with MockLLMServer(support_n=False) as srv:
        with pytest.raises(openai.BadRequestError) as info:
            _client(srv).chat.completions.create(model="m", messages=USER, n=2)
        assert info.value.param == "n"
        assert _client(srv).chat.completions.create(model="m", messages=USER, n=1).choices


@pytest.mark.parametrize("message, param", [
    ({"role": "user", "content": [{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {
        "url": f"data:image/png;base64,{PNG_TEXT}"}}]}, None),
    ({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]}, None),
    ({"role": "tool", "tool_call_id": "c", "content": [{"type": "image_url", "image_url": {
        "url": f"data:image/png;base64,{PNG_TEXT}"}}]}, "messages[1].content[0]"),
    ({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "sha256:ab"}}]}, "messages[1].content[0]"),
    ({"role": "user", "content": [{"type": "text", "text": "x"}, {"type": "image_url", "image_url": {
        "url": "data:image/png;base64,JVBERi0xLjc="}}]}, "messages[1].content[1]"),
    ({"role": "user", "content": [{"type": "video"}]}, "messages[1].content[0]"),
])
def test_content_parts_are_checked_as_openai_checks_them(server: MockLLMServer, message: dict,
                                                         param: str | None) -> None:
    messages: Any = [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}, message]
    if param is None:
        assert _client(server).chat.completions.create(model="m", messages=messages).choices
        return
    with pytest.raises(openai.BadRequestError) as info:
        _client(server).chat.completions.create(model="m", messages=messages)
    assert info.value.param == param


def test_wrong_api_key_is_echoed() -> None:
    with MockLLMServer(api_key="right") as srv:
        with pytest.raises(openai.AuthenticationError) as info:
            _client(srv).chat.completions.create(model="m", messages=USER)
        assert "Incorrect API key provided: k" in str(info.value)
        ok = openai.OpenAI(base_url=srv.base_url, api_key="right", max_retries=0)
        assert ok.chat.completions.create(model="m", messages=USER).choices[0].message.content == "ok"
        assert srv.stats.responses_by_status == {401: 1, 200: 1}


def test_unknown_model_and_model_list() -> None:
    with MockLLMServer(models=["alpha", "beta"]) as srv:
        client = _client(srv)
        with pytest.raises(openai.NotFoundError) as info:
            client.chat.completions.create(model="gamma", messages=USER)
        assert info.value.code == "model_not_found" and "gamma" in str(info.value)
        assert [m.id for m in client.models.list()] == ["alpha", "beta"]
    with MockLLMServer() as srv:
        assert [m.id for m in _client(srv).models.list()] == ["mock"]


def test_max_concurrent_rate_limits() -> None:
    with MockLLMServer(latency_s=0.2, max_concurrent=2, retry_after_s=1.5) as srv:
        client = _client(srv)
        barrier = threading.Barrier(6)
        outcomes: list[object] = []

        def call() -> None:
            barrier.wait()
            try:
                outcomes.append(client.chat.completions.create(model="m", messages=USER))
            except openai.RateLimitError as exc:
                outcomes.append(exc)

        threads = [threading.Thread(target=call) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    limited = [o for o in outcomes if isinstance(o, openai.RateLimitError)]
    assert len(outcomes) == 6
    assert 1 <= len(limited) <= 4
    assert limited[0].response.headers["retry-after"] == "1.5"
    assert limited[0].response.headers["retry-after-ms"] == "1500"
    assert srv.stats.max_in_flight <= 2
    assert srv.stats.responses_by_status == {200: 6 - len(limited), 429: len(limited)}


def test_error_rate_gives_server_errors() -> None:
    with MockLLMServer(error_rate=1.0) as srv:
        client = _client(srv)
        statuses = []
        for _ in range(3):
            with pytest.raises(openai.InternalServerError) as info:
                client.chat.completions.create(model="m", messages=USER)
            statuses.append(info.value.status_code)
            assert info.value.response.headers["retry-after-ms"] == "0"
    assert statuses == [500, 502, 503]


def test_drop_rate_gives_connection_error() -> None:
    with MockLLMServer(drop_rate=1.0) as srv:
        started = time.monotonic()
        with pytest.raises(openai.APIConnectionError):
            _client(srv).chat.completions.create(model="m", messages=USER)
        assert time.monotonic() - started < 3
        assert srv.stats.dropped == 1 and srv.stats.responses_by_status == {}


def test_faults_are_seeded() -> None:
    def run(seed: int) -> list[str]:
        with MockLLMServer(error_rate=0.5, seed=seed) as srv:
            client = _client(srv)
            results = []
            for _ in range(12):
                try:
                    client.chat.completions.create(model="m", messages=USER)
                    results.append("ok")
                except openai.InternalServerError:
                    results.append("err")
            return results

    first = run(7)
    assert first == run(7)
    assert {"ok", "err"} == set(first)


def test_malformed_json_is_400(server: MockLLMServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    conn.request("POST", "/v1/chat/completions", body=b"{not json", headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    assert response.status == 400
    assert json.loads(response.read())["error"]["type"] == "invalid_request_error"
    # Keep-alive: the same connection still serves a valid request.
    conn.request("POST", "/v1/chat/completions", body=json.dumps({"model": "m", "messages": USER}))
    response = conn.getresponse()
    assert response.status == 200 and json.loads(response.read())["choices"][0]["message"]["content"] == "reply 0"
    conn.close()


def test_stop_closes_idle_keep_alive_connections() -> None:
    srv = MockLLMServer().start()
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
    conn.request("POST", "/v1/chat/completions", body=json.dumps({"model": "m", "messages": USER}))
    assert conn.getresponse().read()
    srv.stop()
    # The connection's handler thread must not keep answering once the server is stopped.
    with pytest.raises((ConnectionError, http.client.HTTPException)):
        conn.request("POST", "/v1/chat/completions", body=json.dumps({"model": "m", "messages": USER}))
        conn.getresponse()
    conn.close()


def test_retry_after_defaults_to_one_second() -> None:
    with MockLLMServer(max_concurrent=0) as srv:
        with pytest.raises(openai.RateLimitError) as info:
            _client(srv).chat.completions.create(model="m", messages=USER)
    assert info.value.response.headers["retry-after"] == "1"
    assert info.value.response.headers["retry-after-ms"] == "1000"


# --- modes that reproduce real servers ---------------------------------------------------------------


def _approx(obj: object) -> int:
    return (len(json.dumps(obj)) + 3) // 4  # the server's own estimate: 4 characters a token


def test_reject_null_content_answers_llama_cpp_validation_error() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    history = [*USER, {"role": "assistant", "content": None, "tool_calls": [call]},
               {"role": "tool", "tool_call_id": "c1", "content": "{}"}]
    with MockLLMServer(reject_null_content=True) as srv:
        client = _client(srv)
        bodies = []
        for _ in range(2):
            with pytest.raises(openai.InternalServerError) as info:
                client.chat.completions.create(model="m", messages=history)
            assert info.value.status_code == 500
            bodies.append(info.value.body)
        assert client.chat.completions.create(model="m", messages=[*USER, {**history[1], "content": ""}, history[2]])
    assert bodies[0] == bodies[1]
    assert isinstance(bodies[0], dict) and bodies[0]["type"] == "server_error"
    assert bodies[0]["message"].startswith("1 validation error for ChatCompletionRequestAssistantMessage\ncontent\n")
    assert "input_value=None, input_type=NoneType" in bodies[0]["message"]
    assert srv.stats.responses_by_status == {500: 2, 200: 1}


def test_tools_need_choice_ignores_tools_without_tool_choice() -> None:
    with MockLLMServer(tools_need_choice=True) as srv:
        client = _client(srv)
        for extra in ({}, {"tool_choice": "none"}):
            choice = client.chat.completions.create(model="m", messages=USER, tools=TOOLS, **extra).choices[0]
            assert (choice.message.content, choice.message.tool_calls, choice.finish_reason) == ("ok", None, "stop")
        choice = client.chat.completions.create(model="m", messages=USER, tools=TOOLS, tool_choice="auto").choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.tool_calls
    assert choice.message.tool_calls[0].function.name == "lookup_patient"
    assert srv.requests[0]["tools"] == TOOLS  # recorded as sent


def test_context_window_exceeded_is_400_even_with_n() -> None:
    long = [{"role": "user", "content": "x" * 2000}]
    with MockLLMServer(context_window=100) as srv:
        client = _client(srv)
        fits = client.chat.completions.create(model="m", messages=USER, n=3)
        errors = []
        for messages, extra in ((long, {"n": 3}), (USER, {"max_tokens": 100})):
            with pytest.raises(openai.BadRequestError) as info:
                client.chat.completions.create(model="m", messages=messages, **extra)
            errors.append(info.value)
    assert len(fits.choices) == 3 and fits.usage is not None
    found = re.search(r"Requested tokens \((\d+)\) exceed context window of 100\b", errors[0].message)
    assert found and int(found.group(1)) > 500
    assert "This model's maximum context length is 100 tokens" in errors[0].message
    assert all(e.code == "context_length_exceeded" and e.param == "messages" for e in errors)
    prompt = fits.usage.prompt_tokens
    assert f"Requested tokens ({prompt + 100}) exceed" in errors[1].message
    assert f"({prompt} in the messages, 100 in the completion)" in errors[1].message
    assert srv.stats.responses_by_status == {200: 1, 400: 2}


def test_serial_slot_is_held_by_a_request_its_client_abandoned() -> None:
    def responder(request: dict, index: int) -> str:
        # The first request keeps working until its client has given up and sent the request again.
        while len(srv.requests) < 2:
            time.sleep(0.01)
        return "done"

    with MockLLMServer(responder, serial=True) as srv:
        client = _client(srv)
        with pytest.raises(openai.APITimeoutError):
            client.chat.completions.create(model="m", messages=USER, timeout=0.2)
        assert client.chat.completions.create(model="m", messages=USER).choices[0].message.content == "done"
    abandoned, resent = sorted(srv.stats.timeline, key=lambda t: t.received)
    assert resent.received < abandoned.finished  # re-sent while the abandoned one was still being worked on ...
    assert abandoned.finished <= resent.started  # ... which it had to wait for: queued, not refused
    assert srv.stats.responses_by_status == {200: 2} and srv.stats.max_in_flight == 2


def test_reasoning_precedes_replies_with_misleading_drafts() -> None:
    verifier = {"role": "user", "content": VERIFIER_PROMPT}
    with MockLLMServer(reasoning=True) as srv:
        client = _client(srv)
        message = client.chat.completions.create(model="m", messages=[verifier]).choices[0].message
        # Replies sent back with their thoughts leave the agent an agent (not taken for a verifier).
        messages: list[dict] = [{"role": "user", "content": "do the task"}]
        for _ in range(2):
            agent = client.chat.completions.create(model="m", messages=messages, tools=TOOLS).choices[0].message
            assert agent.tool_calls and agent.content and agent.content.startswith("<think>")
            messages.append(agent.model_dump(exclude_none=True))
            messages.append({"role": "tool", "tool_call_id": agent.tool_calls[0].id, "content": "{}"})
    assert message.content is not None and message.model_extra is not None
    reasoning = message.model_extra["reasoning_content"]
    assert "maybe FALSE" in reasoning and "<verdict>" in reasoning and "<predicted_observation>" in reasoning
    thought, answer = message.content.split("</think>")
    assert thought == f"<think>\n{reasoning}\n"
    assert answer.strip() == scripted_responder({"messages": [verifier]}, 0)
    assert [m["tool_calls"][0]["function"]["name"] for m in messages if m.get("tool_calls")] == [
        "lookup_patient", "schedule"]
    assert "<verdict>" in messages[1]["content"] and "reasoning_content" in messages[1]  # sent back as received


def test_text_tool_calls_come_as_tagged_blocks_in_the_content() -> None:
    def responder(request: dict, index: int) -> dict:
        return {"content": "Calling.", "tool_calls": [{"name": "a", "arguments": {"x": 1}},
                                                      {"name": "b", "arguments": '{"y": [2]}'}]}

    with MockLLMServer(responder, text_tool_calls=True) as srv:
        choice = _client(srv).chat.completions.create(model="m", messages=USER).choices[0]
    assert choice.finish_reason == "stop" and choice.message.tool_calls is None
    assert choice.message.content == ('Calling.\n<tool_call>\n{"name": "a", "arguments": {"x": 1}}\n</tool_call>\n'
                                      '<tool_call>\n{"name": "b", "arguments": {"y": [2]}}\n</tool_call>')
    with MockLLMServer(text_tool_calls=True) as srv:
        content = _client(srv).chat.completions.create(model="m", messages=USER, tools=TOOLS).choices[0].message.content
    assert content is not None and content.startswith("<tool_call>\n") and content.endswith("\n</tool_call>")
    assert json.loads(content.removeprefix("<tool_call>").removesuffix("</tool_call>")) == {
        "name": "lookup_patient", "arguments": {"patient_id": "X-1", "ward": "ICU", "limit": 1}}


def test_refuse_max_tokens_accepts_max_completion_tokens() -> None:
    with MockLLMServer(refuse_max_tokens=True) as srv:
        client = _client(srv)
        with pytest.raises(openai.BadRequestError) as info:
            client.chat.completions.create(model="m", messages=USER, max_tokens=10)
        assert client.chat.completions.create(model="m", messages=USER, max_completion_tokens=10).choices
    assert info.value.body == {
        "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                   "Use 'max_completion_tokens' instead.",
        "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}


def test_prompt_cache_reports_the_longest_shared_message_prefix() -> None:
    system = {"role": "system", "content": "You are helpful." * 10}
    first = [system, {"role": "user", "content": "first question"}]
    follow_up = [*first, {"role": "assistant", "content": "answer"}, {"role": "user", "content": "more"}]
    other = [system, {"role": "user", "content": "another question"}]
    with MockLLMServer(prompt_cache=True) as srv:
        client = _client(srv)
        usages = [client.chat.completions.create(model="m", messages=m).usage
                  for m in (first, follow_up, other, follow_up)]
    cached = [u.prompt_tokens_details.cached_tokens for u in usages if u and u.prompt_tokens_details]
    assert cached == [0, _approx(first), _approx([system]), _approx(follow_up)]
    assert usages[3] is not None and cached[3] <= usages[3].prompt_tokens
    with MockLLMServer() as srv:  # off by default
        usage = _client(srv).chat.completions.create(model="m", messages=first).usage
    assert usage is not None and usage.prompt_tokens_details is None


def test_command_line_flags_set_the_modes() -> None:
    default = _server_from_args([])
    assert (default.retry_after_s, default.context_window) == (1.0, None)
    assert not any((default.reject_null_content, default.tools_need_choice, default.serial, default.reasoning,
                    default.text_tool_calls, default.refuse_max_tokens, default.prompt_cache))
    server = _server_from_args(["--reject-null-content", "--tools-need-choice", "--context-window", "4096", "--serial",
                                "--reasoning", "--text-tool-calls", "--refuse-max-tokens", "--prompt-cache",
                                "--retry-after", "2.5"])
    assert (server.retry_after_s, server.context_window) == (2.5, 4096)
    assert all((server.reject_null_content, server.tools_need_choice, server.serial, server.reasoning,
                server.text_tool_calls, server.refuse_max_tokens, server.prompt_cache))


def test_command_line_flags_named_unlike_their_keywords() -> None:
    server = _server_from_args(["--latency", "0.5", "--no-n", "--models", "a, b,", "--deep-nesting", "world,body",
                                "--trickle", "0.1"])
    assert (server.latency_s, server.support_n, server.models, server.deep_nesting, server.trickle_s) == \
        (0.5, False, ["a", "b"], ("world", "body"), 0.1)
    assert _server_from_args(["--models", ""]).models is None  # an empty value, as a script passes it, means any
    with pytest.raises(SystemExit):
        _server_from_args(["--deep-nesting", "world,nobody"])


def test_command_line_server_with_modes() -> None:
    process = subprocess.Popen([sys.executable, "-m", "occubench.testing.server", "--port", "0", "--refuse-max-tokens",
                                "--tools-need-choice", "--text-tool-calls", "--reasoning"],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        client = openai.OpenAI(base_url=process.stdout.readline().strip(), api_key="k", max_retries=0, timeout=5)
        with pytest.raises(openai.BadRequestError, match="max_completion_tokens"):
            client.chat.completions.create(model="m", messages=USER, max_tokens=5)
        plain = client.chat.completions.create(model="m", messages=USER, tools=TOOLS).choices[0].message.content
        text = client.chat.completions.create(model="m", messages=USER, tools=TOOLS,
                                              tool_choice="auto").choices[0].message.content
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert plain is not None and plain.startswith("<think>") and plain.endswith("</think>\n\nok")
    assert text is not None and text.startswith("<think>") and '<tool_call>\n{"name": "lookup_patient"' in text


# --- scripted responder -------------------------------------------------------------------------


def test_world_reply_is_tagged_and_deterministic() -> None:
    action = 'Agent action: {"name": "lookup", "arguments": {"b": 2, "a": 1}} please'
    reply = scripted_responder(_world_request(action), 0)
    assert isinstance(reply, str)
    assert reply.startswith("<predicted_observation>") and reply.endswith("</predicted_observation>")
    observation = json.loads(reply.removeprefix("<predicted_observation>").removesuffix("</predicted_observation>"))
    assert observation["tool"] == "lookup" and observation["status"] == "ok"
    assert 0 <= observation["result_id"] < 10000
    # Same action (key order and argument encoding aside) -> same observation; another action differs.
    same = '{"action": {"name": "lookup", "arguments": "{\\"a\\": 1, \\"b\\": 2}"}}'
    assert scripted_responder(_world_request(same), 1) == reply
    other = scripted_responder(_world_request('{"name": "lookup", "arguments": {"a": 2}}'), 0)
    assert other != reply


def test_verifier_is_deterministic_across_indices() -> None:
    verdicts = []
    for trial in range(20):
        request = {"messages": [{"role": "user", "content": f"{VERIFIER_PROMPT} {trial}"}]}
        replies = [scripted_responder(request, i) for i in range(3)]
        parsed = [json.loads(str(r).split("<verdict>")[1].split("</verdict>")[0]) for r in replies]
        assert len({p["is_correct"] for p in parsed}) == 1
        assert scripted_responder(request, 0) == replies[0]
        verdicts.append(parsed[0]["is_correct"])
    assert True in verdicts and False in verdicts  # about half pass


def test_agent_calls_tools_in_order_then_answers() -> None:
    with MockLLMServer() as srv:
        client = _client(srv)
        messages: list[dict] = [{"role": "user", "content": "do the task"}]
        names = []
        for _ in range(2):
            message = client.chat.completions.create(model="m", messages=messages, tools=TOOLS).choices[0].message
            assert message.tool_calls
            call = message.tool_calls[0]
            names.append((call.function.name, json.loads(call.function.arguments)))
            messages.append(message.model_dump(exclude_none=True))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "{}"})
        final = client.chat.completions.create(model="m", messages=messages, tools=TOOLS).choices[0]
    assert names == [
        ("lookup_patient", {"patient_id": "X-1", "ward": "ICU", "limit": 1}),
        ("schedule", {"dose": 1.0, "slots": [], "meta": {}}),
    ]
    assert final.finish_reason == "stop" and final.message.content == "Final answer: done after 2 tool calls."
    assert scripted_responder({"messages": USER}, 0) == "ok"


def test_malformed_rate_breaks_only_world_and_verifier() -> None:
    responder = make_scripted_responder(malformed_rate=1.0, seed=3)
    world = responder(_world_request('{"name": "x", "arguments": {}}'), 0)
    assert isinstance(world, str) and "<predicted_observation>" not in world
    verifier = responder({"messages": [{"role": "user", "content": VERIFIER_PROMPT}]}, 0)
    assert isinstance(verifier, str) and "<verdict>" not in verifier
    agent = responder({"messages": USER, "tools": TOOLS}, 0)
    assert isinstance(agent, dict) and agent["tool_calls"][0]["name"] == "lookup_patient"


def test_command_line_key_models_and_label_judge(tmp_path: Path) -> None:
    """The offline recipe's server: its key and model list as real endpoints enforce them, and a label judge."""
    process = subprocess.Popen([sys.executable, "-m", "occubench.testing.server", "--port", "0", "--api-key", "k1",
                                "--models", "agent-m, judge-m"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=url, api_key="other", max_retries=0).chat.completions.create(
                model="agent-m", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(openai.NotFoundError):
            openai.OpenAI(base_url=url, api_key="k1", max_retries=0).chat.completions.create(
                model="gpt-x", messages=[{"role": "user", "content": "hi"}])
        code = main(["run", "--suite", "executable", "--agent", "reference", "--verifier-model", "judge-m",
                     "--base-url", url, "--api-key", "k1", "--output-dir", str(tmp_path), "--run-name", "r",
                     "--task-ids", "insurance_claims/pay_water_claim"])
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert code == 0
    [record] = read_results(tmp_path / "r" / "results.jsonl")
    assert record["is_correct"] is True and record["verdict_details"]["judge_label"] == "complete"


def test_two_thousand_requests_are_in_flight_at_once() -> None:
    """One event loop serves every connection: 2,000 requests wait for the one slot of serial mode together while the
    first one's responder holds it, released only once all are in."""
    if raise_open_files(5000) < 5000:  # both ends of every connection are in this process
        pytest.skip("the hard limit on open files here is below 5,000")
    all_in = threading.Event()

    def responder(request: dict, index: int) -> str:
        all_in.wait(120)
        return "ok"

    async def requests(url: str) -> list[str]:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            async def one(index: int) -> str:
                async with session.post(url, json={"model": "m", "messages": [
                        {"role": "user", "content": f"request {index}"}]}) as answer:
                    return str((await answer.json())["choices"][0]["message"]["content"])
            return await asyncio.gather(*(one(index) for index in range(2000)))

    replies: list[str] = []
    with MockLLMServer(responder, serial=True) as srv:
        url = srv.base_url + "/chat/completions"
        sent = threading.Thread(target=lambda: replies.extend(asyncio.run(requests(url))))
        sent.start()
        deadline = time.monotonic() + 120
        while srv.stats.in_flight < 2000 and time.monotonic() < deadline:
            time.sleep(0.05)
        all_in.set()
        sent.join(120)
    assert replies == ["ok"] * 2000
    assert srv.stats.max_in_flight == 2000 and srv.stats.responses_by_status == {200: 2000}


def test_command_line_server_raises_its_open_files_limit() -> None:
    limits = Path("/proc/self/limits")
    if not limits.is_file():
        pytest.skip("no /proc here")
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)

    def low_soft_limit() -> None:  # in the child only
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))

    process = subprocess.Popen([sys.executable, "-m", "occubench.testing.server", "--port", "0"],
                               stdout=subprocess.PIPE, text=True, preexec_fn=low_soft_limit)
    try:
        assert process.stdout is not None and process.stdout.readline().startswith("http://127.0.0.1:")
        [line] = [line for line in Path(f"/proc/{process.pid}/limits").read_text().splitlines()
                  if line.startswith("Max open files")]
    finally:
        process.terminate()
        process.wait(timeout=30)
    # Raised to the hard limit; to what it asks for (65,536) if that is unlimited.
    assert line.split()[3] == ("65536" if hard == resource.RLIM_INFINITY else str(hard))
