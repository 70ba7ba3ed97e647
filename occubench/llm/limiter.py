"""One limiter per endpoint: how many requests may be in flight, adapted to what the endpoint accepts."""

from __future__ import annotations

import threading
import time


class AdaptiveLimiter:
    """At most ``limit`` requests in flight; waiting threads sleep on a condition, never spin.

    Adaptive (the default): a 429 lowers the limit to the number of requests the endpoint was already handling
    when it refused (at least one less than before), and pauses new requests for its Retry-After; each success
    raises the limit by ``1/limit``, so it climbs back by about one request per round of successes and probes
    the endpoint's capacity slowly. Only the first 429 of each limit "epoch" counts, so a burst of refusals from
    requests sent under the old limit does not collapse it.
    """

    def __init__(self, max_in_flight: int, *, adaptive: bool = True) -> None:
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        self.max_in_flight = max_in_flight
        self.adaptive = adaptive
        self.limit = float(max_in_flight)
        self.in_flight = 0
        self._epoch = 0
        self._resume_at = 0.0
        self._cond = threading.Condition()

    def acquire(self) -> int:
        """Wait for a slot; returns the epoch to hand back to :meth:`release`."""
        with self._cond:
            while True:
                pause = self._resume_at - time.monotonic()
                if pause > 0:
                    self._cond.wait(pause)
                elif self.in_flight >= int(self.limit):
                    self._cond.wait()
                else:
                    self.in_flight += 1
                    return self._epoch

    def release(self, epoch: int, *, ok: bool, throttled: bool = False, retry_after: float | None = None) -> None:
        with self._cond:
            self.in_flight -= 1
            if throttled:
                if self.adaptive and epoch == self._epoch:
                    self.limit = max(1.0, min(float(self.in_flight), self.limit - 1))
                    self._epoch += 1
                if retry_after:
                    self._resume_at = max(self._resume_at, time.monotonic() + retry_after)
            elif ok and self.adaptive and self.limit < self.max_in_flight:
                self.limit = min(float(self.max_in_flight), self.limit + 1 / self.limit)
            self._cond.notify_all()
