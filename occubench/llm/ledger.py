"""Where an episode's model usage is counted: every request any role makes — the agent, a simulator, a judge,
colleagues — is recorded in the ledger of the episode it serves, retries included, whether the episode ends well
or in an error. The runner opens one ledger per episode; outside one (a library call of its own) nothing is kept.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from occubench.llm.types import Usage

_current: ContextVar[Ledger | None] = ContextVar("occubench_ledger", default=None)


class Ledger:
    """Usage per role; thread-safe (judge votes run in parallel threads of one episode)."""

    def __init__(self) -> None:
        self.by_role: dict[str, Usage] = {}
        self._lock = threading.Lock()

    def add(self, role: str, usage: Usage) -> None:
        with self._lock:
            self.by_role.setdefault(role, Usage()).add(usage)

    def retried(self, role: str, cause: str) -> None:
        self.add(role, Usage(retries={cause: 1}))


@contextmanager
def open_ledger() -> Iterator[Ledger]:
    """A fresh ledger for the code run inside (and the threads it starts with a copy of its context)."""
    ledger = Ledger()
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
