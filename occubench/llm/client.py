"""The one client every role (agent, world model, verifier, NPC) uses to reach an OpenAI-compatible endpoint.

Retries live here and nowhere else: transient failures (429 honouring Retry-After, 5xx, timeouts, dropped
connections) are retried with jittered exponential backoff until a per-call time budget runs out, then raised as
:class:`LLMUnavailableError` — an infrastructure error, never an agent failure. Permanent rejections (400, 401,
404...) raise :class:`LLMRequestError` at once.
"""

from __future__ import annotations

import email.utils
import json
import random
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import openai

from occubench._jsonsafe import clean_text
from occubench._redact import redact_url
from occubench.errors import ContextLengthError, LLMRequestError, LLMUnavailableError
from occubench.llm.cache import ResponseCache, cache_key
from occubench.llm.limiter import AdaptiveLimiter
from occubench.llm.types import Completion, Message, Reply, ToolCallRequest, Usage

# Local servers (vLLM, Ollama) need no key, but the SDK refuses to start without one.
_NO_KEY = "no-key"


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
    return "context_length" in text or "maximum context length" in text or "context window" in text


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
        cache: ResponseCache | None = None,
    ) -> None:
        # The SDK's own retries are off: one retry policy, here, with a time budget the SDK does not offer.
        self._client = (openai_client.with_options(max_retries=0) if openai_client is not None else
                        openai.OpenAI(api_key=api_key or _NO_KEY, base_url=base_url, timeout=timeout_s,
                                      max_retries=0))
        self.retry = retry or RetryPolicy()
        self.limiter = AdaptiveLimiter(max_in_flight, adaptive=adaptive)
        self.cache = cache
        self._n_supported: dict[str, bool] = {}

    @property
    def base_url(self) -> str:
        return str(self._client.base_url)

    @property
    def shown_url(self) -> str:
        """The endpoint as messages show it: a password or a key in the URL masked."""
        return redact_url(self.base_url) or ""

    def chat(self, model: str, messages: list[Message], *, tools: list[dict[str, Any]] | None = None,
             params: dict[str, Any] | None = None, sample: int = 0) -> Completion:
        """One reply: from the cache when it holds this request's ``sample``, else from the endpoint."""
        params = params or {}
        key = cache_key(self.base_url, model, messages, tools, params, sample) if self.cache else ""
        if self.cache and (hit := self.cache.get(key)):
            return Completion([hit[0]], hit[1])
        completion = self._request(model, messages, tools, 1, params, self.retry)
        if self.cache:
            self.cache.put(key, completion.replies[0], completion.usage)
        return completion

    def samples(self, model: str, messages: list[Message], count: int, *,
                params: dict[str, Any] | None = None) -> Completion:
        """``count`` independent replies to the same messages (judge votes), as samples 0..count-1.

        Uncached samples come from one request with ``n`` where the endpoint supports it — the prompt is paid
        once — else from concurrent single requests. Support is probed on first use and remembered per model.
        """
        params = params or {}
        keys = [cache_key(self.base_url, model, messages, None, params, i) for i in range(count)] if self.cache \
            else []
        found: list[tuple[Reply, Usage] | None] = [self.cache.get(key) for key in keys] if self.cache \
            else [None] * count
        missing = [i for i, hit in enumerate(found) if hit is None]
        for i, fetched in zip(missing, self._fetch_samples(model, messages, len(missing), params)):
            found[i] = fetched
            if self.cache:
                self.cache.put(keys[i], *fetched)
        samples = [hit for hit in found if hit is not None]  # every sample is filled by now
        usage = Usage()
        for _, share in samples:
            usage.add(share)
        return Completion([reply for reply, _ in samples], usage)

    def _fetch_samples(self, model: str, messages: list[Message], count: int,
                       params: dict[str, Any]) -> list[tuple[Reply, Usage]]:
        if count == 0:
            return []
        got: list[tuple[Reply, Usage]] = []
        if count > 1 and self._n_supported.get(model, True):
            try:
                completion = self._request(model, messages, None, count, params, self.retry)
            except LLMRequestError as exc:
                if exc.status_code not in (400, 422):
                    raise
                self._n_supported[model] = False  # the endpoint rejects `n`
            else:
                replies = completion.replies[:count]
                self._n_supported[model] = len(replies) == count  # some servers ignore `n` and answer once
                got = list(zip(replies, _split(completion.usage, len(replies))))
        rest = count - len(got)
        if rest == 0:
            return got
        if rest == 1:
            completion = self._request(model, messages, None, 1, params, self.retry)
            return got + [(completion.replies[0], completion.usage)]
        with ThreadPoolExecutor(max_workers=rest) as pool:
            singles = list(pool.map(lambda _: self._request(model, messages, None, 1, params, self.retry),
                                    range(rest)))
        return got + [(c.replies[0], c.usage) for c in singles]

    def probe(self, model: str, params: dict[str, Any] | None = None, *, budget_s: float = 20.0) -> None:
        """One small request, past the cache and with a short retry budget: does this endpoint serve ``model``
        with these parameters? Raises :class:`LLMRequestError` or :class:`LLMUnavailableError` if not."""
        self._request(model, [{"role": "user", "content": "Reply with the word OK."}], None, 1, params or {},
                      RetryPolicy(budget_s=min(budget_s, 20.0), base_delay_s=0.5, max_delay_s=5.0), probing=True)

    def _request(self, model: str, messages: list[Message], tools: list[dict[str, Any]] | None, n: int,
                 params: dict[str, Any], retry: RetryPolicy, *, probing: bool = False) -> Completion:
        """One chat completion from the endpoint, retried through transient failures within the budget. A probe
        gives up at once on a refused connection or an unknown host, which retrying does not mend."""
        # The body goes out as given: the SDK's typed request path re-walks every message on every call, which
        # cost more CPU than everything else in a run together. Unknown parameters (top_k for vLLM) pass as is.
        body = {**{k: v for k, v in params.items() if k != "extra_body"}, **params.get("extra_body", {}),
                "model": model, "messages": messages}
        if tools:
            body["tools"] = tools
        if n != 1:
            body["n"] = n
        deadline = time.monotonic() + retry.budget_s
        attempt = 0
        while True:
            retry_after: float | None = None
            epoch = self.limiter.acquire()
            ok = throttled = False
            where = f"{self.shown_url} (model {model})"
            try:
                completion = _completion(self._client.post("/chat/completions", cast_to=object, body=body))
                ok = True
                return completion
            except openai.APIStatusError as exc:
                if exc.status_code != 429 and exc.status_code < 500 and exc.status_code not in (408, 409):
                    error = ContextLengthError if _is_context_overflow(exc) else LLMRequestError
                    raise error(f"{where} rejected the request: HTTP {exc.status_code}: {exc.message}",
                                exc.status_code) from exc
                throttled = exc.status_code == 429
                retry_after = _retry_after(exc)
                failure = f"HTTP {exc.status_code}: {exc.message}"
            except openai.APITimeoutError:
                failure = f"no answer within the {self._client.timeout} s request timeout"
            except openai.APIConnectionError as exc:
                cause = _connection_cause(exc)
                if probing and cause in ("connection refused", "host not found"):
                    raise LLMUnavailableError(f"cannot connect to {where}: {cause}") from None
                failure = f"cannot connect: {cause}"
            except (openai.APIResponseValidationError, json.JSONDecodeError, KeyError, AttributeError) as exc:
                failure = f"malformed response: {type(exc).__name__}: {exc}"
            except (ValueError, TypeError) as exc:
                # Raised before anything was sent: the body cannot be written (NaN, a lone surrogate). Sending it
                # again cannot help; the message never quotes the body.
                raise LLMRequestError(f"{where}: the request cannot be sent: {type(exc).__name__}: "
                                      f"{_brief(exc)}") from None
            finally:
                self.limiter.release(epoch, ok=ok, throttled=throttled, retry_after=retry_after)
            wait = retry.delay(attempt, retry_after)
            if time.monotonic() + wait > deadline:
                raise LLMUnavailableError(f"{where} still failing after {attempt + 1} attempts within the "
                                          f"{retry.budget_s:g} s retry budget: {failure}")
            time.sleep(wait)
            attempt += 1


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
                  calls=usage.calls if i == 0 else 0) for i in range(count)]


