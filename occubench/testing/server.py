"""A loopback OpenAI-compatible chat-completions server for tests, benchmarks and offline smoke runs.

Standard library only. It answers ``POST /v1/chat/completions`` and ``GET /v1/models`` and can inject the
faults a real endpoint produces (bad key, unknown model, 429, 5xx, dropped connections, latency), so the
harness's retry and concurrency logic can be exercised without network access. Messages' content parts are
checked as OpenAI checks them: text, or an image (in a user message only) as a data URL of a PNG, JPEG, WebP or GIF.

    with MockLLMServer(latency_s=0.05, error_rate=0.1) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k")

Run ``python -m occubench.testing.server --port 8000`` to serve the scripted responder in the foreground.

This module is the HTTP side and the command line: what each role answers is in
:mod:`~occubench.testing.responders`, the checks and the completion bodies in :mod:`~occubench.testing.chat`, the
counters in :mod:`~occubench.testing.stats`.

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
- ``refuse_token_ids`` (``--refuse-token-ids``): vLLM's ``return_token_ids`` gets HTTP 400, as the OpenAI API
  answers a parameter it does not know; without it, ``return_token_ids`` adds ``prompt_token_ids`` and each choice's
  ``token_ids``, and ``logprobs`` each choice's ``logprobs.content``, from a word tokenizer
  (:func:`occubench.testing.chat.token_ids`).
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
- ``twin`` (:func:`make_scripted_responder`'s keyword, then ``--twin SHARE``): a world-model request whose system
  prompt names ``the executable world "NAME"`` is answered by built-in world NAME itself (the conversation's actions
  replayed on a fresh instance), a seeded SHARE of calls (``--seed``) wrongly on purpose, so that a twin-world run
  has a simulator of known fidelity (see :mod:`occubench.testing.twin`). The agreement judge needs no flag.

``retry_after_s`` (``--retry-after``, the Retry-After of 429 answers) is 1 s by default, as real APIs send.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from occubench.testing.chat import Completions, Refusal, parse, screen, screen_in_slot
from occubench.testing.responders import DEEP_ROLES, Responder, make_scripted_responder, scripted_responder
from occubench.testing.stats import RequestTiming, ServerStats, Tally

__all__ = ["MockLLMServer", "RequestTiming", "Responder", "ServerStats", "make_scripted_responder",
           "scripted_responder"]

_ERROR_STATUSES = (500, 502, 503)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # A thousand clients connecting at once must queue, not be reset (the default backlog is 5).
    request_queue_size = 4096
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

    def _refuse(self, refusal: Refusal) -> int:
        self._send_json(refusal.status, refusal.body, refusal.headers)
        return refusal.status

    def _unknown_path(self) -> Refusal:
        return Refusal(404, f"Unknown path {self.path}", "invalid_request_error")

    def _auth_refusal(self) -> Refusal | None:
        expected = self.server.mock.api_key
        if expected is None:
            return None
        header = self.headers.get("Authorization", "")
        if not header:
            return Refusal(401, "You didn't provide an API key.", "invalid_request_error")
        sent = header[7:] if header.lower().startswith("bearer ") else header
        if sent == expected:
            return None
        # Echoes the key on purpose, as real servers do: callers must redact it themselves.
        return Refusal(401, f"Incorrect API key provided: {sent}", "invalid_request_error", code="invalid_api_key")

    def do_GET(self) -> None:
        refusal = self._unknown_path() if self._path() not in ("/v1/models", "/models") else self._auth_refusal()
        if refusal:
            self._refuse(refusal)
            return
        mock = self.server.mock
        models = mock.models if mock.models is not None else ["mock"]
        data = [{"id": m, "object": "model", "created": 0, "owned_by": mock.owner} for m in models]
        self._send_json(200, {"object": "list", "data": data})

    def do_POST(self) -> None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True  # the body's extent is unknown, so the stream can't be reused
            self._refuse(Refusal(400, "Invalid Content-Length.", "invalid_request_error"))
            return
        raw = self.rfile.read(length)
        if self._path() not in ("/v1/chat/completions", "/chat/completions"):
            self._refuse(self._unknown_path())
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
        refuse_token_ids: bool = False,
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
        self.refuse_token_ids = refuse_token_ids
        self.prompt_cache = prompt_cache
        self.deep_nesting = tuple(deep_nesting)
        self.trickle_s = trickle_s
        self.stats = ServerStats()
        self.requests: list[dict] = []
        self._port = port
        self._completions = Completions(self)
        self._rng = random.Random(seed)
        self._lock = threading.Lock()  # guards the rng, the error count and the connections
        self._error_count = 0
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
        visit = Tally(self.stats)
        handler.on_send = visit.sent
        handler.trickle_s = self.trickle_s
        try:
            request = parse(raw)
            self.requests.append(request)
            visit.probe = _probe(request)
            if refusal := handler._auth_refusal():
                raise refusal
            request, n = screen(self, request)
            if not visit.admit(self.max_concurrent):
                headers = {"Retry-After": f"{self.retry_after_s:g}",
                           "retry-after-ms": str(int(self.retry_after_s * 1000))}
                raise Refusal(429, f"Rate limit reached: at most {self.max_concurrent} concurrent requests.",
                              "requests", code="rate_limit_exceeded", headers=headers)
        except Refusal as refusal:
            return handler._refuse(refusal)
        try:
            # llama.cpp has one slot: later requests queue, and one whose client hung up still runs to the end.
            with self._slot if self.serial else contextlib.nullcontext():
                visit.started = time.monotonic()
                return self._admitted(handler, request, n)
        finally:
            visit.end()

    def _admitted(self, handler: _Handler, request: dict, n: int) -> int | None:
        try:
            screen_in_slot(self, request)
            if self._roll(self.error_rate):
                with self._lock:
                    status = _ERROR_STATUSES[self._error_count % len(_ERROR_STATUSES)]
                    self._error_count += 1
                raise Refusal(status, "The server had an error while processing your request.", "server_error",
                              headers={"retry-after-ms": "0"})
        except Refusal as refusal:
            return handler._refuse(refusal)
        if self._roll(self.drop_rate):
            # Send nothing and close: the client reads EOF and reports a connection error at once.
            handler.close_connection = True
            with self.stats._lock:
                self.stats.dropped += 1
            return None

        if self.latency_s > 0:
            time.sleep(self.latency_s)
        try:
            data, usage = self._completions.encoded(request, n)
        except Exception as exc:  # noqa: BLE001 - a buggy responder should fail the request, not hang the client
            return handler._refuse(Refusal(500, f"Mock responder failed: {exc!r}", "server_error"))
        with self.stats._lock:
            self.stats.total_prompt_tokens += usage["prompt_tokens"]
            self.stats.total_completion_tokens += usage["completion_tokens"]
        handler._send_json(200, data)
        return 200


def _probe(request: dict) -> bool:
    """Whether a request is one of occubench's preflight probes (a one-line question, or the report_ok tool)."""
    messages = request.get("messages")
    return (isinstance(messages, list) and len(messages) == 1 and isinstance(messages[0], dict)
            and messages[0].get("content") in ("Reply with the word OK.", "Call the report_ok tool now."))


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _server_from_args(argv: Sequence[str] | None = None) -> MockLLMServer:
    parser = argparse.ArgumentParser(
        prog="python -m occubench.testing.server",
        description="Serve the scripted OpenAI-compatible mock LLM on 127.0.0.1 until interrupted.",
    )
    # Each flag's dest is MockLLMServer's keyword of the same meaning, so the parsed flags are its arguments.
    parser.add_argument("--port", type=int, default=8100, help="default: 8100")
    parser.add_argument("--latency", dest="latency_s", metavar="LATENCY", type=float, default=0.0,
                        help="seconds to wait before each answer")
    parser.add_argument("--max-concurrent", type=int, default=None, help="answer 429 beyond this many in flight")
    parser.add_argument("--retry-after", dest="retry_after_s", metavar="RETRY_AFTER", type=float, default=1.0,
                        help="Retry-After seconds of a 429 (default: 1)")
    parser.add_argument("--error-rate", type=float, default=0.0, help="probability of a 5xx answer")
    parser.add_argument("--drop-rate", type=float, default=0.0, help="probability of closing without an answer")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-n", dest="support_n", action="store_false",
                        help="refuse requests with n > 1, as some servers do")
    parser.add_argument("--api-key", help="accept only this key (others get 401, as real APIs answer)")
    parser.add_argument("--models", type=lambda text: _names(text) if text else None,  # "" as if not given
                        help="comma-separated model names to serve (others get 404); default: any")
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
    parser.add_argument("--refuse-token-ids", action="store_true",
                        help="answer 400 to return_token_ids, as the OpenAI API does")
    parser.add_argument("--prompt-cache", action="store_true",
                        help="report usage.prompt_tokens_details.cached_tokens for message prefixes seen before")
    parser.add_argument("--deep-nesting", metavar="ROLES", type=_names, default=[],
                        help=f"comma-separated roles ({', '.join(DEEP_ROLES)}) whose replies nest JSON 10,000 deep")
    parser.add_argument("--reject-required", action="store_true",
                        help='answer 500 to tool_choice "required", as llama-cpp-python does')
    parser.add_argument("--llama-cpp", action="store_true",
                        help="behave as llama-cpp-python's server in every way above (one slot, a context window, ...)")
    parser.add_argument("--trickle", dest="trickle_s", metavar="SECONDS", type=float, default=0.0,
                        help="send chat response bodies one byte every SECONDS")
    parser.add_argument("--synth-script", metavar="FILE",
                        help="JSON file scripting the synthesis stages' faults (see occubench.testing.synth)")
    parser.add_argument("--twin", metavar="SHARE", type=float, default=None,
                        help="answer world-model requests naming an executable world by that world, this share of "
                             "calls (0 to 1, drawn under --seed) corrupted (see occubench.testing.twin)")
    options = vars(parser.parse_args(argv))
    if unknown := set(options["deep_nesting"]) - set(DEEP_ROLES):
        parser.error(f"--deep-nesting: unknown roles {sorted(unknown)}; choose from {', '.join(DEEP_ROLES)}")
    script = options.pop("synth_script")
    synth = json.loads(Path(script).read_text(encoding="utf-8")) if script else None
    try:
        responder = make_scripted_responder(synth=synth, twin=options.pop("twin"), seed=options["seed"])
    except ValueError as exc:
        parser.error(f"--twin: {exc}")
    return MockLLMServer(responder, **options)


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
