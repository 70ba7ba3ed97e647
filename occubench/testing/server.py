"""A loopback OpenAI-compatible chat-completions server for tests, benchmarks and offline smoke runs.

Standard library only. It answers ``POST /v1/chat/completions`` and ``GET /v1/models`` and can inject the
faults a real endpoint produces (bad key, unknown model, 429, 5xx, dropped connections, latency), so the
harness's retry and concurrency logic can be exercised without network access.

    with MockLLMServer(latency_s=0.05, error_rate=0.1) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k")

Run ``python -m occubench.testing.server --port 8000`` to serve the scripted responder in the foreground.

Opt-in modes reproduce what real servers do that a well-behaved mock would hide (constructor keyword, then flag):

- ``reject_null_content`` (``--reject-null-content``): an assistant message with ``"content": null`` gets HTTP 500
  with llama-cpp-python's pydantic validation error, the same body every time.
- ``tools_need_choice`` (``--tools-need-choice``): ``tools`` are ignored unless ``tool_choice`` is set and not
  ``"none"``, as llama.cpp's chatml-function-calling handler does, so the scripted agent answers in plain text.
- ``context_window`` (``--context-window N``): prompt tokens plus ``max_tokens`` above N get HTTP 400
  ``context_length_exceeded`` (llama.cpp's "Requested tokens (..) exceed context window of N" and OpenAI's
  wording), whatever ``n`` is.
- ``serial`` (``--serial``): one slot, like llama.cpp: requests wait their turn (never refused), and one whose
  client gave up still holds the slot until it is done. ``ServerStats.timeline`` records each request's times.
- ``reasoning`` (``--reasoning``): replies start with ``<think>..</think>`` and carry ``reasoning_content``, as
  DeepSeek/Qwen servers do; the thoughts hold draft ``<verdict>``/``<predicted_observation>``/``<label>`` blocks
  (is_correct false, status error, label incomplete) that a parser taking the first block would wrongly use.
- ``text_tool_calls`` (``--text-tool-calls``): tool calls come as ``<tool_call>{"name": .., "arguments": {..}}
  </tool_call>`` blocks in the content (Hermes/Qwen templates without a server-side parser), finish_reason "stop".
- ``refuse_max_tokens`` (``--refuse-max-tokens``): ``max_tokens`` gets OpenAI reasoning models' HTTP 400
  ``unsupported_parameter``; ``max_completion_tokens`` is accepted.
- ``prompt_cache`` (``--prompt-cache``): usage reports ``prompt_tokens_details.cached_tokens``, the tokens of the
  longest message prefix an earlier request sent too.

- ``deep_nesting`` (``--deep-nesting ROLE,...``): replies of those roles carry JSON nested 10,000 levels deep
  where their answer goes: ``world`` (the observation), ``verifier`` (the verdict or label), ``synth`` (a stage's
  output), ``agent`` (the arguments of its tool call, or the whole ``<tool_call>`` block with ``text_tool_calls``),
  and ``body`` (a field of the HTTP body itself, whatever the role). The other roles answer as usual.
- ``reject_required`` (``--reject-required``): ``tool_choice: "required"`` gets HTTP 500, as llama-cpp-python's
  chatml-function-calling handler answers it.
- ``llama_cpp`` (``--llama-cpp``): all that llama-cpp-python's server does at once, as the endpoints guide's
  llama.cpp recipe meets it: ``reject_null_content``, ``tools_need_choice``, ``reject_required``, ``serial`` (one
  slot), a ``context_window`` (8,192 unless given) and ``owned_by: "me"`` in ``/v1/models``.
- ``trickle_s`` (``--trickle SECONDS``): chat responses are sent one byte every that many seconds after their
  headers, as a stalled proxy or an overloaded server does; a client that hangs up ends it.

``retry_after_s`` (``--retry-after``, the Retry-After of 429 answers) is 1 s by default, as real APIs send.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import random
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["MockLLMServer", "RequestTiming", "Responder", "ServerStats", "make_scripted_responder",
           "scripted_responder"]

Responder = Callable[[dict, int], "str | dict"]
"""(request JSON body, choice index) -> assistant content, or ``{"content": ..., "tool_calls": [...]}``."""

_ERROR_STATUSES = (500, 502, 503)
_MALFORMED_REPLY = "Sorry, I cannot format that."
# Thoughts with draft answers that differ from the scripted ones, so a parser that does not skip them is caught.
_REASONING = (
    "The tempting answer is FALSE, so a first draft would be "
    '<verdict>{"feedback": "draft", "is_correct": false}</verdict> or '
    '<predicted_observation>{"tool": null, "status": "error", "error": "draft"}</predicted_observation> or '
    '<label>{"feedback": "draft", "label": "incomplete"}</label>. But maybe FALSE is wrong; let me check again.'
)
_NULL_CONTENT_ERROR = (
    "1 validation error for ChatCompletionRequestAssistantMessage\ncontent\n"
    "  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]"
)


# --------------------------------------------------------------------------------------------------
# Scripted responder: plays world model, verifier and agent deterministically.
# --------------------------------------------------------------------------------------------------


def _text(content: Any) -> str:
    """The text of a message's content, which may be a string or a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in content
        )
    return ""


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _decoded(arguments: Any) -> Any:
    """Tool-call arguments as an object when they are OpenAI-style JSON text, else as given."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            pass
    return arguments


def _find_action(text: str) -> dict | None:
    """The first JSON object in ``text`` with keys ``name`` and ``arguments`` (nested objects count)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(text, start)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and "name" in obj and "arguments" in obj:
            return obj
        # Retry from the next brace so an action nested inside a wrapper object is still found.
        start = text.find("{", start + 1)
    return None


