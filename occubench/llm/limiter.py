"""One limiter per endpoint: how many requests may be in flight, adapted to what the endpoint accepts."""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from typing import Protocol

#: Successes at the highest accepted level, per slot, before the level that drew a 429 is tried again; doubled
#: for every further refusal there, so an endpoint with a hard cap is probed ever more rarely.
PROBE_AFTER = 25


class Limiter(Protocol):
    """What a client asks of its limiter: :class:`AdaptiveLimiter`, or a proxy to one that every process of a Ray
    cluster shares (``occubench.distributed``)."""

    async def acquire(self) -> int: ...

    def release(self, epoch: int, *, ok: bool, throttled: bool = False) -> None: ...


class AdaptiveLimiter:
    """At most ``limit`` requests in flight; a request waiting for a slot is a queued future (any number can wait
    without holding a thread), served first come, first served, one per free slot — so when a 429's window opens,
    only as many requests go out as the limit allows, not every one that was waiting.

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
        # Waiters may be on several event loops (the harness's and a caller's own): a lock, not the loop, guards.
        self._lock = threading.Lock()
        self._waiting: deque[asyncio.Future[int]] = deque()
        #: Waiters handed a slot whose caller has not taken it yet (the grant may cross threads).
        self._granted: set[asyncio.Future[int]] = set()

    async def acquire(self) -> int:
        """Wait for a slot; returns the epoch to hand back to :meth:`release`."""
        with self._lock:
            if not self._waiting and self.in_flight < int(self.limit):
                self.in_flight += 1
                return self._epoch
            waiter = asyncio.get_running_loop().create_future()
            self._waiting.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            with self._lock:
                granted = waiter in self._granted
                waiter.cancel()  # if still queued, the next grant skips it
            if granted:  # a slot was on its way to a caller that left: it goes back
                self.release(self._epoch, ok=False)
            raise
        finally:
            with self._lock:
                self._granted.discard(waiter)

    def release(self, epoch: int, *, ok: bool, throttled: bool = False) -> None:
        """Give a slot back, saying how the request went (``throttled``: it drew a 429)."""
        with self._lock:
            self.in_flight -= 1
            if self.adaptive and throttled and epoch == self._epoch:
                self._refused()
            elif self.adaptive and ok:
                self._succeeded()
            while self._waiting and self.in_flight < int(self.limit):
                waiter = self._waiting.popleft()
                if waiter.done():  # its caller went away
                    continue
                self.in_flight += 1
                self._granted.add(waiter)
                if not _grant(waiter, self._epoch):  # its loop is closed: the slot goes to the next one
                    self.in_flight -= 1
                    self._granted.discard(waiter)

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


def _grant(waiter: asyncio.Future[int], epoch: int) -> bool:
    """Hand a slot to a waiter, on its own loop (which may not be this thread's); False when that loop is closed
    (its caller is gone). A waiter cancelled in between hands it back at once (see :meth:`AdaptiveLimiter.acquire`)."""
    loop = waiter.get_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        waiter.set_result(epoch)
        return True

    def settle() -> None:
        if not waiter.done():
            waiter.set_result(epoch)

    try:
        loop.call_soon_threadsafe(settle)
    except RuntimeError:  # the loop is closed
        return False
    return True
