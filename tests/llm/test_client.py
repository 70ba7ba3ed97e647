"""The LLM layer against a loopback server through the real openai SDK: retries, budgets, rejections, params."""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import openai
import pytest

from occubench.errors import ContextLengthError, LLMRequestError, LLMUnavailableError
from occubench.llm import LLMClient, RetryPolicy, as_llm_client
from occubench.llm.retry import connection_cause
from occubench.testing import MockLLMServer
from tests.llm.rawserver import closed_port

FAST = RetryPolicy(budget_s=5.0, base_delay_s=0.01, max_delay_s=0.05)
HELLO = [{"role": "user", "content": "hello"}]


def test_reply_usage_and_tool_calls(server: MockLLMServer) -> None:
    client = LLMClient("k", server.base_url, retry=FAST)
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}}]
    completion = client.chat("m", HELLO, tools=tools)
    [reply] = completion.replies
    assert reply.tool_calls[0].name == "lookup"
    assert reply.tool_calls[0].arguments == '{"id": "X-1"}'
    assert reply.finish_reason == "tool_calls"
    assert completion.usage.calls == 1 and completion.usage.prompt_tokens > 0
    assert reply.to_message()["tool_calls"][0]["function"]["name"] == "lookup"


def test_rate_limits_are_retried_until_answered() -> None:
    with MockLLMServer(lambda request, index: "fine", max_concurrent=1, latency_s=0.05, retry_after_s=0) as server:
        client = LLMClient("k", server.base_url, retry=FAST)
        with ThreadPoolExecutor(4) as pool:
            replies = list(pool.map(lambda _: client.chat("m", HELLO).replies[0].content, range(8)))
    assert replies == ["fine"] * 8
    assert server.stats.responses_by_status.get(429, 0) > 0


def test_server_errors_and_dropped_connections_are_retried() -> None:
    with MockLLMServer(lambda request, index: "fine", error_rate=0.3, drop_rate=0.2, seed=3) as server:
        client = LLMClient("k", server.base_url, retry=FAST)
        assert [client.chat("m", HELLO).replies[0].content for _ in range(20)] == ["fine"] * 20
    assert server.stats.dropped > 0
    assert sum(n for status, n in server.stats.responses_by_status.items() if status >= 500) > 0


def test_retry_after_header_is_honoured() -> None:
    with MockLLMServer(lambda request, index: "ok", max_concurrent=0, retry_after_s=0.3) as server:
        client = LLMClient("k", server.base_url, retry=RetryPolicy(budget_s=1.0, base_delay_s=0.0))
        started = time.monotonic()
        with pytest.raises(LLMUnavailableError, match="HTTP 429"):
            client.chat("m", HELLO)
    # Without Retry-After a zero base delay would hammer the server; with it, about 0.3 s between attempts.
    assert server.stats.requests <= 4
    assert time.monotonic() - started < 1.5


@pytest.mark.slow
def test_the_retry_budget_is_used_whole() -> None:
    # Back-offs drawn up to 600 s: nearly every one is longer than what is left of the 5 s budget, and is cut short
    # for a last attempt at the budget's end, rather than the call giving up with most of its budget left.
    with MockLLMServer(lambda request, index: "ok", error_rate=1.0) as server:
        client = LLMClient("k", server.base_url, retry=RetryPolicy(budget_s=5, base_delay_s=600, max_delay_s=600))
        with pytest.raises(LLMUnavailableError, match="within the 5 s retry budget"):
            client.chat("m", HELLO)
    assert server.stats.requests >= 2


def test_persistent_failure_becomes_unavailable_within_budget() -> None:
    with MockLLMServer(lambda request, index: "ok", error_rate=1.0) as server:
        client = LLMClient("k", server.base_url, retry=RetryPolicy(budget_s=0.5, base_delay_s=0.05, max_delay_s=0.1))
        started = time.monotonic()
        with pytest.raises(LLMUnavailableError, match="retry budget"):
            client.chat("m", HELLO)
        assert time.monotonic() - started < 1.5
        assert server.stats.requests > 1