def _world_reply(messages: list[dict]) -> str:
    # The latest user message that holds an action: a re-ask after an unparsable answer is about the same action.
    action = next((found for m in reversed(messages) if m.get("role") == "user"
                   and (found := _find_action(_text(m.get("content")))) is not None), None)
    if action is None:
        observation: dict[str, Any] = {"tool": None, "status": "error", "error": "no action found"}
    else:
        name, args = str(action["name"]), _decoded(action["arguments"])
        digest = hashlib.sha256((name + _canonical(args)).encode()).hexdigest()
        observation = {"tool": name, "status": "ok", "result_id": int(digest, 16) % 10000}
    return f"<predicted_observation>{json.dumps(observation)}</predicted_observation>"


_REQUIRED_CALL = re.compile(r"The agent must call `(\w+)`")
_CALLED = re.compile(r"\[Agent Action\]: Call tool `(\w+)`")
_PLAN = "A plan that solves this task:"


def _verifier_reply(messages: list[dict], index: int) -> str:
    # The verdict depends only on the original prompt (system and first user message), so every sample and every
    # re-ask agrees. A rubric that names the calls the agent must make ("The agent must call `name`", as the mock's
    # synthesised tasks do) passes exactly the trajectories that made them; any other passes about half of prompts.
    joined = "".join(_text(m.get("content")) for m in messages[:2])
    required = set(_REQUIRED_CALL.findall(joined))
    if required:
        is_correct = required <= set(_CALLED.findall(joined))
    else:
        is_correct = hashlib.sha256(joined.encode()).digest()[0] < 128
    verdict = {"feedback": f"Scripted verdict (sample {index}).", "is_correct": is_correct}
    return f"Checked the trajectory.\n<verdict>{json.dumps(verdict)}</verdict>"


def _label_reply(messages: list[dict]) -> str:
    # A code-augmented judge's label: follows the code checks it is shown (all passed → complete), so it agrees
    # with them, deterministically.
    prompt = "".join(_text(m.get("content")) for m in messages[:2])
    label = "incomplete" if "FAIL " in prompt else "complete"
    return f'Checked.\n<label>{json.dumps({"feedback": "Scripted label.", "label": label})}</label>'


def _reflection_reply(messages: list[dict]) -> str:
    # A workplace day's reflection: a lesson per checkpoint the mentor says was missed ("  - name: feedback").
    mentor = _text(messages[-1].get("content")).partition("Mentor's feedback:")[2]
    missed = [line.strip()[2:] for line in mentor.splitlines() if line.startswith("  - ")]
    lessons = "\n".join(f"- Next time: {line}" for line in missed) or "- Every checkpoint was met: work the same way."
    return f"<notes>\n{lessons}\n</notes>"


def _example_value(schema: dict) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):  # e.g. ["string", "null"]
        kind = next((k for k in kind if k != "null"), "null")
    return {
        "integer": 1,
        "number": 1.0,
        "boolean": True,
        "array": [],
        "object": {},
        "null": None,
    }.get(str(kind), "X-1")


