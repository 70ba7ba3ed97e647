"""The mock server's counters of chat requests (:class:`ServerStats`), and each request's part in them."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RequestTiming:
    """``time.monotonic()`` stamps of one admitted chat request: arrival, getting its slot, answer (or drop)."""

    received: float
    started: float
    finished: float


@dataclass
class ServerStats:
    """Counters for chat requests. Updated under a lock; read them after the requests of interest finish."""

    requests: int = 0
    responses_by_status: dict[int, int] = field(default_factory=dict)
    dropped: int = 0
    max_in_flight: int = 0  # among requests admitted past the 429 check
    total_prompt_tokens: int = 0
    total_completion_tokens: int = 0
    in_flight: int = 0  # admitted chat requests not yet answered
    #: The episodes' phase: the first admitted request that is not a preflight probe arriving, the last answered.
    first_received: float | None = None
    last_finished: float | None = None
    timeline: list[RequestTiming] = field(default_factory=list)  # in order of finishing; not in snapshot()
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "requests": self.requests,
                "responses_by_status": dict(self.responses_by_status),
                "dropped": self.dropped,
                "max_in_flight": self.max_in_flight,
                "total_prompt_tokens": self.total_prompt_tokens,
                "total_completion_tokens": self.total_completion_tokens,
                "episodes_phase_s": None if self.first_received is None or self.last_finished is None
                else round(self.last_finished - self.first_received, 4),
                # time.monotonic() stamps, which other processes of the machine can compare with theirs
                "first_received": self.first_received, "last_finished": self.last_finished,
            }


class Tally:
    """One chat request in the counters: in flight from its admission past the 429 check until it is answered or
    dropped, and on the timeline then if it got its slot."""

    def __init__(self, stats: ServerStats) -> None:
        self._stats = stats
        self._received = time.monotonic()
        self._admitted = False
        self.started: float | None = None  # when the request got its slot
        #: A preflight probe, left out of the episodes' phase.
        self.probe = False
        with stats._lock:
            stats.requests += 1

    def admit(self, limit: int | None) -> bool:
        """Whether the request is admitted: fewer than ``limit`` others are in flight."""
        stats = self._stats
        with stats._lock:
            self._admitted = limit is None or stats.in_flight < limit
            if self._admitted:
                stats.in_flight += 1
                stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        return self._admitted

    def sent(self, status: int) -> None:
        """Count the answer, just before it is written."""
        with self._stats._lock:
            self._stats.responses_by_status[status] = self._stats.responses_by_status.get(status, 0) + 1
            self._release()

    def end(self) -> None:
        """Leave the counters; nothing more if the answer already did (else the connection was dropped)."""
        with self._stats._lock:
            self._release()

    def _release(self) -> None:  # with the stats' lock held
        if self._admitted:
            self._admitted = False
            self._stats.in_flight -= 1
            if self.started is not None:
                finished = time.monotonic()
                self._stats.timeline.append(RequestTiming(self._received, self.started, finished))
                if not self.probe:
                    stats = self._stats
                    stats.first_received = min(stats.first_received or self._received, self._received)
                    stats.last_finished = max(stats.last_finished or finished, finished)