def test_permanent_rejections_are_not_retried() -> None:
    with MockLLMServer(api_key="right", models=["m"]) as server:
        with pytest.raises(LLMRequestError) as bad_key:
            LLMClient("wrong", server.base_url, retry=FAST).chat("m", HELLO)
        with pytest.raises(LLMRequestError) as bad_model:
            LLMClient("right", server.base_url, retry=FAST).chat("nope", HELLO)
    assert bad_key.value.status_code == 401 and bad_model.value.status_code == 404
    assert server.stats.requests == 2


def test_context_overflow_is_its_own_error() -> None:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.dumps({"error": {"message": "This model's maximum context length is 8192 tokens.",
                                         "type": "invalid_request_error", "code": "context_length_exceeded"}})
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        client = LLMClient("k", f"http://127.0.0.1:{httpd.server_port}/v1", retry=FAST)
        with pytest.raises(ContextLengthError):
            client.chat("m", HELLO)
    finally:
        httpd.shutdown()


def test_params_pass_through_and_unknown_ones_go_in_extra_body(server: MockLLMServer) -> None:
    client = LLMClient("k", server.base_url, retry=FAST)
    client.samples("m", HELLO, 2, params={"temperature": 0.2, "reasoning_effort": "low", "top_k": 5})
    body = server.requests[-1]
    assert body["temperature"] == 0.2 and body["reasoning_effort"] == "low" and body["top_k"] == 5
    assert body["n"] == 2


def test_plain_openai_client_is_accepted(server: MockLLMServer) -> None:
    client = as_llm_client(openai.OpenAI(api_key="k", base_url=server.base_url))
    assert client.chat("m", HELLO).replies[0].content == "ok"
    assert client.base_url.startswith(server.base_url)


def test_timeouts_are_retried_then_reported() -> None:
    with MockLLMServer(lambda request, index: "late", latency_s=0.5) as server:
        client = LLMClient("k", server.base_url, timeout_s=0.1,
                           retry=RetryPolicy(budget_s=0.6, base_delay_s=0.01, max_delay_s=0.02))
        with pytest.raises(LLMUnavailableError, match="no answer within the .* s request timeout"):
            client.chat("m", HELLO)
    assert server.stats.requests >= 2


def test_a_probe_names_a_refused_connection_without_retrying() -> None:
    client = LLMClient("k", f"http://user:hunter22@127.0.0.1:{closed_port()}/v1")
    with pytest.raises(LLMUnavailableError, match="connection refused") as raised:
        client.probe("m", budget_s=600)
    assert "hunter22" not in str(raised.value) and "<redacted>" in str(raised.value)
    # During a run the same failure may be a restarting server: retried within the budget, its cause named.
    with pytest.raises(LLMUnavailableError, match="cannot connect: connection refused"):
        LLMClient("k", f"http://127.0.0.1:{closed_port()}/v1", retry=RetryPolicy(budget_s=0.3, base_delay_s=0.01,
                                                                                  max_delay_s=0.05)).chat("m", HELLO)


def test_an_unknown_host_is_named() -> None:
    # The lookup itself is not made here (the tests stay on loopback): the SDK's error as it wraps a failed one.
    error = openai.APIConnectionError(request=httpx_request())
    error.__cause__ = ConnectionError("[Errno -2] Name or service not known")
    error.__cause__.__cause__ = socket.gaierror(-2, "Name or service not known")
    assert connection_cause(error) == "unknown host"
    other = openai.APIConnectionError(request=httpx_request())
    other.__cause__ = OSError("[Errno 113] No route to host")
    assert connection_cause(other) == "[Errno 113] No route to host"


def httpx_request() -> object:
    return openai.OpenAI(api_key="k", base_url="http://127.0.0.1:1/v1")._client.build_request("POST", "http://x/")


def test_a_request_that_cannot_be_written_is_permanent(server: MockLLMServer) -> None:
    client = LLMClient("k", server.base_url, retry=RetryPolicy(budget_s=600))
    secret_body = "confidential instruction " * 50
    with pytest.raises(LLMRequestError, match="cannot be sent") as raised:
        client.chat("m", [{"role": "user", "content": secret_body}], params={"temperature": float("nan")})
    assert "confidential" not in str(raised.value)
    assert server.stats.requests == 0  # nothing was sent, and nothing retried
