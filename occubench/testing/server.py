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
- ``until_hint`` (:func:`make_scripted_responder`'s keyword, then ``--until-hint``): the agent calls a cheap tool
  until an observation carries a live hint (a run with ``--live-hints``, a person in ``occubench view``), then the
  day's finishing tool (``finish_day``, ``done``), its notes quoting the hint, and answers.
- ``twin`` (:func:`make_scripted_responder`'s keyword, then ``--twin SHARE``): a world-model request whose system
  prompt names ``the executable world "NAME"`` is answered by built-in world NAME itself (the conversation's actions
  replayed on a fresh instance), a seeded SHARE of calls (``--seed``) wrongly on purpose, so that a twin-world run
  has a simulator of known fidelity (see :mod:`occubench.testing.twin`). The agreement judge needs no flag.

``retry_after_s`` (``--retry-after``, the Retry-After of 429 answers) is 1 s by default, as real APIs send.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import random
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from http import HTTPStatus
from pathlib import Path
from typing import NamedTuple

from occubench.testing.chat import Completions, Refusal, parse, screen, screen_in_slot
from occubench.testing.responders import DEEP_ROLES, Responder, make_scripted_responder, scripted_responder
from occubench.testing.stats import RequestTiming, ServerStats, Tally
from occubench.util.collector import Collector
from occubench.util.openfiles import raise_open_files

__all__ = ["MockLLMServer", "RequestTiming", "Responder", "ServerStats", "make_scripted_responder",
           "scripted_responder"]

_ERROR_STATUSES = (500, 502, 503)
#: Chat paths, as the SDK and bare clients send them.
_CHAT = ("/v1/chat/completions", "/chat/completions")
#: Bytes a request's line and headers may take (its body is read by its Content-Length).
_HEAD_LIMIT = 64 * 1024
#: Responders running at once, each in a thread: one may block (a test's waits for later requests).
_RESPONDERS = 64


class _Answer(NamedTuple):
    status: int
    body: bytes
    headers: dict[str, str]

    @classmethod
    def of(cls, refusal: Refusal) -> _Answer:
        return cls(refusal.status, json.dumps(refusal.body).encode(), refusal.headers)


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
        keep_requests: bool = True,
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
        #: Every chat request parsed, in order (``keep_requests``: the command line keeps none, since a long
        #: benchmark's would fill its memory).
        self.requests: list[dict] = []
        self._keep_requests = keep_requests
        self._port = port
        self._completions = Completions(self)
        self._rng = random.Random(seed)
        self._error_count = 0
        self._slot = asyncio.Lock()  # the single slot of serial mode; a new one for each start's loop
        self._connections: set[asyncio.Task[None]] = set()
        self._server: asyncio.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("MockLLMServer is not started")
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> MockLLMServer:
        if self._server is not None:
            raise RuntimeError("MockLLMServer is already started")
        loop, self._slot = asyncio.new_event_loop(), asyncio.Lock()
        listening: Future[asyncio.Server] = Future()
        self._thread = threading.Thread(target=self._serve, args=(loop, listening), name="mock-llm-server",
                                        daemon=True)
        self._thread.start()
        self._server, self._loop = listening.result(), loop  # a port in use raises here
        return self

    def _serve(self, loop: asyncio.AbstractEventLoop, listening: Future[asyncio.Server]) -> None:
        asyncio.set_event_loop(loop)
        loop.set_default_executor(ThreadPoolExecutor(_RESPONDERS, thread_name_prefix="mock-llm-responder"))
        try:
            # Ten thousand clients connecting at once must queue, not be reset (the default backlog is 100).
            listening.set_result(loop.run_until_complete(asyncio.start_server(
                self._connection, "127.0.0.1", self._port, backlog=16384, limit=_HEAD_LIMIT)))
        except BaseException as exc:  # noqa: BLE001 - handed to start(), which raises it
            listening.set_exception(exc)
        else:
            loop.run_forever()
        loop.close()  # responders still running finish in their threads, unwaited

    def stop(self) -> None:
        server, loop, self._server = self._server, self._loop, None
        if server is None or loop is None:
            return
        # Open connections end too, idle keep-alive ones and those mid-answer (a trickle, a responder's wait).
        asyncio.run_coroutine_threadsafe(self._close(server), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    async def _close(self, server: asyncio.Server) -> None:
        server.close()
        for connection in self._connections:
            connection.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)

    def __enter__(self) -> MockLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- HTTP ----------------------------------------------------------------------------------------
    # One event loop serves every connection (a coroutine each, not a thread), so ten thousand requests can wait
    # out their latency at once; only the responder, which may block, runs in the loop's threads.

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while await self._exchange(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # a client hanging up mid-request is routine here (timeouts, our own drops)
        except asyncio.CancelledError:
            pass  # stop(): ended, not failed (Python 3.11's streams report a cancelled connection as an error)
        finally:
            self._connections.discard(task)
            writer.close()

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Read one request and answer it; whether the connection serves another (HTTP/1.1 keep-alive, as real
        endpoints do)."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:  # closed between requests
            return False
        line, *fields = head[:-4].decode("latin-1").split("\r\n")
        headers = {name.strip().lower(): value.strip() for name, _, value in (f.partition(":") for f in fields)}
        method, target, version = (line.split() + ["", "", ""])[:3]
        keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        length = headers.get("content-length", "0")
        if not (length.isascii() and length.isdigit()) or "transfer-encoding" in headers:
            # The body's extent is unknown, so the stream can't be reused.
            await _write(writer, _Answer.of(Refusal(400, "Invalid Content-Length.", "invalid_request_error")), False)
            return False
        raw = await reader.readexactly(int(length))
        path = target.split("?", 1)[0].rstrip("/")
        if method == "POST" and path in _CHAT:
            return await self._chat(raw, headers, functools.partial(_write, writer, keep=keep,
                                                                     trickle_s=self.trickle_s)) and keep
        if method == "GET" and path in ("/v1/models", "/models"):
            refusal = self._auth_refusal(headers)
            answer = _Answer.of(refusal) if refusal else _Answer(200, json.dumps({"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": self.owner}
                for m in (self.models if self.models is not None else ["mock"])]}).encode(), {})
        elif method in ("GET", "POST"):
            answer = _Answer.of(Refusal(404, f"Unknown path {target}", "invalid_request_error"))
        else:
            answer = _Answer.of(Refusal(501, f"Unsupported method {method!r}", "invalid_request_error"))
        await _write(writer, answer, keep)
        return keep

    def _auth_refusal(self, headers: dict[str, str]) -> Refusal | None:
        expected = self.api_key
        if expected is None:
            return None
        header = headers.get("authorization", "")
        if not header:
            return Refusal(401, "You didn't provide an API key.", "invalid_request_error")
        sent = header[7:] if header.lower().startswith("bearer ") else header
        if sent == expected:
            return None
        # Echoes the key on purpose, as real servers do: callers must redact it themselves.
        return Refusal(401, f"Incorrect API key provided: {sent}", "invalid_request_error", code="invalid_api_key")

    # -- request handling ----------------------------------------------------------------------------

    def _roll(self, rate: float) -> bool:
        return rate > 0 and self._rng.random() < rate

    async def _chat(self, raw: bytes, headers: dict[str, str], write: Callable[[_Answer], Awaitable[None]]) -> bool:
        """Answer one chat request with ``write``; False if the connection is dropped instead."""
        visit = Tally(self.stats)

        async def send(answer: _Answer) -> None:
            visit.sent(answer.status)  # counted before it is written: a client with its answer sees it counted
            await write(answer)

        try:
            try:
                request = parse(raw)
                if self._keep_requests:
                    self.requests.append(request)
                visit.probe = _probe(request)
                if refusal := self._auth_refusal(headers):
                    raise refusal
                request, n = screen(self, request)
                if not visit.admit(self.max_concurrent):
                    retry = {"Retry-After": f"{self.retry_after_s:g}",
                             "retry-after-ms": str(int(self.retry_after_s * 1000))}
                    raise Refusal(429, f"Rate limit reached: at most {self.max_concurrent} concurrent requests.",
                                  "requests", code="rate_limit_exceeded", headers=retry)
            except Refusal as refusal:
                await send(_Answer.of(refusal))
                return True
            # llama.cpp has one slot: later requests queue, and one whose client hung up still runs to the end.
            async with self._slot if self.serial else contextlib.nullcontext():
                visit.started = time.monotonic()
                return await self._admitted(request, n, send)
        finally:
            visit.end()

    async def _admitted(self, request: dict, n: int, send: Callable[[_Answer], Awaitable[None]]) -> bool:
        try:
            screen_in_slot(self, request)
            if self._roll(self.error_rate):
                status = _ERROR_STATUSES[self._error_count % len(_ERROR_STATUSES)]
                self._error_count += 1
                raise Refusal(status, "The server had an error while processing your request.", "server_error",
                              headers={"retry-after-ms": "0"})
        except Refusal as refusal:
            await send(_Answer.of(refusal))
            return True
        if self._roll(self.drop_rate):
            # Send nothing and close: the client reads EOF and reports a connection error at once.
            with self.stats._lock:
                self.stats.dropped += 1
            return False
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        try:
            data, usage = await asyncio.get_running_loop().run_in_executor(None, self._completions.encoded, request, n)
        except Exception as exc:  # noqa: BLE001 - a buggy responder should fail the request, not hang the client
            await send(_Answer.of(Refusal(500, f"Mock responder failed: {exc!r}", "server_error")))
            return True
        with self.stats._lock:
            self.stats.total_prompt_tokens += usage["prompt_tokens"]
            self.stats.total_completion_tokens += usage["completion_tokens"]
        await send(_Answer(200, data, {}))
        return True


async def _write(writer: asyncio.StreamWriter, answer: _Answer, keep: bool, *, trickle_s: float = 0.0) -> None:
    """An answer, in one write; with ``trickle_s``, its body a byte at a time, that many seconds apart."""
    status, body, headers = answer
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", "Content-Type: application/json",
             f"Content-Length: {len(body)}", *(f"{name}: {value}" for name, value in headers.items()),
             *([] if keep else ["Connection: close"])]
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    if trickle_s <= 0:
        writer.write(head + body)
        await writer.drain()
        return
    writer.write(head)
    for offset in range(len(body)):  # a stopped server cancels this, which ends the connection
        writer.write(body[offset:offset + 1])
        await writer.drain()
        await asyncio.sleep(trickle_s)


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
    parser.add_argument("--until-hint", action="store_true",
                        help="the agent calls a cheap tool until an observation carries a live hint (a run with "
                             "--live-hints, a person in `occubench view`), then finishes its day")
    parser.add_argument("--twin", metavar="SHARE", type=float, default=None,
                        help="answer world-model requests naming an executable world by that world, this share of "
                             "calls (0 to 1, drawn under --seed) corrupted (see occubench.testing.twin)")
    options = vars(parser.parse_args(argv))
    if unknown := set(options["deep_nesting"]) - set(DEEP_ROLES):
        parser.error(f"--deep-nesting: unknown roles {sorted(unknown)}; choose from {', '.join(DEEP_ROLES)}")
    script = options.pop("synth_script")
    synth = json.loads(Path(script).read_text(encoding="utf-8")) if script else None
    try:
        responder = make_scripted_responder(synth=synth, twin=options.pop("twin"), seed=options["seed"],
                                            until_hint=options.pop("until_hint"))
    except ValueError as exc:
        parser.error(f"--twin: {exc}")
    return MockLLMServer(responder, keep_requests=False, **options)


def _main(argv: Sequence[str] | None = None) -> None:
    raise_open_files(65_536)  # a benchmark may hold ten thousand connections open to it
    server = _server_from_args(argv).start()
    print(server.base_url, flush=True)  # benchmarks read the URL from the first line of output
    # Scripts stop a background server with SIGTERM; exit through `finally` so the stats still print.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        with Collector() as collector:  # each request in flight holds its parsed body for the whole latency
            while True:
                time.sleep(1)
                collector.check()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        # With the process's CPU time: a benchmark on a small machine shares its cores with this server.
        print(json.dumps({**server.stats.snapshot(), "process_cpu_s": round(time.process_time(), 3)}), flush=True)


if __name__ == "__main__":
    _main()
