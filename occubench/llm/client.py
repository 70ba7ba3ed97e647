"""The one client every role (agent, world model, verifier, colleagues) uses to reach an OpenAI-compatible endpoint.

Retries live here and nowhere else: transient failures (429 honouring Retry-After, 5xx, timeouts, dropped
connections, unreadable answers) are retried with jittered exponential backoff until a per-call time budget runs
out, then raised as :class:`LLMUnavailableError` — an infrastructure error, never an agent failure. What retrying
cannot mend is raised at once as :class:`LLMRequestError`: a 400, 401, 404 or 422; a request that cannot be
written; a 5xx that keeps repeating the same validation error (a server that refuses the request but says 500).
Every request and every retry is counted in the episode's ledger under the role that made it, and every error
names that role, the endpoint (credentials masked) and the model.

What servers differ in is smoothed here too: ``tool_choice: "auto"`` goes with every tools list (some servers
ignore tools without it); a model that refuses ``max_tokens`` gets ``max_completion_tokens``; what they answer is
read by :mod:`occubench.llm.response`.

Time is bounded in wall-clock terms: ``timeout_s`` is the whole of one request (the SDK's timeout bounds each read
only, so a server trickling a byte at a time would hold a request for ever), and within an episode with
``--max-seconds-per-task`` a request of the episode's roles ends when the episode's time does. What a model sends is
read with bounded nesting (:func:`occubench.llm.parsing.loads`): a body too deep to read is a malformed answer.
"""

from __future__ import annotations

import contextvars
import email.utils
import json
import logging
import random
import re
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import openai

try:  # the SDK's HTTP library: httpx2 in recent releases, httpx before
    import httpx2 as http
except ImportError:  # pragma: no cover - an older openai
    import httpx as http  # type: ignore[no-redef]

from occubench.errors import ContextLengthError, LLMRequestError, LLMUnavailableError, TaskLimitReached
from occubench.llm.cache import Cache, cache_key
from occubench.llm.ledger import EPISODE_ROLES, check_limits, record, record_queued, record_retry, seconds_left
from occubench.llm.limiter import AdaptiveLimiter, Limiter
from occubench.llm.model import ChatClient
from occubench.llm.parsing import loads
from occubench.llm.response import read_completion
from occubench.llm.types import Completion, Message, Reply, Usage
from occubench.util.redact import redact_url

log = logging.getLogger("occubench")

# Local servers (vLLM, Ollama) need no key, but the SDK refuses to start without one.
_NO_KEY = "no-key"
#: A 5xx repeating the same validation error this many times is a refusal, not an outage.
_SAME_5XX_LIMIT = 3
_VALIDATION = re.compile(r"validation error|validat|invalid|input should be|field required|is not of type|"
                         r"must be|unexpected|not supported|unsupported", re.IGNORECASE)


@dataclass(frozen=True)
class RetryPolicy:
    """How long one call may keep retrying transient failures, and how it backs off."""

    budget_s: float = 600.0
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            # The server said when; a little jitter keeps many workers from returning in lockstep.
            return retry_after * (1 + 0.1 * random.random())
        return random.uniform(0, min(self.max_delay_s, self.base_delay_s * 2**attempt))


#: A preflight probe's retries: short, so a wrong endpoint is reported within seconds.
_PROBE_RETRY = RetryPolicy(budget_s=20.0, base_delay_s=0.5, max_delay_s=5.0)
_NO_RETRY = RetryPolicy(budget_s=0.0)


def _retry_after(exc: openai.APIStatusError) -> float | None:
    headers = exc.response.headers
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    if (value := headers.get("retry-after")) is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            parsed = email.utils.parsedate_to_datetime(value) if value else None
            if parsed is not None:
                return max(0.0, parsed.timestamp() - time.time())
    return None


def _is_context_overflow(exc: openai.APIStatusError) -> bool:
    text = f"{exc.code} {exc.message}".lower()
    return any(phrase in text for phrase in ("context_length", "maximum context length", "context window",
                                             "context size", "too many tokens"))


def _about_n(exc: LLMRequestError) -> bool:
    """Whether a rejection is about the ``n`` parameter (and so means: ask for one sample at a time)."""
    return exc.param == "n" or bool(re.search(r"(?<![\w.-])n\s*(>|=|must|is not|not supported|parameter)|"
                                              r"parameter\W+n\b|\bn\b.{0,20}\bsupported|multiple (choices|samples)",
                                              str(exc), re.IGNORECASE))


