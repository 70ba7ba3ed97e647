"""What a failed request means: retried or not, after how long, and in what words. The client
(:mod:`occubench.llm.client`) retries what :func:`status_failure` and :func:`unreachable` call transient, with the
back-off of a :class:`RetryPolicy`, and raises the rest at once."""

from __future__ import annotations

import email.utils
import random
import re
import socket
import time
from dataclasses import dataclass

from occubench.errors import ContextLengthError, LLMRequestError
from occubench.llm.transport import StatusError

#: A 5xx repeating the same validation error this many times is a refusal, not an outage.
SAME_5XX_LIMIT = 3
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
PROBE_RETRY = RetryPolicy(budget_s=20.0, base_delay_s=0.5, max_delay_s=5.0)
NO_RETRY = RetryPolicy(budget_s=0.0)


def _retry_after(exc: StatusError) -> float | None:
    headers = exc.headers
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


def _is_context_overflow(exc: StatusError) -> bool:
    text = f"{exc.code} {exc.message}".lower()
    return any(phrase in text for phrase in ("context_length", "maximum context length", "context window",
                                             "context size", "too many tokens"))


def about_n(exc: LLMRequestError) -> bool:
    """Whether a rejection is about the ``n`` parameter (and so means: ask for one sample at a time)."""
    return exc.param == "n" or bool(re.search(r"(?<![\w.-])n\s*(>|=|must|is not|not supported|parameter)|"
                                              r"parameter\W+n\b|\bn\b.{0,20}\bsupported|multiple (choices|samples)",
                                              str(exc), re.IGNORECASE))


def refuses_max_tokens(exc: StatusError) -> bool:
    return exc.param == "max_tokens" or "max_completion_tokens" in exc.message


@dataclass(frozen=True)
class Failure:
    """A transient failure, to retry: its cause as the ledger counts retries, and what it was."""

    cause: str
    text: str
    #: Seconds the server asked to wait (Retry-After).
    retry_after: float | None = None


def retryable(status: int) -> bool:
    return status == 429 or status >= 500 or status in (408, 409)


def status_failure(exc: StatusError, where: str, repeats: int) -> Failure:
    """An HTTP error to retry; raised as :class:`LLMRequestError` if retrying cannot mend it: a refusal, or a 5xx
    that has said the same validation error ``repeats`` times in a row."""
    status = exc.status_code
    if not retryable(status):
        error = ContextLengthError if _is_context_overflow(exc) else LLMRequestError
        raise error(f"{where} rejected the request: HTTP {status}: {exc.message}", status, exc.param) from None
    if status >= 500 and repeats >= SAME_5XX_LIMIT and _VALIDATION.search(exc.message):
        raise LLMRequestError(f"{where} refused the request {repeats} times with the same error, though as "
                              f"HTTP {status}: {exc.message}", status) from None
    return Failure("rate_limited" if status == 429 else "server_error", f"HTTP {status}: {exc.message}",
                    _retry_after(exc))


def _below(exc: BaseException) -> list[BaseException]:
    """The exceptions under ``exc`` (its causes or contexts), nearest first, at most ten."""
    found: list[BaseException] = []
    while (exc := exc.__cause__ or exc.__context__) is not None and len(found) < 10:  # type: ignore[assignment]
        found.append(exc)
    return found


def unreachable(exc: BaseException) -> str | None:
    """"connection refused" or "unknown host" when that lies under ``exc``; else None."""
    for lower in _below(exc):
        if isinstance(lower, ConnectionRefusedError):
            return "connection refused"
        if isinstance(lower, socket.gaierror):
            return "unknown host"
    return None


def connection_cause(exc: BaseException) -> str:
    """What lies under a bare "Connection error.": a refused connection, an unknown host, or the lowest error's own
    words."""
    lowest = ([exc] + _below(exc))[-1]
    return unreachable(exc) or brief(lowest) or type(lowest).__name__


def brief(exc: BaseException, limit: int = 300) -> str:
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + "..."
