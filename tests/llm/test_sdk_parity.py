"""The lean transport against the ``openai`` SDK it stands in for. The same call, made through each and caught by
one loopback server, is the same request: method, target (path and query, or the whole URL through a proxy, or the
tunnel's host), the headers that matter and the JSON body; the same proxy, or none, is used for the same
environment; an error answer is the same error (status, message, code, param). The SDK is asked with
``tool_choice="auto"`` beside the tools, as our client always sends it, and nothing else is added on either side
(our client has no extra headers). Proxied endpoints are names under ``.test``: a request through a proxy never
looks its host up, so nothing leaves 127.0.0.1. Left out: a base URL with a query string, from which each client
builds a broken path of its own (``/v1/?q=1chat/completions``, ``/v1/?q=1/chat/completions``). Skipped without the
SDK (the ``openai`` extra)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from occubench.errors import LLMUnavailableError
from occubench.llm import LLMClient, RetryPolicy
from occubench.llm.transport import LeanTransport, StatusError
from tests.conftest import extra_reason
from tests.llm.rawserver import ANSWERED, RawServer, Request, closed_port, http_answer

openai = pytest.importorskip("openai", reason=extra_reason("openai"))

KEY = "sk-parity-0123456789"
MESSAGES = [{"role": "system", "content": "You book rooms."},
            {"role": "user", "content": "Book room 4 for three people — «today»"}]
TOOLS = [{"type": "function", "function": {"name": "book", "description": "Book a room.", "parameters": {
    "type": "object", "properties": {"room": {"type": "integer"}}, "required": ["room"]}}}]
PARAMS = {"temperature": 0.2, "max_tokens": 64, "seed": 7}
HEADERS = ("authorization", "content-type", "accept", "openai-organization", "openai-project", "proxy-authorization")
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


DEAD = f"http://127.0.0.1:{closed_port()}"
#: name: (base URL, environment); {url} is the loopback server's, {hostport} the same without its scheme.
CALLS: dict[str, tuple[str | None, dict[str, str]]] = {
    "a base URL": ("{url}/v1", {}),
    "a base URL with a trailing slash": ("{url}/v1/", {}),
    "a base URL without a path": ("{url}", {}),
    "OPENAI_BASE_URL": (None, {"OPENAI_BASE_URL": "{url}/v1"}),
    "organization and project": ("{url}/v1", {"OPENAI_ORG_ID": "org-7", "OPENAI_PROJECT_ID": "proj_7"}),
    "a project set but empty": ("{url}/v1", {"OPENAI_PROJECT_ID": ""}),
    "HTTP_PROXY": ("http://api.example.test/v1", {"HTTP_PROXY": "{url}"}),
    "http_proxy in lower case": ("http://api.example.test/v1", {"http_proxy": "{url}"}),
    "ALL_PROXY": ("http://api.example.test/v1", {"ALL_PROXY": "{url}"}),
    "a proxy without a scheme": ("http://api.example.test/v1", {"HTTP_PROXY": "{hostport}"}),
    "a proxy with credentials": ("http://api.example.test/v1", {"HTTP_PROXY": "http://someone:pw@{hostport}"}),
    "HTTPS_PROXY, a tunnel": ("https://api.example.test/v1", {"HTTPS_PROXY": "{url}"}),
    "OpenAI's URL by default, through HTTPS_PROXY": (None, {"HTTPS_PROXY": "{url}"}),
    "HTTPS_PROXY is not for http": ("{url}/v1", {"HTTPS_PROXY": DEAD}),
    "NO_PROXY naming the address": ("{url}/v1", {"HTTP_PROXY": DEAD, "NO_PROXY": "other.test, 127.0.0.1"}),
    "NO_PROXY naming the address and port": ("{url}/v1", {"HTTP_PROXY": DEAD, "NO_PROXY": "{hostport}"}),
    "NO_PROXY=*": ("{url}/v1", {"HTTP_PROXY": DEAD, "NO_PROXY": "*"}),
    "NO_PROXY of another port": ("http://example.test:8080/v1", {"HTTP_PROXY": "{url}",
                                                                 "NO_PROXY": "example.test:9090"}),
    "NO_PROXY .name, for subdomains only": ("http://example.test/v1", {"HTTP_PROXY": "{url}",
                                                                       "NO_PROXY": ".example.test"}),
    "NO_PROXY of other names": ("http://api.example.test/v1", {"HTTP_PROXY": "{url}",
                                                               "NO_PROXY": "localhost,xample.test,api.example"}),
}


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*PROXY_VARIABLES, *(v.lower() for v in PROXY_VARIABLES), "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)


def _answer(request: Request) -> bytes:
    return http_answer(403) if request.method == "CONNECT" else ANSWERED  # no tunnel: nothing leaves the machine


def _sdk_call(base_url: str | None) -> bool:
    async def call() -> bool:
        async with openai.AsyncOpenAI(api_key=KEY, base_url=base_url, max_retries=0) as client:
            try:
                await client.chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS, tool_choice="auto",
                                                     **PARAMS)
            except openai.APIConnectionError:
                return False
            return True

    return asyncio.run(call())


def _our_call(base_url: str | None) -> bool:
    try:
        LLMClient(KEY, base_url, retry=RetryPolicy(budget_s=0)).chat("m", MESSAGES, tools=TOOLS, params=PARAMS)
    except LLMUnavailableError:
        return False
    return True


def _seen(request: Request) -> tuple[Any, ...]:
    return (request.method, request.target, {name: request.headers.get(name) for name in HEADERS},
            json.loads(request.body) if request.body else None)


@pytest.mark.parametrize(("base_url", "environment"), CALLS.values(), ids=CALLS.keys())
def test_the_same_call_is_the_same_request(base_url: str | None, environment: dict[str, str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    with RawServer(_answer) as server:
        where = {"url": server.url, "hostport": server.url.removeprefix("http://")}
        for name, value in environment.items():
            monkeypatch.setenv(name, value.format(**where))
        url = base_url.format(**where) if base_url else None
        answered = _sdk_call(url), _our_call(url)
    assert answered[0] == answered[1]
    sdk, ours = server.requests
    assert _seen(ours) == _seen(sdk)
    assert ours.method == "CONNECT" or ours.headers["user-agent"].startswith("occubench/")  # the lean transport's


ERRORS: dict[str, tuple[int, dict[str, str], bytes]] = {
    "429, OpenAI's error": (429, {"Content-Type": "application/json", "Retry-After": "1"}, json.dumps(
        {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded",
                   "param": None}}).encode()),
    "500, a text body": (500, {"Content-Type": "text/plain"}, b"Internal Server Error"),
    "400, vLLM's error with a numeric code": (400, {"Content-Type": "application/json"}, json.dumps(
        {"object": "error", "message": "max_tokens is too large", "type": "BadRequestError", "param": "max_tokens",
         "code": 400}).encode()),
    "404, FastAPI's detail": (404, {"Content-Type": "application/json"}, b'{"detail": "Not Found"}'),
    "503, no body": (503, {}, b""),
    "422, the error a string": (422, {"Content-Type": "application/json"}, b'{"error": "boom"}'),
    "400, a message that is no string": (400, {"Content-Type": "application/json"},
                                         b'{"error": {"message": ["a", "b"], "param": 3}}'),
    "400, a JSON list": (400, {"Content-Type": "application/json"}, b"  [1, 2]  "),
    "400, in Latin-1": (400, {"Content-Type": "application/json; charset=latin-1"},
                        '{"error": {"message": "valeur trop élevée"}}'.encode("latin-1")),
}


async def _both_errors(base_url: str) -> tuple[Any, ...]:
    async with openai.AsyncOpenAI(api_key=KEY, base_url=base_url, max_retries=0) as client:
        with pytest.raises(openai.APIStatusError) as sdk:
            await client.chat.completions.create(model="m", messages=MESSAGES)
    transport = LeanTransport(base_url, KEY, 1)
    try:
        with pytest.raises(StatusError) as ours:
            await transport.post(json.dumps({"model": "m", "messages": MESSAGES}).encode(), 10)
    finally:
        await transport.close()
    return tuple((e.value.status_code, e.value.message, e.value.code, e.value.param) for e in (sdk, ours))


@pytest.mark.parametrize(("status", "headers", "body"), ERRORS.values(), ids=ERRORS.keys())
def test_an_error_answer_is_the_same_error(status: int, headers: dict[str, str], body: bytes) -> None:
    with RawServer(lambda request: http_answer(status, body, headers)) as server:
        sdk, ours = asyncio.run(_both_errors(server.url + "/v1"))
    assert ours == sdk
    assert ours[0] == status