def _refuses_max_tokens(exc: openai.APIStatusError) -> bool:
    return getattr(exc, "param", None) == "max_tokens" or "max_completion_tokens" in exc.message


@dataclass(frozen=True)
class _Failure:
    """A transient failure, to retry: its cause as the ledger counts retries, and what it was."""

    cause: str
    text: str
    #: Seconds the server asked to wait (Retry-After).
    retry_after: float | None = None


def _retryable(status: int) -> bool:
    return status == 429 or status >= 500 or status in (408, 409)


def _status_failure(exc: openai.APIStatusError, where: str, repeats: int) -> _Failure:
    """An HTTP error to retry; raised as :class:`LLMRequestError` if retrying cannot mend it: a refusal, or a 5xx
    that has said the same validation error ``repeats`` times in a row."""
    status = exc.status_code
    if not _retryable(status):
        error = ContextLengthError if _is_context_overflow(exc) else LLMRequestError
        raise error(f"{where} rejected the request: HTTP {status}: {exc.message}", status,
                    getattr(exc, "param", None)) from None
    if status >= 500 and repeats >= _SAME_5XX_LIMIT and _VALIDATION.search(exc.message):
        raise LLMRequestError(f"{where} refused the request {repeats} times with the same error, though as "
                              f"HTTP {status}: {exc.message}", status) from None
    return _Failure("rate_limited" if status == 429 else "server_error", f"HTTP {status}: {exc.message}",
                    _retry_after(exc))


