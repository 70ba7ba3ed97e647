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

Async at heart: an episode awaits its requests on an event loop, and the bytes travel by
:mod:`occubench.llm.transport` (aiohttp with the SDK's headers and error mapping), written and read with orjson.

Time is bounded in wall-clock terms: ``timeout_s`` is the whole of one request (the SDK's timeout bounds each read
only, so a server trickling a byte at a time would hold a request for ever), and within an episode with
``--max-seconds-per-task`` a request of the episode's roles ends when the episode's time does. What a model sends is
read with bounded nesting (:func:`occubench.llm.parsing.loads`): a body too deep to read is a malformed answer.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import sys
import time
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

import orjson

from occubench import telemetry
from occubench.errors import ContextLengthError, LLMRequestError, LLMUnavailableError, TaskLimitReached
from occubench.llm.cache import Cache, cache_key
from occubench.llm.ledger import EPISODE_ROLES, check_limits, record, record_queued, record_retry, seconds_left
from occubench.llm.limiter import AdaptiveLimiter, Limiter
from occubench.llm.model import ChatClient
from occubench.llm.parsing import loads_body
from occubench.llm.response import read_completion
from occubench.llm.retry import (
    NO_RETRY,
    PROBE_RETRY,
    Failure,
    RetryPolicy,
    about_n,
    brief,
    connection_cause,
    refuses_max_tokens,
    retryable,
    status_failure,
    unreachable,
)
from occubench.llm.transport import (
    TIMEOUTS,
    TRANSPORT_ERRORS,
    LeanTransport,
    SDKTransport,
    StatusError,
    Transport,
    endpoint_url,
    openai_sdk,
)
from occubench.llm.types import Completion, Message, Reply, Usage
from occubench.util.aio import close_at_exit, run_sync
from occubench.util.redact import Redactor, environment_secrets, redact_url, url_secrets

if TYPE_CHECKING:
    import openai

log = logging.getLogger("occubench")

# Local servers (vLLM, Ollama) need no key, but the SDK refuses to start without one.
_NO_KEY = "no-key"
class LLMClient:
    """A client for one OpenAI-compatible endpoint, safe to share across episodes, threads and event loops (to reuse
    connections, share it). Async at heart (:meth:`achat`, :meth:`asamples`); the synchronous methods run those on
    the harness loop (:func:`occubench.util.aio.run_sync`). One keep-alive pool per event loop, sized to
    ``max_in_flight``; the raw answer is read once (the SDK's typed models are skipped: they cost more CPU than
    the rest of a run)."""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout_s: float = 300.0,
        retry: RetryPolicy | None = None,
        openai_client: openai.OpenAI | openai.AsyncOpenAI | None = None,
        max_in_flight: int = 32,
        adaptive: bool = True,
        cache: Cache | None = None,
        limiter: Limiter | None = None,
    ) -> None:
        given: openai.AsyncOpenAI | None = None
        if openai_client is not None:
            import openai  # only for a client the user built: our own requests need none of the SDK

            if isinstance(openai_client, openai.AsyncOpenAI):
                given = openai_client.with_options(max_retries=0)
            else:  # a synchronous SDK client: its endpoint and key, asked asynchronously
                api_key, base_url = openai_client.api_key, str(openai_client.base_url)
        self._given = given
        self._api_key = api_key or _NO_KEY
        self._base_url = str(given.base_url) if given else endpoint_url(base_url)
        # What goes out to a model is masked as what is written: a trajectory can hold a key an agent program
        # printed (it inherits the environment), and judges, world models and colleagues read trajectories.
        self._redactor = Redactor([given.api_key if given else api_key, *url_secrets(self._base_url),
                                   *environment_secrets()])
        # Credentials in the URL go as basic auth, which the SDK's own transport sends: a missing SDK is said now,
        # not at the first request.
        self._sdk = openai_sdk(f"the endpoint {self.shown_url} (credentials in its URL)") \
            if given is None and urlsplit(self._base_url).password else None
        self.timeout_s = timeout_s
        self.max_in_flight = max_in_flight
        # One transport per event loop: a connection pool belongs to the loop that opened it. A client the user
        # gave is used as given, on whichever loop they use it.
        self._transports: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Transport] = \
            weakref.WeakKeyDictionary()
        self.retry = retry or RetryPolicy()
        # A given limiter (one a whole cluster shares) replaces the client's own; max_in_flight and adaptive are
        # then its business.
        self.limiter: Limiter = limiter or AdaptiveLimiter(max_in_flight, adaptive=adaptive)
        self.cache = cache
        self._n_supported: dict[str, bool] = {}
        #: Models that refused ``max_tokens`` and take ``max_completion_tokens`` instead.
        self._completion_tokens_param: set[str] = set()
        #: Models whose endpoint refused ``return_token_ids`` (vLLM's): asked for logprobs only.
        self._no_token_ids: set[str] = set()

    def _transport(self) -> Transport:
        loop = asyncio.get_running_loop()
        if (transport := self._transports.get(loop)) is None:
            if self._given is not None:
                transport = SDKTransport(self._given)
            elif self._sdk is not None:
                # The SDK's own retries are off: one retry policy, here, with a time budget the SDK does not offer.
                transport = SDKTransport(self._sdk.AsyncOpenAI(api_key=self._api_key, base_url=self._base_url,
                                                               timeout=self.timeout_s, max_retries=0))
            else:
                transport = LeanTransport(self._base_url, self._api_key, self.max_in_flight)
            if self._given is None:
                close_at_exit(transport.close)
            self._transports[loop] = transport
        return transport

    @property
    def base_url(self) -> str:
        return self._base_url

    @property
    def shown_url(self) -> str:
        """The endpoint as messages show it: a password or a key in the URL masked."""
        return redact_url(self.base_url) or ""

    def chat(self, model: str, messages: list[Message], *, tools: list[dict[str, Any]] | None = None,
             params: dict[str, Any] | None = None, sample: int = 0, role: str = "model") -> Completion:
        """:meth:`achat`, for synchronous code."""
        return run_sync(self.achat(model, messages, tools=tools, params=params, sample=sample, role=role))

    def samples(self, model: str, messages: list[Message], count: int, *,
                params: dict[str, Any] | None = None, role: str = "model") -> Completion:
        """:meth:`asamples`, for synchronous code."""
        return run_sync(self.asamples(model, messages, count, params=params, role=role))

    async def achat(self, model: str, messages: list[Message], *, tools: list[dict[str, Any]] | None = None,
                    params: dict[str, Any] | None = None, sample: int = 0, role: str = "model") -> Completion:
        """One reply: from the cache when it holds this request's ``sample``, else from the endpoint. Raises
        :class:`TaskLimitReached` instead when the episode's agent is past its limits."""
        check_limits(role)
        params = params or {}
        key = cache_key(self.base_url, model, messages, tools, params, sample) if self.cache else ""
        if self.cache and (hit := self.cache.get(key)):
            record(role, hit[1])
            return Completion([hit[0]], hit[1])
        completion = await self._request(model, messages, tools, 1, params, self.retry, role=role)
        if self.cache:
            self.cache.put(key, completion.replies[0], completion.usage)
        return completion

    async def asamples(self, model: str, messages: list[Message], count: int, *,
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
        for i, fetched in zip(missing, await self._fetch_samples(model, messages, len(missing), params, role)):
            found[i] = fetched
            if self.cache:
                self.cache.put(keys[i], *fetched)
        samples = [hit for hit in found if hit is not None]  # every sample is filled by now
        usage = Usage()
        for _, share in samples:
            usage.add(share)
        return Completion([reply for reply, _ in samples], usage)

    async def _fetch_samples(self, model: str, messages: list[Message], count: int, params: dict[str, Any],
                             role: str) -> list[tuple[Reply, Usage]]:
        if count == 0:
            return []
        got: list[tuple[Reply, Usage]] = []
        if count > 1 and self._n_supported.get(model, True):
            try:
                completion = await self._request(model, messages, None, count, params, self.retry, role=role)
            except LLMRequestError as exc:
                # Only a refusal of `n` itself means "one sample per request"; a prompt too long for the context
                # window is too long for single requests as well.
                if isinstance(exc, ContextLengthError) or not about_n(exc):
                    raise
                self._n_supported[model] = False
            else:
                replies = completion.replies[:count]
                self._n_supported[model] = len(replies) == count  # some servers ignore `n` and answer once
                got = list(zip(replies, _split(completion.usage, len(replies))))
        # The rest concurrently; each task runs in a copy of this context, so its requests count in this ledger.
        singles = await asyncio.gather(*(self._request(model, messages, None, 1, params, self.retry, role=role)
                                         for _ in range(count - len(got))))
        return got + [(c.replies[0], c.usage) for c in singles]

    def probe(self, model: str, params: dict[str, Any] | None = None, *, budget_s: float = 20.0,
              role: str = "model") -> None:
        """:meth:`aprobe`, for synchronous code."""
        run_sync(self.aprobe(model, params, budget_s=budget_s, role=role))

    async def aprobe(self, model: str, params: dict[str, Any] | None = None, *, budget_s: float = 20.0,
                     role: str = "model") -> None:
        """One small request, past the cache and with a short retry budget: does this endpoint serve ``model``
        with these parameters? Raises :class:`LLMRequestError` or :class:`LLMUnavailableError` if not."""
        await self._request(model, [{"role": "user", "content": "Reply with the word OK."}], None, 1, params or {},
                            replace(PROBE_RETRY, budget_s=min(budget_s, PROBE_RETRY.budget_s)), role=role,
                            probing=True)

    def probe_tools(self, model: str, params: dict[str, Any] | None = None, *, role: str = "agent") -> bool:
        """:meth:`aprobe_tools`, for synchronous code."""
        return run_sync(self.aprobe_tools(model, params, role=role))

    async def aprobe_tools(self, model: str, params: dict[str, Any] | None = None, *, role: str = "agent") -> bool:
        """Whether the endpoint answers a request that asks for a tool call with one: a server that drops the tools
        (a chat template without tool support) answers in plain text instead. Asked as the run will ask (its own
        ``tool_choice``, else "auto"); a text answer to "auto" is asked once more with "required", where the
        server takes it (llama.cpp answers it with HTTP 500). Raises :class:`LLMError` when the request as the run
        sends it fails."""
        params = params or {}
        choice = params.get("tool_choice", "auto")
        if await self._calls_tool(model, params, choice, PROBE_RETRY, role):
            return True
        if choice != "auto":
            return False
        try:
            return await self._calls_tool(model, params, "required", NO_RETRY, role)
        except (LLMRequestError, LLMUnavailableError):
            return False

    async def _calls_tool(self, model: str, params: dict[str, Any], choice: str, retry: RetryPolicy,
                          role: str) -> bool:
        tool = {"type": "function", "function": {"name": "report_ok", "description": "Report that you are ready.",
                                                 "parameters": {"type": "object", "properties": {}}}}
        completion = await self._request(model, [{"role": "user", "content": "Call the report_ok tool now."}], [tool],
                                         1, {**params, "tool_choice": choice}, retry, role=role, probing=True)
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
        if model in self._no_token_ids:
            body.pop("return_token_ids", None)
        return body

    async def _request(self, model: str, messages: list[Message], tools: list[dict[str, Any]] | None, n: int,
                       params: dict[str, Any], retry: RetryPolicy, *, role: str = "model",
                       probing: bool = False) -> Completion:
        """One chat completion from the endpoint (a span of the episode's trace when traced), retried through
        transient failures within the budget. A probe gives up at once on a refused connection or an unknown host,
        which retrying does not mend."""
        with telemetry.chat(role, model, messages, n) as span:
            completion = await self._attempts(model, messages, tools, n, params, retry, role, probing)
            span.done(completion, self._base_url)  # its host and port only
            return completion

    async def _attempts(self, model: str, messages: list[Message], tools: list[dict[str, Any]] | None, n: int,
                        params: dict[str, Any], retry: RetryPolicy, role: str, probing: bool) -> Completion:
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
                return await self._send(body, bool(tools), room if by_task and room is not None else self.timeout_s,
                                        role, where)
            except StatusError as exc:
                if self._adapts(exc, model, body):
                    continue
                same_5xx = (exc.message, same_5xx[1] + 1 if same_5xx[0] == exc.message else 1)
                failure = status_failure(exc, where, same_5xx[1])
            except TRANSPORT_ERRORS as exc:  # timeouts among them
                failure = self._transport_failure(exc, by_task, probing, role, where)
            except (json.JSONDecodeError, _Malformed) as exc:
                failure = Failure("malformed", f"malformed response: {brief(exc)}")
            except (ValueError, TypeError) as exc:
                # Raised before anything was sent: the body cannot be written (NaN, a lone surrogate). Sending it
                # again cannot help; the message never quotes the body.
                raise LLMRequestError(f"{where}: the request cannot be sent: {type(exc).__name__}: "
                                      f"{brief(exc)}") from None
            await self._back_off(failure, attempt, deadline, retry, role, where)
            attempt += 1

    async def _send(self, body: dict[str, Any], tools_sent: bool, timeout_s: float, role: str,
                    where: str) -> Completion:
        """One attempt, once the limiter has room for it; its usage is counted under ``role``."""
        # Before a slot is taken: a body that cannot be written is refused at once.
        content = self._redactor.body(_encode(body))
        waiting = time.monotonic()
        epoch = await self.limiter.acquire()
        sent = time.monotonic()
        record_queued(role, sent - waiting)
        ok = throttled = False
        try:
            data = await self._post(content, timeout_s)
            try:
                completion = read_completion(data, tools_sent)
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                raise _Malformed(f"{type(exc).__name__}: {brief(exc)}") from None
            ok = True
        except StatusError as exc:
            throttled = exc.status_code == 429
            raise
        finally:
            self.limiter.release(epoch, ok=ok, throttled=throttled)
        record(role, completion.usage)
        # Every role's requests, in one place (--debug): the roles' own lines say what they made of them.
        if log.isEnabledFor(logging.DEBUG):
            log.debug("[LLM] %s: %d message(s) answered in %.2f s, %d prompt and %d completion tokens", where,
                      len(body["messages"]), time.monotonic() - sent, completion.usage.prompt_tokens,
                      completion.usage.completion_tokens)
        return completion

    def _transport_failure(self, exc: BaseException, by_task: bool, probing: bool, role: str, where: str) -> Failure:
        """A timeout or a failed connection, to retry. A timeout within the task's time ends the episode; a probe
        gives up at once on a refused connection or an unknown host. (aiohttp's refused connection reaches us as a
        connect *timeout*: what lies under it decides.)"""
        reason = unreachable(exc)
        if reason is None and isinstance(exc, TIMEOUTS):
            if by_task:
                raise self._out_of_time(role, where) from None
            return Failure("timeout", f"no answer within the {self.timeout_s:g} s request timeout")
        reason = reason or connection_cause(exc)
        if probing and reason in ("connection refused", "unknown host"):
            raise LLMUnavailableError(f"cannot connect to {where}: {reason}") from None
        return Failure("connection", f"cannot connect: {reason}")

    def _adapts(self, exc: StatusError, model: str, body: dict[str, Any]) -> bool:
        """Whether ``exc`` refuses a parameter that has a stand-in, sent from now on: a reasoning model refusing
        ``max_tokens`` gets ``max_completion_tokens``; an endpoint refusing ``return_token_ids`` (all but vLLM's)
        is asked for logprobs alone. Another request may have learnt it meanwhile: what counts is what this one
        sent."""
        if retryable(exc.status_code):
            return False
        if "max_tokens" in body and refuses_max_tokens(exc):
            self._completion_tokens_param.add(model)
            return True
        if "return_token_ids" in body and (exc.param == "return_token_ids" or "return_token_ids" in exc.message):
            self._no_token_ids.add(model)
            return True
        return False

    async def _back_off(self, failure: Failure, attempt: int, deadline: float, retry: RetryPolicy, role: str,
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
        await asyncio.sleep(wait if room is None else min(wait, max(room, 0.0)))  # not past the task's time

    async def _post(self, content: bytes, timeout_s: float) -> Any:
        """The JSON answer to one request, read within ``timeout_s`` of wall-clock time in all."""
        data = await self._transport().post(content, timeout_s)
        try:
            return loads_body(data)
        except ValueError as exc:  # not JSON, or nested too deep to read: an unusable answer
            raise _Malformed(f"the body is not JSON: {brief(exc)}") from None

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


def _encode(body: dict[str, Any]) -> bytes:
    """The request body as JSON bytes: ``ValueError`` or ``TypeError`` for what cannot be written (a lone
    surrogate, NaN). orjson would write NaN as ``null``, silently changing a parameter: the parameters and tools,
    the only places a float can be, are checked first (messages are text)."""
    _check_finite(body.get("tools"))
    _check_finite({key: value for key, value in body.items() if key not in ("messages", "tools")})
    try:
        return orjson.dumps(body)
    except TypeError:  # orjson refuses what json may still write (a 100-digit integer); the rest fails there too
        return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _check_finite(value: Any) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value} is not a JSON number")
    if isinstance(value, dict):
        for item in value.values():
            _check_finite(item)
    elif isinstance(value, list):
        for item in value:
            _check_finite(item)


class _Malformed(Exception):
    """An answer that arrived but is not a chat completion."""


def _split(usage: Usage, count: int) -> list[Usage]:
    """Share one multi-sample request's usage among its samples: the prompt and the call go to sample 0."""
    each, extra = divmod(usage.completion_tokens, count)
    return [Usage(prompt_tokens=usage.prompt_tokens if i == 0 else 0, completion_tokens=each + (extra if i == 0 else 0),
                  calls=usage.calls if i == 0 else 0, cached_tokens=usage.cached_tokens if i == 0 else 0)
            for i in range(count)]


def create_client(api_key: str | None = None, base_url: str | None = None, **options: Any) -> LLMClient:
    """An :class:`LLMClient` for an OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, DashScope...)."""
    return LLMClient(api_key=api_key, base_url=base_url, **options)


def as_llm_client(client: ChatClient | openai.OpenAI | openai.AsyncOpenAI) -> ChatClient:
    """Accept our client (or any :class:`ChatClient`) or a plain ``openai.OpenAI`` or ``AsyncOpenAI`` one (for
    code written against the SDK)."""
    sdk = sys.modules.get("openai")  # a client of the SDK's means the SDK is loaded: never imported just to ask
    if sdk is not None and isinstance(client, (sdk.OpenAI, sdk.AsyncOpenAI)):
        return LLMClient(openai_client=client)
    return cast(ChatClient, client)
