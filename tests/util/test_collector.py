"""The collector for many requests in flight: automatic collection off while in use, cyclic garbage collected once
the tracked objects have grown by as many as were live."""

from __future__ import annotations

import asyncio
import gc
import weakref

from occubench.util.collector import Collector


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_cycles_are_collected_once_the_objects_grew_by_the_live_ones() -> None:
    enabled = gc.isenabled()
    with Collector() as collector:
        assert not gc.isenabled()
        cycle = _Cycle()
        garbage = weakref.ref(cycle)
        del cycle
        collector.check()
        assert garbage() is not None  # little allocated yet: kept
        # Twice the live objects: frees of older objects meanwhile count against the allocations.
        grown = [[] for _ in range(2 * len(gc.get_objects()))]
        collector.check()
        assert garbage() is None
        del grown
    assert gc.isenabled() == enabled


def test_watch_checks_every_period_on_the_loop_until_left() -> None:
    async def main() -> bool:
        with Collector() as collector:
            collector.watch(0.01)
            cycle = _Cycle()
            garbage = weakref.ref(cycle)
            del cycle
            grown = [[] for _ in range(2 * len(gc.get_objects()))]
            for _ in range(500):  # each pass lets the loop run the timer
                await asyncio.sleep(0.01)
                if garbage() is None:
                    break
            del grown
            return garbage() is None

    assert asyncio.run(main())