class LLMClient:
    """A thread-safe client for one OpenAI-compatible endpoint; share it across tasks to reuse connections."""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout_s: float = 300.0,
        retry: RetryPolicy | None = None,
        openai_client: openai.OpenAI | None = None,
        max_in_flight: int = 32,
        adaptive: bool = True,
        cache: Cache | None = None,
        limiter: Limiter | None = None,
    ) -> None:
        # The SDK's own retries are off: one retry policy, here, with a time budget the SDK does not offer.
        self._client = (openai_client.with_options(max_retries=0) if openai_client is not None else
                        openai.OpenAI(api_key=api_key or _NO_KEY, base_url=base_url, timeout=timeout_s,
                                      max_retries=0))
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        # A given limiter (one a whole cluster shares) replaces the client's own; max_in_flight and adaptive are
        # then its business.
        self.limiter: Limiter = limiter or AdaptiveLimiter(max_in_flight, adaptive=adaptive)
        self.cache = cache
        self._n_supported: dict[str, bool] = {}
        #: Models that refused ``max_tokens`` and take ``max_completion_tokens`` instead.
        self._completion_tokens_param: set[str] = set()

    @property
    def base_url(self) -> str:
        return str(self._client.base_url)

    @property
    def shown_url(self) -> str:
        """The endpoint as messages show it: a password or a key in the URL masked."""
        return redact_url(self.base_url) or ""

    def chat(self, model: str, messages: list[Message], *, tools: list[dict[str, Any]] | None = None,
             params: dict[str, Any] | None = None, sample: int = 0, role: str = "model") -> Completion:
        """One reply: from the cache when it holds this request's ``sample``, else from the endpoint. Raises
        :class:`TaskLimitReached` instead when the episode's agent is past its limits."""
        check_limits(role)
        params = params or {}
        key = cache_key(self.base_url, model, messages, tools, params, sample) if self.cache else ""
        if self.cache and (hit := self.cache.get(key)):
            record(role, hit[1])
            return Completion([hit[0]], hit[1])
        completion = self._request(model, messages, tools, 1, params, self.retry, role=role)
        if self.cache:
            self.cache.put(key, completion.replies[0], completion.usage)
        return completion

    def samples(self, model: str, messages: list[Message], count: int, *,
                params: dict[str, Any] | None = None, role: str = "model") -> Completion:
        """``count`` independent replies to the same messages (judge votes), as samples 0..count-1.

        Uncached samples come from one request with ``n`` where the endpoint supports it — the prompt is paid
        once — else from concurrent single requests. Support is probed on first use and remembered per model.
        """
        params = params or {}
        keys = [cache_key(self.base_url, model, messages, None, params, i) for i in range(count)] if self.cache \
            else []
        found: list[tuple[Reply, Usage] | None] = [self.cache.get(key) for key in keys] if self.cache \
            else [None] * count
        for hit in found:
            if hit is not None:
                record(role, hit[1])
        missing = [i for i, hit in enumerate(found) if hit is None]
        for i, fetched in zip(missing, self._fetch_samples(model, messages, len(missing), params, role)):
            found[i] = fetched
            if self.cache:
                self.cache.put(keys[i], *fetched)
        samples = [hit for hit in found if hit is not None]  # every sample is filled by now
        usage = Usage()
        for _, share in samples:
            usage.add(share)
        return Completion([reply for reply, _ in samples], usage)

    def _fetch_samples(self, model: str, messages: list[Message], count: int, params: dict[str, Any],
                       role: str) -> list[tuple[Reply, Usage]]:
        if count == 0:
            return []
        got: list[tuple[Reply, Usage]] = []
        if count > 1 and self._n_supported.get(model, True):
            try:
                completion = self._request(model, messages, None, count, params, self.retry, role=role)
            except LLMRequestError as exc:
                # Only a refusal of `n` itself means "one sample per request"; a prompt too long for the context
                # window is too long for single requests as well.
                if isinstance(exc, ContextLengthError) or not _about_n(exc):
                    raise
                self._n_supported[model] = False
            else:
                replies = completion.replies[:count]
                self._n_supported[model] = len(replies) == count  # some servers ignore `n` and answer once
                got = list(zip(replies, _split(completion.usage, len(replies))))
        rest = count - len(got)
        if rest == 0:
            return got
        if rest == 1:
            completion = self._request(model, messages, None, 1, params, self.retry, role=role)
            return got + [(completion.replies[0], completion.usage)]
        # Each thread runs in a copy of this context, so its requests count in this episode's ledger.
        contexts = [contextvars.copy_context() for _ in range(rest)]
        with ThreadPoolExecutor(max_workers=rest) as pool:
            singles = list(pool.map(lambda context: context.run(
                self._request, model, messages, None, 1, params, self.retry, role=role), contexts))
        return got + [(c.replies[0], c.usage) for c in singles]

    def probe(self, model: str, params: dict[str, Any] | None = None, *, budget_s: float = 20.0,
              role: str = "model") -> None:
        """One small request, past the cache and with a short retry budget: does this endpoint serve ``model``
        with these parameters? Raises :class:`LLMRequestError` or :class:`LLMUnavailableError` if not."""
        self._request(model, [{"role": "user", "content": "Reply with the word OK."}], None, 1, params or {},
                      replace(_PROBE_RETRY, budget_s=min(budget_s, _PROBE_RETRY.budget_s)), role=role, probing=True)

    def probe_tools(self, model: str, params: dict[str, Any] | None = None, *, role: str = "agent") -> bool:
        """Whether the endpoint answers a request that asks for a tool call with one: a server that drops the tools
        (a chat template without tool support) answers in plain text instead. Asked as the run will ask (its own
        ``tool_choice``, else "auto"); a text answer to "auto" is asked once more with "required", where the
        server takes it (llama.cpp answers it with HTTP 500). Raises :class:`LLMError` when the request as the run
        sends it fails."""
        params = params or {}
        choice = params.get("tool_choice", "auto")
        if self._calls_tool(model, params, choice, _PROBE_RETRY, role):
            return True
        if choice != "auto":
            return False
        try:
            return self._calls_tool(model, params, "required", _NO_RETRY, role)
        except (LLMRequestError, LLMUnavailableError):
            return False

    def _calls_tool(self, model: str, params: dict[str, Any], choice: str, retry: RetryPolicy, role: str) -> bool:
        tool = {"type": "function", "function": {"name": "report_ok", "description": "Report that you are ready.",
                                                 "parameters": {"type": "object", "properties": {}}}}
        completion = self._request(model, [{"role": "user", "content": "Call the report_ok tool now."}], [tool], 1,
                                   {**params, "tool_choice": choice}, retry, role=role)
        return any(reply.tool_calls for reply in completion.replies)

    def _body(self, model: str, messages: list[Message], tools: list[dict[str, Any]] | None, n: int,
              params: dict[str, Any]) -> dict[str, Any]:
        # The body goes out as given: the SDK's typed request path re-walks every message on every call, which
        # cost more CPU than everything else in a run together. Unknown parameters (top_k for vLLM) pass as is.
        body = {**{k: v for k, v in params.items() if k != "extra_body"}, **params.get("extra_body", {}),
                "model": model, "messages": messages}
        if tools:
            body["tools"] = tools
            body.setdefault("tool_choice", "auto")  # llama.cpp, among others, ignores tools without it
            if body["tool_choice"] == "omit":
                del body["tool_choice"]
        else:
            body.pop("tool_choice", None)
        if n != 1:
            body["n"] = n
        if model in self._completion_tokens_param and "max_tokens" in body:
            body["max_completion_tokens"] = body.pop("max_tokens")
        return body

    def _request(self, model: str, messages: list[Message], tools: list[dict[str, Any]] | None, n: int,
                 params: dict[str, Any], retry: RetryPolicy, *, role: str = "model",
                 probing: bool = False) -> Completion:
        """One chat completion from the endpoint, retried through transient failures within the budget. A probe
        gives up at once on a refused connection or an unknown host, which retrying does not mend."""
        where = f"the {role} ({model} at {self.shown_url})"
        deadline = time.monotonic() + retry.budget_s
        attempt = 0
        same_5xx: tuple[str, int] = ("", 0)
        while True:
            body = self._body(model, messages, tools, n, params)
            room = self._room(role)
            if room is not None and room <= 0:
                raise self._out_of_time(role, where)
            # The task's time, when it is shorter than a request's, is this request's deadline.
            by_task = room is not None and room < self.timeout_s
            try:
                return self._send(body, bool(tools), room if by_task and room is not None else self.timeout_s,
                                  role, where)
            except openai.APIStatusError as exc:
                if self._takes_completion_tokens(exc, model, body):
                    continue
                same_5xx = (exc.message, same_5xx[1] + 1 if same_5xx[0] == exc.message else 1)
                failure = _status_failure(exc, where, same_5xx[1])
            except (openai.APITimeoutError, http.TimeoutException, _Deadline):
                if by_task:
                    raise self._out_of_time(role, where) from None
                failure = _Failure("timeout", f"no answer within the {self.timeout_s:g} s request timeout")
            except (openai.APIConnectionError, http.TransportError) as exc:
                reason = _connection_cause(exc)
                if probing and reason in ("connection refused", "host not found"):
                    raise LLMUnavailableError(f"cannot connect to {where}: {reason}") from None
                failure = _Failure("connection", f"cannot connect: {reason}")
            except (openai.APIResponseValidationError, json.JSONDecodeError, _Malformed) as exc:
                failure = _Failure("malformed", f"malformed response: {_brief(exc)}")
            except (ValueError, TypeError) as exc:
                # Raised before anything was sent: the body cannot be written (NaN, a lone surrogate). Sending it
                # again cannot help; the message never quotes the body.
                raise LLMRequestError(f"{where}: the request cannot be sent: {type(exc).__name__}: "
                                      f"{_brief(exc)}") from None
            self._back_off(failure, attempt, deadline, retry, role, where)
            attempt += 1

    def _send(self, body: dict[str, Any], tools_sent: bool, timeout_s: float, role: str, where: str) -> Completion:
        """One attempt, once the limiter has room for it; its usage is counted under ``role``."""
        waiting = time.monotonic()
        epoch = self.limiter.acquire()
        sent = time.monotonic()
        record_queued(role, sent - waiting)
        ok = throttled = False
        try:
            data = self._post(body, timeout_s)
            try:
                completion = read_completion(data, tools_sent)
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                raise _Malformed(f"{type(exc).__name__}: {_brief(exc)}") from None
            ok = True
        except openai.APIStatusError as exc:
            throttled = exc.status_code == 429
            raise
        finally:
            self.limiter.release(epoch, ok=ok, throttled=throttled)
        record(role, completion.usage)
        # Every role's requests, in one place (--debug): the roles' own lines say what they made of them.
        log.debug("[LLM] %s: %d message(s) answered in %.2f s, %d prompt and %d completion tokens", where,
                  len(body["messages"]), time.monotonic() - sent, completion.usage.prompt_tokens,
                  completion.usage.completion_tokens)
        return completion

    def _takes_completion_tokens(self, exc: openai.APIStatusError, model: str, body: dict[str, Any]) -> bool:
        """Whether ``exc`` is a reasoning model refusing ``max_tokens``: it is sent ``max_completion_tokens`` from
        now on."""
        if _retryable(exc.status_code) or not _refuses_max_tokens(exc) or model in self._completion_tokens_param \
                or "max_tokens" not in body:
            return False
        self._completion_tokens_param.add(model)
        return True

    def _back_off(self, failure: _Failure, attempt: int, deadline: float, retry: RetryPolicy, role: str,
                  where: str) -> None:
        """Wait before the next attempt, or raise :class:`LLMUnavailableError` when the retry budget is spent. The
        budget is used whole: a back-off that would pass it is cut short, for one last attempt at its end; only a
        server asking for more time than is left (Retry-After) is given up on before."""
        left = deadline - time.monotonic()
        if left <= 0 or (failure.retry_after is not None and failure.retry_after > left):
            raise LLMUnavailableError(f"{where} still failing after {attempt + 1} attempts within the "
                                      f"{retry.budget_s:g} s retry budget: {failure.text}")
        wait = min(retry.delay(attempt, failure.retry_after), left)
        record_retry(role, failure.cause)
        log.debug("[LLM] %s: %s; retry %d in %.1f s", where, failure.text, attempt + 1, wait)
        room = self._room(role)
        time.sleep(wait if room is None else min(wait, max(room, 0.0)))  # not past the task's time

    def _post(self, body: dict[str, Any], timeout_s: float) -> Any:
        """The JSON answer to one request, read within ``timeout_s`` of wall-clock time in all, else
        :class:`_Deadline`. The body is streamed in a daemon thread that stops at its first read past the deadline;
        the caller stops waiting at the deadline itself, so a server that stalls or trickles (even its headers)
        holds neither the caller nor, the thread being a daemon, the process's exit."""
        deadline = time.monotonic() + timeout_s
        outcome: list[Any] = []

        def read() -> None:
            try:
                response = self._client.post("/chat/completions", cast_to=http.Response, body=body, stream=True,
                                             options={"timeout": timeout_s})
                try:
                    data = bytearray()
                    for chunk in response.iter_bytes():
                        if time.monotonic() > deadline:
                            return
                        data += chunk
                finally:
                    response.close()
                outcome.append(bytes(data))
            except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
                outcome.append(exc)

        worker = threading.Thread(target=read, name="occubench-request", daemon=True)
        worker.start()
        worker.join(timeout_s)
        if not outcome:
            raise _Deadline
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        try:
            return loads(outcome[0])
        except ValueError as exc:  # not JSON, or nested too deep to read: an unusable answer
            raise _Malformed(f"the body is not JSON: {_brief(exc)}") from None

    def _room(self, role: str) -> float | None:
        """Seconds the episode's time limit leaves ``role``'s next request; None without a limit. The judge, after
        the episode, has one request timeout past the limit."""
        left = seconds_left()
        return None if left is None else left if role in EPISODE_ROLES else left + self.timeout_s

    @staticmethod
    def _out_of_time(role: str, where: str) -> Exception:
        if role in EPISODE_ROLES:  # stops the episode, which is judged on what it did
            return TaskLimitReached("max_seconds_per_task", f"the episode's time ran out while waiting for {where} "
                                    "(--max-seconds-per-task)")
        return LLMUnavailableError(f"{where} gave no answer within one request timeout past the task's time limit "
                                   "(--max-seconds-per-task)")


