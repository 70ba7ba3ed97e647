"""One limiter per endpoint: how many requests may be in flight, adapted to what the endpoint accepts."""

from __future__ import annotations

import threading
from typing import Protocol

#: Successes at the highest accepted level, per slot, before the level that drew a 429 is tried again; doubled
#: for every further refusal there, so an endpoint with a hard cap is probed ever more rarely.
PROBE_AFTER = 25


class Limiter(Protocol):
    """What a client asks of its limiter: :class:`AdaptiveLimiter`, or a proxy to one that every process of a Ray
    cluster shares (``occubench.distributed``)."""

    def acquire(self) -> int: ...

    def release(self, epoch: int, *, ok: bool, throttled: bool = False) -> None: ...


class AdaptiveLimiter:
    """At most ``limit`` requests in flight; waiting threads sleep on a condition, one woken per free slot.

    Adaptive (the default): a 429 lowers the limit to the number of requests the endpoint was still handling when
    it refused (at least one less than before) and remembers the refused level as a ceiling. Successes raise the
    limit by ``1/limit`` each — about one request per round — up to just under the ceiling; the ceiling itself is
    tried again only after ``PROBE_AFTER × limit`` more successes, and after twice as many for each further
    refusal at the same level, so a hard cap costs a handful of 429s per run instead of one every few requests.
    Only the first 429 of each limit "epoch" counts, so a burst of refusals from requests sent under the old limit
    does not collapse it. Retry-After is honoured by the refused request itself (the client waits before sending
    it again); requests under the limit are not held back.
    """

    def __init__(self, max_in_flight: int, *, adaptive: bool = True) -> None:
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        self.max_in_flight = max_in_flight
        self.adaptive = adaptive
        self.limit = float(max_in_flight)
        self.in_flight = 0
        #: The lowest level that drew a 429 and has not been accepted since; None before any.
        self.ceiling: int | None = None
        self._refusals_at_ceiling = 0
        self._credit = 0
        self._epoch = 0
        self._cond = threading.Condition()

    def acquire(self) -> int:
        """Wait for a slot; returns the epoch to hand back to :meth:`release`."""
        with self._cond:
            while self.in_flight >= int(self.limit):
                self._cond.wait()
            self.in_flight += 1
            return self._epoch

    def try_acquire(self) -> int | None:
        """A slot if one is free now (its epoch, as :meth:`acquire`), else None: for callers that queue waiters
        themselves instead of blocking a thread."""
        with self._cond:
            if self.in_flight >= int(self.limit):
                return None
            self.in_flight += 1
            return self._epoch

    def release(self, epoch: int, *, ok: bool, throttled: bool = False) -> None:
        """Give a slot back, saying how the request went (``throttled``: it drew a 429)."""
        with self._cond:
            self.in_flight -= 1
            if self.adaptive and throttled and epoch == self._epoch:
                self._refused()
            elif self.adaptive and ok:
                self._succeeded()
            if (free := int(self.limit) - self.in_flight) > 0:
                self._cond.notify(free)

    def _refused(self) -> None:
        level = self.in_flight + 1  # the requests still in flight were accepted; this one, on top, was not
        self._refusals_at_ceiling = self._refusals_at_ceiling + 1 if level == self.ceiling else 1
        self.ceiling = level
        self.limit = max(1.0, min(float(self.in_flight), self.limit - 1))
        self._credit = 0
        self._epoch += 1

    def _succeeded(self) -> None:
        if int(self.limit) == self.ceiling:  # a probe at the refused level went through: it is accepted now
            self.ceiling, self._refusals_at_ceiling = None, 0
        raised = min(float(self.max_in_flight), self.limit + 1 / self.limit)
        if self.ceiling is not None and raised >= self.ceiling:
            self._credit += 1
            if self._credit < PROBE_AFTER * int(self.limit) * 2 ** (self._refusals_at_ceiling - 1):
                return  # stay at the highest accepted level for now
            self._credit = 0
            raised = float(self.ceiling)
        self.limit = raised
