"""Where an episode's model usage is counted: every request any role makes — the agent, a simulator, a judge,
colleagues — is recorded in the ledger of the episode it serves, retries included, whether the episode ends well
or in an error. The runner opens one ledger per episode; outside one (a library call of its own) nothing is kept.
The ledger also holds the episode's limits, checked before each of the agent's requests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from occubench.errors import TaskLimitReached
from occubench.llm.types import Usage

_current: ContextVar[Ledger | None] = ContextVar("occubench_ledger", default=None)

#: The roles whose requests make up an episode: the task's time limit cuts them. The judge comes after it.
EPISODE_ROLES = ("agent", "world", "npc")


@dataclass(frozen=True)
class TaskLimits:
    """The agent's budget in one episode: its tokens (prompt and completion), and the episode's seconds."""

    max_tokens: int | None = None
    max_seconds: float | None = None


class Ledger:
    """Usage per role; thread-safe (judge votes run in parallel threads of one episode)."""

    def __init__(self, limits: TaskLimits | None = None) -> None:
        self.by_role: dict[str, Usage] = {}
        self._lock = threading.Lock()
        self.limits = limits or TaskLimits()
        self._started = time.monotonic()
        #: Seconds the episode's requests waited for a connection the run's other episodes held: not the episode's
        #: own time, so not counted against its limit (a one-slot server serves one request of many at once).
        self._queued = 0.0

    def _elapsed(self) -> float:
        return time.monotonic() - self._started - self._queued

    def check(self, role: str) -> None:
        """Before a request: the agent may not start another turn past its limits (a turn under way finishes)."""
        if role != "agent":
            return
        tokens = self.by_role["agent"].tokens if "agent" in self.by_role else 0
        if self.limits.max_tokens is not None and tokens >= self.limits.max_tokens:
            raise TaskLimitReached("max_tokens_per_task", f"the agent used {tokens:,} tokens, the limit is "
                                   f"{self.limits.max_tokens:,} (--max-tokens-per-task)")
        elapsed = self._elapsed()
        if self.limits.max_seconds is not None and elapsed >= self.limits.max_seconds:
            raise TaskLimitReached("max_seconds_per_task", f"the episode took {elapsed:.1f} s, the limit is "
                                   f"{self.limits.max_seconds:g} s (--max-seconds-per-task)")

    def seconds_left(self) -> float | None:
        """What remains of the episode's time limit (negative once past it); None without one."""
        if self.limits.max_seconds is None:
            return None
        return self.limits.max_seconds - self._elapsed()

    def add(self, role: str, usage: Usage) -> None:
        with self._lock:
            self.by_role.setdefault(role, Usage()).add(usage)

    def retried(self, role: str, cause: str) -> None:
        self.add(role, Usage(retries={cause: 1}))

    def queued(self, seconds: float) -> None:
        with self._lock:
            self._queued += seconds


@contextmanager
def open_ledger(limits: TaskLimits | None = None) -> Iterator[Ledger]:
    """A fresh ledger for the code run inside (and the threads it starts with a copy of its context)."""
    ledger = Ledger(limits)
    token = _current.set(ledger)
    try:
        yield ledger
    finally:
        _current.reset(token)


def record(role: str, usage: Usage) -> None:
    if (ledger := _current.get()) is not None:
        ledger.add(role, usage)


def record_retry(role: str, cause: str) -> None:
    if (ledger := _current.get()) is not None:
        ledger.retried(role, cause)


def check_limits(role: str) -> None:
    if (ledger := _current.get()) is not None:
        ledger.check(role)


def record_queued(role: str, seconds: float) -> None:
    """An episode role's request waited ``seconds`` for a connection (the judge's, after the episode, is not
    timed by its limit)."""
    if role in EPISODE_ROLES and (ledger := _current.get()) is not None:
        ledger.queued(seconds)


def seconds_left() -> float | None:
    """What remains of the current episode's time limit; None outside an episode or without a limit."""
    return None if (ledger := _current.get()) is None else ledger.seconds_left()
