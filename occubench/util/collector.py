"""Garbage collection for a process that holds thousands of requests in flight.

Python's automatic collector rescans every object that outlives its young generations, and the state of a request
in flight for seconds does: with 10,000 episodes in flight its collections took more CPU than the episodes did (32
full collections of up to 3 s each in one run; ``benchmarks/README.md``). Reference counting frees nearly everything
anyway; what it cannot free is garbage in reference cycles, which :class:`Collector` collects by its own rule
instead: a full collection once the objects the collector tracks have grown by as many as were live after the last
one. Cyclic garbage then never outgrows what is live, and each object is scanned a bounded number of times on
average, however many are in flight.
"""

from __future__ import annotations

import asyncio
import gc
from types import TracebackType


class Collector:
    """Automatic collection off while in use (back as it was after); :meth:`check` collects by the rule above, and
    :meth:`watch` checks every second on the running event loop."""

    _timer: asyncio.TimerHandle | None = None

    def __enter__(self) -> Collector:
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._live = len(gc.get_objects())
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._was_enabled:
            gc.enable()

    def check(self) -> None:
        # The first count: objects allocated since the last collection, less those freed since (a counter read).
        if gc.get_count()[0] > self._live:
            gc.collect()
            self._live = len(gc.get_objects())

    def watch(self, period_s: float = 1.0) -> None:
        loop = asyncio.get_running_loop()

        def tick() -> None:
            self.check()
            self._timer = loop.call_later(period_s, tick)

        self._timer = loop.call_later(period_s, tick)