class _Malformed(Exception):
    """An answer that arrived but is not a chat completion."""


class _Deadline(Exception):
    """A request's whole time ran out before its answer was read."""


def _connection_cause(exc: BaseException) -> str:
    """What lies under the SDK's bare "Connection error.": a refused connection, an unknown host, or the lowest
    error's own words."""
    lowest: BaseException = exc
    seen = 0
    while (below := lowest.__cause__ or lowest.__context__) is not None and seen < 10:
        lowest, seen = below, seen + 1
        if isinstance(lowest, ConnectionRefusedError):
            return "connection refused"
        if isinstance(lowest, socket.gaierror):
            return "host not found"
    return _brief(lowest) or type(lowest).__name__


def _brief(exc: BaseException, limit: int = 300) -> str:
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + "..."


def _split(usage: Usage, count: int) -> list[Usage]:
    """Share one multi-sample request's usage among its samples: the prompt and the call go to sample 0."""
    each, extra = divmod(usage.completion_tokens, count)
    return [Usage(prompt_tokens=usage.prompt_tokens if i == 0 else 0, completion_tokens=each + (extra if i == 0 else 0),
                  calls=usage.calls if i == 0 else 0, cached_tokens=usage.cached_tokens if i == 0 else 0)
            for i in range(count)]


def create_client(api_key: str | None = None, base_url: str | None = None, **options: Any) -> LLMClient:
    """An :class:`LLMClient` for an OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, DashScope...)."""
    return LLMClient(api_key=api_key, base_url=base_url, **options)


def as_llm_client(client: ChatClient | openai.OpenAI) -> ChatClient:
    """Accept our client (or any :class:`ChatClient`) or a plain ``openai.OpenAI`` one (for code written against
    the SDK)."""
    return LLMClient(openai_client=client) if isinstance(client, openai.OpenAI) else client
