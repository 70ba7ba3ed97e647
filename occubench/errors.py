"""Exceptions raised by occubench. Each names what went wrong and where, so a user can act on it."""

from __future__ import annotations

from typing import Any


class OccuBenchError(Exception):
    """Base class: an error the CLI reports as one clear line (exit code 2)."""


class ConfigError(OccuBenchError):
    """Bad user input: a missing or garbled file, line or argument."""


class DataNotFoundError(ConfigError):
    """The benchmark data is not where the run looks for it."""


class LLMError(OccuBenchError):
    """A request to a model endpoint failed."""


class LLMUnavailableError(LLMError):
    """Transient failures (rate limits, 5xx, timeouts, dropped connections) outlasted the retry budget.

    An infrastructure error: the task is recorded with ``status: "error"`` and retried by the next run.
    """


class LLMRequestError(LLMError):
    """The endpoint rejected the request for good (400, 401, 403, 404, 422)."""

    def __init__(self, message: str, status_code: int | None = None, param: str | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        #: The request parameter the endpoint named as the problem, if it named one.
        self.param = param


class ContextLengthError(LLMRequestError):
    """The conversation no longer fits the model's context window."""


class WorldError(OccuBenchError):
    """The environment could not produce an observation (for example, a simulator that stays unparsable)."""


class VerifierError(OccuBenchError):
    """The verifier could not reach a verdict (no parsable votes, or a tie). Keeps the votes it did get."""

    def __init__(self, message: str, votes: list[Any] | None = None, prompt: list[Any] | None = None) -> None:
        super().__init__(message)
        self.votes = votes or []
        #: The messages the judge was sent.
        self.prompt = prompt or []


class TaskLimitReached(OccuBenchError):
    """An episode reached a per-task limit (``--max-tokens-per-task``, ``--max-seconds-per-task``): it stops and is
    judged on what it did, as at ``--max-steps``; ``reason`` is its stop reason."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class AgentError(OccuBenchError):
    """An agent outside occubench failed its episode as a program, not as a worker: its MCP session went away or
    its program exited before answering. Recorded as an error, not scored."""


class AgentOutputError(OccuBenchError):
    """What the agent left cannot be scored as it stands (folders too deep, a file too large, a link or a special
    file where a file is read): the agent's failure, scored 0 by the check that met it, never an unscored error.
    Its counterpart is :class:`WorldError`: a world that ran out of its own resources is never the agent's fault."""


class CacheMissError(LLMError):
    """``--replay`` asked for a response the cache does not hold."""


#: The kind of error each of our exceptions is recorded as (a result's error.kind); any other is "internal".
ERROR_KINDS: tuple[tuple[type[Exception], str], ...] = (
    (CacheMissError, "cache_miss"),
    (AgentError, "agent"),
    (ContextLengthError, "context_length"),
    (LLMUnavailableError, "infrastructure"),
    (LLMRequestError, "request_rejected"),
    (WorldError, "environment"),
    (VerifierError, "verifier"),
)


def error_kind(exc: Exception) -> str:
    return next((kind for cls, kind in ERROR_KINDS if isinstance(exc, cls)), "internal")