def _agent_reply(request: dict) -> str | dict:
    # Calls the first two tools in turn, or, given a solution plan, the tools the plan names in the plan's order.
    tools = [tool.get("function", tool) for tool in request.get("tools") or []]
    if not tools:
        return "ok"
    messages = request.get("messages", [])
    k = sum(1 for m in messages if m.get("role") == "tool")
    system = "".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    plan = system.partition(_PLAN)[2]
    named = sorted((plan.find(f"`{t['name']}`"), i) for i, t in enumerate(tools) if f"`{t['name']}`" in plan)
    order = [i for _, i in named] if named else list(range(min(2, len(tools))))
    if k >= len(order):
        return f"Final answer: done after {k} tool calls."
    function = tools[order[k]]
    params = function.get("parameters") or {}
    props = params.get("properties") or {}
    arguments = {name: _example_value(props.get(name) or {}) for name in params.get("required") or []}
    return {"content": None, "tool_calls": [{"name": function["name"], "arguments": arguments}]}


def _role_of(messages: list[dict]) -> str:
    """Which role a request plays: synth, world, label, reflection, verifier or agent."""
    from occubench.testing.synth import stage_of

    system = "".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    if stage_of(system) is not None:
        return "synth"
    if "<predicted_observation>" in system:
        return "world"
    if "<label>" in system:
        return "label"
    if "<notes>" in system:
        return "reflection"
    # Only the prompt's own messages: replies sent back (e.g. with reasoning drafts) must not change the role.
    if any("<verdict>" in _text(m.get("content")) for m in messages if m.get("role") in ("system", "user")):
        return "verifier"
    return "agent"


def _system_messages(request: dict) -> list[dict]:
    # OpenAI's "developer" role is the system role under another name (Inspect sends it for newer models).
    return [{**m, "role": "system"} if isinstance(m, dict) and m.get("role") == "developer" else m
            for m in request.get("messages") or []]


#: Roles ``deep_nesting`` accepts.
DEEP_ROLES = ("agent", "world", "verifier", "synth", "body")
_DEPTH = 10_000
#: An object nested 10,000 levels deep: ten times what Python's json.loads reads before its RecursionError.
_DEEP = '{"a": ' * _DEPTH + "1" + "}" * _DEPTH


def _deep_reply(request: dict, roles: Sequence[str], text_tool_calls: bool) -> str | dict | None:
    """The reply of a role ``deep_nesting`` names, with the deep object where its answer goes; None for the others."""
    role = _role_of(_system_messages(request))
    tags = {"world": "predicted_observation", "verifier": "verdict", "label": "label", "synth": "output"}
    if role in tags and ("verifier" if role == "label" else role) in roles:
        return f"<{tags[role]}>{_DEEP}</{tags[role]}>"
    tools = [tool.get("function", tool) for tool in request.get("tools") or []]
    if role != "agent" or "agent" not in roles or not tools:
        return None
    name = tools[0]["name"]
    if text_tool_calls:  # the whole block is too deep to read, not only its arguments
        return f'<tool_call>{{"name": {json.dumps(name)}, "arguments": {_DEEP}}}</tool_call>'
    return {"content": None, "tool_calls": [{"name": name, "arguments": _DEEP}]}


def make_scripted_responder(malformed_rate: float = 0.0, seed: int = 0,
                            synth: dict[str, Any] | None = None) -> Responder:
    """A deterministic responder for every role of a run, and for every synthesis stage.

    With ``malformed_rate`` > 0, world-model and verifier requests get unparsable text with that
    probability (seeded, thread-safe), to exercise re-asking; agent requests are never affected.
    ``synth`` scripts the synthesis stages' faults (see :mod:`occubench.testing.synth`).
    """
    from occubench.testing.synth import stage_of, synth_reply

    rng = random.Random(seed)
    lock = threading.Lock()

    def _malformed() -> bool:
        if malformed_rate <= 0:
            return False
        with lock:
            return rng.random() < malformed_rate

    def respond(request: dict, index: int) -> str | dict:
        messages = _system_messages(request)
        request = {**request, "messages": messages}
        role = _role_of(messages)
        if role == "synth":
            system = "".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
            return synth_reply(str(stage_of(system)), messages, synth or {})
        if role == "world":
            return _MALFORMED_REPLY if _malformed() else _world_reply(messages)
        if role == "label":
            return _MALFORMED_REPLY if _malformed() else _label_reply(messages)
        if role == "reflection":
            return _reflection_reply(messages)
        if role == "verifier":
            return _MALFORMED_REPLY if _malformed() else _verifier_reply(messages, index)
        return _agent_reply(request)

    return respond