def _text(value: Any) -> str | None:
    # Lone surrogates (a reply's "\ud800") are replaced where replies enter: past here every text encodes as UTF-8.
    return None if value is None else clean_text(value if isinstance(value, str) else json.dumps(value))


def _completion(data: Any) -> Completion:
    """Read a chat-completion JSON body; anything malformed raises (and is retried as a transient failure)."""
    replies = []
    for choice in data["choices"]:
        message = choice["message"]
        calls = tuple(ToolCallRequest(id=_text(c.get("id")) or "", name=_text(c["function"]["name"]) or "",
                                      arguments=_text(c["function"].get("arguments")) or "")
                      for c in message.get("tool_calls") or [] if c.get("function"))
        replies.append(Reply(content=_text(message.get("content")), tool_calls=calls,
                             finish_reason=_text(choice.get("finish_reason"))))
    if not replies:
        raise ValueError("the endpoint returned no choices")
    usage = data.get("usage") or {}
    return Completion(replies=replies, usage=Usage(prompt_tokens=usage.get("prompt_tokens") or 0,
                                                   completion_tokens=usage.get("completion_tokens") or 0, calls=1))


def create_client(api_key: str | None = None, base_url: str | None = None, **options: Any) -> LLMClient:
    """An :class:`LLMClient` for an OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, DashScope...)."""
    return LLMClient(api_key=api_key, base_url=base_url, **options)


def as_llm_client(client: LLMClient | openai.OpenAI) -> LLMClient:
    """Accept either our client or a plain ``openai.OpenAI`` one (for code written against the SDK)."""
    return client if isinstance(client, LLMClient) else LLMClient(openai_client=client)
