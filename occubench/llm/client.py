"""The one client every role (agent, world model, verifier, NPC) uses to reach an OpenAI-compatible endpoint.

Retries live here and nowhere else: transient failures (429 honouring Retry-After, 5xx, timeouts, dropped
connections) are retried with jittered exponential backoff until a per-call time budget runs out, then raised as
:class:`LLMUnavailableError` — an infrastructure error, never an agent failure. Permanent rejections (400, 401,
404...) raise :class:`LLMRequestError` at once.
"""

from __future__ import annotations

import email.utils
import inspect
import json
import random
import time
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any

import openai

from occubench.errors import ContextLengthError, LLMRequestError, LLMUnavailableError

Message = dict[str, Any]

# Local servers (vLLM, Ollama) need no key, but the SDK refuses to start without one.
_NO_KEY = "no-key"


@dataclass
class Usage:
    """Tokens and requests spent; one per role per task in the results."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.calls += other.calls

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class ToolCallRequest:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Reply:
    """One choice of a chat completion."""

    content: str | None
    tool_calls: tuple[ToolCallRequest, ...] = ()
    finish_reason: str | None = None

    def to_message(self) -> Message:
        """The assistant message to append to the conversation."""
        message: Message = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message


@dataclass(frozen=True)
class Completion:
    replies: list[Reply]
    usage: Usage = field(default_factory=Usage)


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


@cache
def _sdk_parameters() -> frozenset[str]:
    """Keyword arguments the installed SDK's ``chat.completions.create`` accepts by name."""
    from openai.resources.chat.completions import Completions

    return frozenset(inspect.signature(Completions.create).parameters) - {"self"}


def split_params(params: dict[str, Any]) -> dict[str, Any]:
    """Pass parameters the SDK knows by name and send the rest (``top_k`` for vLLM, say) in ``extra_body``."""
    known = {k: v for k, v in params.items() if k in _sdk_parameters()}
    extra = {k: v for k, v in params.items() if k not in _sdk_parameters()}
    if extra:
        known["extra_body"] = {**extra, **known.get("extra_body", {})}
    return known


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
    ) -> None:
        # The SDK's own retries are off: one retry policy, here, with a time budget the SDK does not offer.
        self._client = (openai_client.with_options(max_retries=0) if openai_client is not None else
                        openai.OpenAI(api_key=api_key or _NO_KEY, base_url=base_url, timeout=timeout_s,
                                      max_retries=0))
        self.retry = retry or RetryPolicy()

    def with_retry(self, retry: RetryPolicy) -> LLMClient:
        """The same endpoint and connections under another retry policy."""
        clone = object.__new__(LLMClient)
        clone._client, clone.retry = self._client, retry
        return clone

    @property
    def base_url(self) -> str:
        return str(self._client.base_url)

    def chat(
        self,
        model: str,
        messages: list[Message],
        *,
        tools: list[dict[str, Any]] | None = None,
        n: int = 1,
        params: dict[str, Any] | None = None,
    ) -> Completion:
        """One chat completion, retried through transient failures."""
        kwargs = split_params(dict(params or {}))
        if tools:
            kwargs["tools"] = tools
        if n != 1:
            kwargs["n"] = n
        deadline = time.monotonic() + self.retry.budget_s
        attempt = 0
        while True:
            retry_after: float | None = None
            try:
                response = self._client.chat.completions.create(model=model, messages=messages, **kwargs)
                if response.choices:
                    return _completion(response)
                failure = "the endpoint returned no choices"
            except openai.APIStatusError as exc:
                if exc.status_code != 429 and exc.status_code < 500 and exc.status_code not in (408, 409):
                    error = ContextLengthError if _is_context_overflow(exc) else LLMRequestError
                    raise error(f"{self.base_url} (model {model}) rejected the request: HTTP {exc.status_code}: "
                                f"{exc.message}", exc.status_code) from exc
                retry_after = _retry_after(exc)
                failure = f"HTTP {exc.status_code}: {exc.message}"
            except (openai.APIConnectionError, openai.APIResponseValidationError) as exc:
                failure = f"{type(exc).__name__}: {exc}"
            except json.JSONDecodeError as exc:
                failure = f"unparsable response body: {exc}"
            wait = self.retry.delay(attempt, retry_after)
            if time.monotonic() + wait > deadline:
                raise LLMUnavailableError(f"{self.base_url} (model {model}) still failing after {attempt + 1} "
                                          f"attempts within the {self.retry.budget_s:g} s retry budget: {failure}")
            time.sleep(wait)
            attempt += 1


def _completion(response: Any) -> Completion:
    replies = []
    for choice in response.choices:
        message = choice.message
        calls = tuple(
            ToolCallRequest(id=c.id, name=c.function.name, arguments=c.function.arguments or "")
            for c in (message.tool_calls or []) if getattr(c, "function", None) is not None
        )
        replies.append(Reply(content=message.content, tool_calls=calls, finish_reason=choice.finish_reason))
    usage = response.usage
    return Completion(replies=replies, usage=Usage(
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        calls=1,
    ))


def create_client(api_key: str | None = None, base_url: str | None = None, **options: Any) -> LLMClient:
    """An :class:`LLMClient` for an OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, DashScope...)."""
    return LLMClient(api_key=api_key, base_url=base_url, **options)


def as_llm_client(client: LLMClient | openai.OpenAI) -> LLMClient:
    """Accept either our client or a plain ``openai.OpenAI`` one (for code written against the SDK)."""
    return client if isinstance(client, LLMClient) else LLMClient(openai_client=client)