scripted_responder: Responder = make_scripted_responder()


# --------------------------------------------------------------------------------------------------
# Server
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RequestTiming:
    """``time.monotonic()`` stamps of one admitted chat request: arrival, getting its slot, answer (or drop)."""

    received: float
    started: float
    finished: float


@dataclass
class ServerStats:
    """Counters for chat requests. Updated under a lock; read them after the requests of interest finish."""

    requests: int = 0
    responses_by_status: dict[int, int] = field(default_factory=dict)
    dropped: int = 0
    max_in_flight: int = 0  # among requests admitted past the 429 check
    total_prompt_tokens: int = 0
    total_completion_tokens: int = 0
    in_flight: int = 0  # admitted chat requests not yet answered
    timeline: list[RequestTiming] = field(default_factory=list)  # in order of finishing; not in snapshot()
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "requests": self.requests,
                "responses_by_status": dict(self.responses_by_status),
                "dropped": self.dropped,
                "max_in_flight": self.max_in_flight,
                "total_prompt_tokens": self.total_prompt_tokens,
                "total_completion_tokens": self.total_completion_tokens,
            }


def _error_body(message: str, type_: str, *, param: str | None = None, code: str | None = None) -> dict:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def _approx_tokens(text: str) -> int:
    return (len(text) + 3) // 4


def _prompt_tokens(request: dict) -> int:
    return _approx_tokens(json.dumps(request["messages"]) + json.dumps(request.get("tools") or []))


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    mock: MockLLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up mid-request is routine here (timeouts, our own drops); stay quiet about it.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like real endpoints; every response sets Content-Length
    # Headers and body go out in separate writes; without TCP_NODELAY, Nagle plus delayed ACKs
    # stall every keep-alive request by ~40 ms.
    disable_nagle_algorithm = True
    server: _HTTPServer
    #: Called with the status just before a chat response is written, so a client that has its answer never
    #: reads counters that do not include it yet.
    on_send: Callable[[int], None] | None = None
    #: Seconds between the bytes of a chat response's body (trickle mode); 0 sends it at once.
    trickle_s: float = 0.0

    def setup(self) -> None:
        super().setup()
        self.server.mock._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.mock._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")

    def _send_json(self, status: int, body: dict | bytes, headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        if self.on_send is not None:
            self.on_send(status)
            self.on_send = None
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.trickle_s <= 0:
            self.wfile.write(data)
            return
        for offset in range(len(data)):
            if self.server.mock._httpd is None:  # the server stopped: end the trickle with the connection
                self.close_connection = True
                return
            self.wfile.write(data[offset:offset + 1])
            self.wfile.flush()
            time.sleep(self.trickle_s)

    def _auth_error(self) -> dict | None:
        expected = self.server.mock.api_key
        if expected is None:
            return None
        header = self.headers.get("Authorization", "")
        if not header:
            return _error_body("You didn't provide an API key.", "invalid_request_error")
        sent = header[7:] if header.lower().startswith("bearer ") else header
        if sent == expected:
            return None
        # Echoes the key on purpose, as real servers do: callers must redact it themselves.
        return _error_body(f"Incorrect API key provided: {sent}", "invalid_request_error", code="invalid_api_key")

    def do_GET(self) -> None:
        if self._path() not in ("/v1/models", "/models"):
            self._send_json(404, _error_body(f"Unknown path {self.path}", "invalid_request_error"))
            return
        error = self._auth_error()
        if error:
            self._send_json(401, error)
            return
        models = self.server.mock.models if self.server.mock.models is not None else ["mock"]
        data = [{"id": m, "object": "model", "created": 0, "owned_by": self.server.mock.owner} for m in models]
        self._send_json(200, {"object": "list", "data": data})

    def do_POST(self) -> None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True  # the body's extent is unknown, so the stream can't be reused
            self._send_json(400, _error_body("Invalid Content-Length.", "invalid_request_error"))
            return
        raw = self.rfile.read(length)
        if self._path() not in ("/v1/chat/completions", "/chat/completions"):
            self._send_json(404, _error_body(f"Unknown path {self.path}", "invalid_request_error"))
            return
        self.server.mock._handle_chat(self, raw)


class MockLLMServer:
    """An OpenAI-compatible chat-completions server on 127.0.0.1, with optional fault injection.

    Checks run in this order per chat request: malformed body (400), bad API key (401), unknown model
    (404), unsupported ``n``/``stream``/``max_tokens`` (400), more than ``max_concurrent`` requests in flight
    (429); then, holding the slot (one at a time with ``serial``): null assistant content (500), context window
    (400), ``error_rate`` (500/502/503 in rotation), ``drop_rate`` (connection closed without a response);
    otherwise it sleeps ``latency_s`` and answers with ``responder``. Random faults come from
    ``random.Random(seed)``. The quirk modes are described in the module docstring.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency_s: float = 0.0,
        max_concurrent: int | None = None,
        retry_after_s: float = 1.0,
        error_rate: float = 0.0,
        drop_rate: float = 0.0,
        seed: int = 0,
        api_key: str | None = None,
        models: Sequence[str] | None = None,
        support_n: bool = True,
        reject_null_content: bool = False,
        tools_need_choice: bool = False,
        context_window: int | None = None,
        serial: bool = False,
        reasoning: bool = False,
        text_tool_calls: bool = False,
        refuse_max_tokens: bool = False,
        prompt_cache: bool = False,
        deep_nesting: Sequence[str] = (),
        trickle_s: float = 0.0,
        reject_required: bool = False,
        llama_cpp: bool = False,
        port: int = 0,
    ) -> None:
        if unknown := set(deep_nesting) - set(DEEP_ROLES):
            raise ValueError(f"deep_nesting: unknown roles {sorted(unknown)}; choose from {', '.join(DEEP_ROLES)}")
        self.responder: Responder = responder or scripted_responder
        self.latency_s = latency_s
        self.max_concurrent = max_concurrent
        self.retry_after_s = retry_after_s
        self.error_rate = error_rate
        self.drop_rate = drop_rate
        self.api_key = api_key
        self.models = list(models) if models is not None else None
        self.support_n = support_n
        self.reject_null_content = reject_null_content or llama_cpp
        self.tools_need_choice = tools_need_choice or llama_cpp
        self.reject_required = reject_required or llama_cpp
        self.context_window = context_window or (8192 if llama_cpp else None)
        self.serial = serial or llama_cpp
        #: ``owned_by`` of the models listed, by which the harness tells servers apart.
        self.owner = "me" if llama_cpp else "occubench"
        self.reasoning = reasoning
        self.text_tool_calls = text_tool_calls
        self.refuse_max_tokens = refuse_max_tokens
        self.prompt_cache = prompt_cache
        self.deep_nesting = tuple(deep_nesting)
        self.trickle_s = trickle_s
        self.stats = ServerStats()
        self.requests: list[dict] = []
        self._port = port
        self._rng = random.Random(seed)
        self._lock = threading.Lock()  # guards the rng and the counters below
        self._error_count = 0
        self._call_count = 0
        self._prefixes: set[str] = set()  # hashes of every message prefix answered so far (prompt_cache)
        self._slot = threading.Lock()  # the single slot of serial mode
        self._connections: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("MockLLMServer is not started")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> MockLLMServer:
        if self._httpd is not None:
            raise RuntimeError("MockLLMServer is already started")
        httpd = _HTTPServer(("127.0.0.1", self._port), _Handler)
        httpd.mock = self
        self._httpd = httpd
        # A short poll interval makes stop() quick (the default 0.5 s adds up across many tests).
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="mock-llm-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        # Idle keep-alive connections would otherwise keep being served by their handler threads.
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> MockLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    # -- request handling ----------------------------------------------------------------------------

    def _roll(self, rate: float) -> bool:
        if rate <= 0:
            return False
        with self._lock:
            return self._rng.random() < rate

    def _handle_chat(self, handler: _Handler, raw: bytes) -> int | None:
        """Answer one chat request; return the status sent, or None if the connection was dropped."""
        received = time.monotonic()
        started: float | None = None  # when the request got its slot
        admitted = False

        def release() -> None:  # with stats._lock held
            nonlocal admitted
            if admitted:
                self.stats.in_flight -= 1
                admitted = False
                if started is not None:
                    self.stats.timeline.append(RequestTiming(received, started, time.monotonic()))

        def sent(status: int) -> None:
            with self.stats._lock:
                self.stats.responses_by_status[status] = self.stats.responses_by_status.get(status, 0) + 1
                release()

        handler.on_send = sent
        handler.trickle_s = self.trickle_s
        with self.stats._lock:
            self.stats.requests += 1
        try:
            request = json.loads(raw)
        except ValueError as exc:
            handler._send_json(400, _error_body(f"Malformed JSON body: {exc}", "invalid_request_error"))
            return 400
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
            handler._send_json(400, _error_body("'messages' is required.", "invalid_request_error", param="messages"))
            return 400
        self.requests.append(request)

        error = handler._auth_error()
        if error:
            handler._send_json(401, error)
            return 401
        model = request.get("model")
        if self.models is not None and model not in self.models:
            message = f"The model `{model}` does not exist or you do not have access to it."
            handler._send_json(404, _error_body(message, "invalid_request_error", param="model",
                                                code="model_not_found"))
            return 404
        n = request.get("n")
        n = 1 if n is None else n
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            handler._send_json(400, _error_body(f"Invalid n: {n!r}.", "invalid_request_error", param="n"))
            return 400
        if n > 1 and not self.support_n:
            message = "This model does not support n > 1; send one request per sample."
            handler._send_json(400, _error_body(message, "invalid_request_error", param="n"))
            return 400
        if request.get("stream"):
            message = "Streaming is not supported by the mock server."
            handler._send_json(400, _error_body(message, "invalid_request_error", param="stream"))
            return 400
        if self.refuse_max_tokens and "max_tokens" in request:
            message = ("Unsupported parameter: 'max_tokens' is not supported with this model. "
                       "Use 'max_completion_tokens' instead.")
            handler._send_json(400, _error_body(message, "invalid_request_error", param="max_tokens",
                                                code="unsupported_parameter"))
            return 400
        if self.reject_required and request.get("tool_choice") == "required":
            handler._send_json(500, _error_body("Internal Server Error", "server_error"))
            return 500
        if self.tools_need_choice and request.get("tool_choice") in (None, "none"):
            # llama.cpp's chatml-function-calling handler renders no tools into the prompt without a tool_choice.
            request = {key: value for key, value in request.items() if key != "tools"}

        with self.stats._lock:
            admitted = self.max_concurrent is None or self.stats.in_flight < self.max_concurrent
            if admitted:
                self.stats.in_flight += 1
                self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)
        if not admitted:
            headers = {
                "Retry-After": f"{self.retry_after_s:g}",
                "retry-after-ms": str(int(self.retry_after_s * 1000)),
            }
            message = f"Rate limit reached: at most {self.max_concurrent} concurrent requests."
            handler._send_json(429, _error_body(message, "requests", code="rate_limit_exceeded"), headers)
            return 429
        try:
            # llama.cpp has one slot: later requests queue, and one whose client hung up still runs to the end.
            with self._slot if self.serial else contextlib.nullcontext():
                started = time.monotonic()
                return self._admitted(handler, request, n)
        finally:
            with self.stats._lock:
                release()  # dropped: nothing was sent

    def _admitted(self, handler: _Handler, request: dict, n: int) -> int | None:
        if self.reject_null_content and any(
            isinstance(m, dict) and m.get("role") == "assistant" and m.get("content", "") is None
            for m in request["messages"]
        ):
            handler._send_json(500, _error_body(_NULL_CONTENT_ERROR, "server_error"))
            return 500
        if self.context_window is not None:
            prompt_tokens = _prompt_tokens(request)
            limit = request.get("max_tokens", request.get("max_completion_tokens"))
            completion_tokens = limit if isinstance(limit, int) else 0
            requested = prompt_tokens + completion_tokens
            if requested > self.context_window:
                # llama-cpp-python's wording, which also carries OpenAI's phrase and code.
                message = (
                    f"Requested tokens ({requested}) exceed context window of {self.context_window}. "
                    f"This model's maximum context length is {self.context_window} tokens. However, you requested "
                    f"{requested} tokens ({prompt_tokens} in the messages, {completion_tokens} in the completion). "
                    "Please reduce the length of the messages or completion."
                )
                handler._send_json(400, _error_body(message, "invalid_request_error", param="messages",
                                                    code="context_length_exceeded"))
                return 400
        if self._roll(self.error_rate):
            with self._lock:
                status = _ERROR_STATUSES[self._error_count % len(_ERROR_STATUSES)]
                self._error_count += 1
            body = _error_body("The server had an error while processing your request.", "server_error")
            handler._send_json(status, body, {"retry-after-ms": "0"})
            return status
        if self._roll(self.drop_rate):
            # Send nothing and close: the client reads EOF and reports a connection error at once.
            handler.close_connection = True
            with self.stats._lock:
                self.stats.dropped += 1
            return None

        if self.latency_s > 0:
            time.sleep(self.latency_s)
        try:
            body = self._completion(request, n)
        except Exception as exc:  # noqa: BLE001 - a buggy responder should fail the request, not hang the client
            handler._send_json(500, _error_body(f"Mock responder failed: {exc!r}", "server_error"))
            return 500
        data = json.dumps(body).encode()
        if "body" in self.deep_nesting:  # spliced in as text: json.dumps cannot write an object this deep
            data = data[:-1] + b', "deep": ' + _DEEP.encode() + b"}"
        handler._send_json(200, data)
        return 200

    def _completion(self, request: dict, n: int) -> dict:
        choices = []
        completion_text = ""
        for index in range(n):
            reply = _deep_reply(request, self.deep_nesting, self.text_tool_calls) if self.deep_nesting else None
            message, finish_reason = self._message(self.responder(request, index) if reply is None else reply)
            choices.append({"index": index, "message": message, "finish_reason": finish_reason, "logprobs": None})
            completion_text += message["content"] or ""
            for call in message.get("tool_calls", []):
                completion_text += call["function"]["name"] + call["function"]["arguments"]
        prompt_tokens = _prompt_tokens(request)
        completion_tokens = _approx_tokens(completion_text)
        with self.stats._lock:
            self.stats.total_prompt_tokens += prompt_tokens
            self.stats.total_completion_tokens += completion_tokens
        with self._lock:
            self._call_count += 1
            completion_id = f"chatcmpl-mock-{self._call_count}"
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if self.prompt_cache:
            usage["prompt_tokens_details"] = {"cached_tokens": self._cached_tokens(request["messages"])}
        return {
            "id": completion_id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model") or "mock",
            "choices": choices,
            "usage": usage,
        }

    def _cached_tokens(self, messages: list) -> int:
        """Tokens of the longest message prefix an earlier request also sent; remembers this request's prefixes."""
        digests, digest = [], ""
        for message in messages:  # chained, so each digest stands for the whole prefix up to that message
            digest = hashlib.sha256((digest + _canonical(message)).encode()).hexdigest()
            digests.append(digest)
        with self._lock:
            shared = sum(1 for d in digests if d in self._prefixes)  # a seen prefix implies its own prefixes seen
            self._prefixes.update(digests)
        return _approx_tokens(json.dumps(messages[:shared])) if shared else 0

    def _message(self, reply: str | dict) -> tuple[dict, str]:
        if isinstance(reply, str):
            reply = {"content": reply}
        if not isinstance(reply, dict):
            raise TypeError(f"responder returned {type(reply).__name__}, expected str or dict")
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
        finish_reason = "stop"
        calls = reply.get("tool_calls") or []
        if calls and self.text_tool_calls:
            # What a Hermes/Qwen chat template emits when the server has no tool-call parser.
            texts = (json.dumps({"name": c["name"], "arguments": _decoded(c.get("arguments", {}))}) for c in calls)
            blocks = [f"<tool_call>\n{text}\n</tool_call>" for text in texts]
            message["content"] = "\n".join([message["content"], *blocks] if message["content"] else blocks)
        elif calls:
            message["tool_calls"] = []
            for call in calls:
                arguments = call.get("arguments", {})
                if not isinstance(arguments, str):
                    arguments = json.dumps(arguments)
                with self._lock:
                    self._call_count += 1
                    call_id = f"call_{self._call_count}"
                message["tool_calls"].append(
                    {"id": call_id, "type": "function", "function": {"name": call["name"], "arguments": arguments}}
                )
            finish_reason = "tool_calls"
        if self.reasoning:
            message["content"] = f"<think>\n{_REASONING}\n</think>\n\n{message['content'] or ''}"
            message["reasoning_content"] = _REASONING
        return message, finish_reason


def _server_from_args(argv: Sequence[str] | None = None) -> MockLLMServer:
    parser = argparse.ArgumentParser(
        prog="python -m occubench.testing.server",
        description="Serve the scripted OpenAI-compatible mock LLM on 127.0.0.1 until interrupted.",
    )
    parser.add_argument("--port", type=int, default=8100, help="default: 8100")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds to wait before each answer")
    parser.add_argument("--max-concurrent", type=int, default=None, help="answer 429 beyond this many in flight")
    parser.add_argument("--retry-after", type=float, default=1.0, help="Retry-After seconds of a 429 (default: 1)")
    parser.add_argument("--error-rate", type=float, default=0.0, help="probability of a 5xx answer")
    parser.add_argument("--drop-rate", type=float, default=0.0, help="probability of closing without an answer")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-n", action="store_true", help="refuse requests with n > 1, as some servers do")
    parser.add_argument("--api-key", help="accept only this key (others get 401, as real APIs answer)")
    parser.add_argument("--models", help="comma-separated model names to serve (others get 404); default: any")
    parser.add_argument("--reject-null-content", action="store_true",
                        help='answer 500 to an assistant message with "content": null, as llama-cpp-python does')
    parser.add_argument("--tools-need-choice", action="store_true",
                        help="ignore tools unless tool_choice is set, as llama.cpp's chatml-function-calling does")
    parser.add_argument("--context-window", type=int, default=None,
                        help="answer 400 context_length_exceeded when prompt plus max_tokens exceed this")
    parser.add_argument("--serial", action="store_true", help="one request at a time, the rest queued (llama.cpp)")
    parser.add_argument("--reasoning", action="store_true",
                        help="prefix replies with <think>..</think> and add reasoning_content")
    parser.add_argument("--text-tool-calls", action="store_true",
                        help="return tool calls as <tool_call> blocks in the content, not as tool_calls")
    parser.add_argument("--refuse-max-tokens", action="store_true",
                        help="answer 400 to max_tokens (max_completion_tokens is fine), as OpenAI reasoning models")
    parser.add_argument("--prompt-cache", action="store_true",
                        help="report usage.prompt_tokens_details.cached_tokens for message prefixes seen before")
    parser.add_argument("--deep-nesting", metavar="ROLES", default="",
                        help=f"comma-separated roles ({', '.join(DEEP_ROLES)}) whose replies nest JSON 10,000 deep")
    parser.add_argument("--reject-required", action="store_true",
                        help='answer 500 to tool_choice "required", as llama-cpp-python does')
    parser.add_argument("--llama-cpp", action="store_true",
                        help="behave as llama-cpp-python's server in every way above (one slot, a context window, ...)")
    parser.add_argument("--trickle", type=float, default=0.0, metavar="SECONDS",
                        help="send chat response bodies one byte every SECONDS")
    parser.add_argument("--synth-script", metavar="FILE",
                        help="JSON file scripting the synthesis stages' faults (see occubench.testing.synth)")
    args = parser.parse_args(argv)
    deep = [role.strip() for role in args.deep_nesting.split(",") if role.strip()]
    if unknown := set(deep) - set(DEEP_ROLES):
        parser.error(f"--deep-nesting: unknown roles {sorted(unknown)}; choose from {', '.join(DEEP_ROLES)}")
    synth = json.loads(Path(args.synth_script).read_text(encoding="utf-8")) if args.synth_script else None
    return MockLLMServer(
        make_scripted_responder(synth=synth),
        latency_s=args.latency,
        max_concurrent=args.max_concurrent,
        retry_after_s=args.retry_after,
        error_rate=args.error_rate,
        drop_rate=args.drop_rate,
        seed=args.seed,
        support_n=not args.no_n,
        api_key=args.api_key,
        models=[m.strip() for m in args.models.split(",") if m.strip()] if args.models else None,
        reject_null_content=args.reject_null_content,
        tools_need_choice=args.tools_need_choice,
        context_window=args.context_window,
        serial=args.serial,
        reasoning=args.reasoning,
        text_tool_calls=args.text_tool_calls,
        refuse_max_tokens=args.refuse_max_tokens,
        prompt_cache=args.prompt_cache,
        deep_nesting=deep,
        trickle_s=args.trickle,
        reject_required=args.reject_required,
        llama_cpp=args.llama_cpp,
        port=args.port,
    )


def _main(argv: Sequence[str] | None = None) -> None:
    server = _server_from_args(argv).start()
    print(server.base_url, flush=True)  # benchmarks read the URL from the first line of output
    # Scripts stop a background server with SIGTERM; exit through `finally` so the stats still print.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        print(json.dumps(server.stats.snapshot()), flush=True)


if __name__ == "__main__":
    _main()
