"""The per-endpoint limiter: never above its limit, lowered by 429s, raised slowly, the refused level retried rarely.

Every test here is deterministic, with no sleeps. A test drives the limiter from its own event loop: a request
waiting for a slot is a task of :meth:`AdaptiveLimiter.acquire`, and after a few ``await asyncio.sleep(0)`` (see
:func:`settle`) every task that can run has run, so which tasks are done says exactly who was given a slot. A second
loop, in a thread, is sequenced by awaiting what it runs. The client tests, against a server that admits 2 requests
at once, call the synchronous client from threads; to see a request waiting for a slot (rather than sleep and hope it
got there), the limiter's queue of waiters is replaced by one that reports each waiter it takes in.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections import deque
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import pytest

from occubench.llm import AdaptiveLimiter, LLMClient, RetryPolicy
from occubench.llm.limiter import PROBE_AFTER
from occubench.testing import MockLLMServer

T = TypeVar("T")

TIMEOUT_S = 10.0  # only ever reached when a test is about to fail; no assertion depends on it


def in_a_loop(test: Callable[[], Coroutine[Any, Any, None]]) -> Callable[[], None]:
    """The async test ``test``, run on an event loop of its own."""
    def run() -> None:
        asyncio.run(test())
    run.__name__, run.__qualname__, run.__doc__ = test.__name__, test.__qualname__, test.__doc__
    return run


async def settle() -> None:
    """Let every task that can run on this loop run: a granted waiter wakes, a cancelled one hands its slot back."""
    for _ in range(5):
        await asyncio.sleep(0)


async def take(limiter: AdaptiveLimiter) -> int:
    """A slot that is free now: fails, rather than hangs, if :meth:`AdaptiveLimiter.acquire` waits for it."""
    task = asyncio.ensure_future(limiter.acquire())
    await asyncio.sleep(0)  # the task's first step, in which a free slot is taken
    assert task.done(), "acquire waited though a slot was free"
    return task.result()


async def queue_up(limiter: AdaptiveLimiter, count: int = 1) -> list[asyncio.Task[int]]:
    """``count`` requests waiting for a slot, in this order."""
    waiting = len(limiter._waiting)
    tasks = [asyncio.ensure_future(limiter.acquire()) for _ in range(count)]
    await settle()
    assert not any(task.done() for task in tasks) and len(limiter._waiting) == waiting + count
    return tasks


def done(tasks: list[asyncio.Task[int]]) -> list[bool]:
    return [task.done() for task in tasks]


@in_a_loop
async def test_never_more_in_flight_than_the_limit() -> None:
    limiter = AdaptiveLimiter(3)
    epochs = [await take(limiter) for _ in range(3)]                  # up to the limit: nobody waits
    assert limiter.in_flight == 3

    waiting = await queue_up(limiter, 2)                              # both wait for a slot
    assert limiter.in_flight == 3

    limiter.release(epochs[0], ok=True)                               # one slot: exactly one of them is woken,
    await settle()
    assert done(waiting) == [True, False] and limiter.in_flight == 3  # the first to come

    limiter.release(epochs[1], ok=True)
    await settle()
    assert done(waiting) == [True, True] and limiter.in_flight == 3
    for epoch in [epochs[2], *(task.result() for task in waiting)]:
        limiter.release(epoch, ok=True)
    assert limiter.in_flight == 0 and limiter.limit == 3 and not limiter._waiting


@in_a_loop
async def test_each_released_slot_wakes_exactly_one_waiter_first_come_first_served() -> None:
    limiter = AdaptiveLimiter(2, adaptive=False)
    held = [await take(limiter) for _ in range(2)]
    waiting = await queue_up(limiter, 5)
    for served in range(1, 6):
        limiter.release(held.pop(0), ok=True)
        await settle()
        assert done(waiting) == [True] * served + [False] * (5 - served)
        assert limiter.in_flight == 2
        held.append(waiting[served - 1].result())
    for epoch in held:
        limiter.release(epoch, ok=True)
    assert limiter.in_flight == 0 and not limiter._waiting


@in_a_loop
async def test_many_requests_never_exceed_the_limit_and_all_get_through() -> None:
    limiter = AdaptiveLimiter(3)
    active, peak = 0, 0

    async def request(index: int) -> None:
        nonlocal active, peak
        epoch = await limiter.acquire()
        active += 1
        peak = max(peak, active)
        assert active <= limiter.in_flight <= int(limiter.limit)  # a slot granted counts before its waiter runs
        for _ in range(index % 4):  # some are answered sooner than others
            await asyncio.sleep(0)
        active -= 1
        limiter.release(epoch, ok=True)

    await asyncio.gather(*(request(i) for i in range(20)))
    assert peak == 3 and limiter.in_flight == 0 and not limiter._waiting


@in_a_loop
async def test_a_429_lowers_the_limit_once_per_epoch_and_successes_raise_it_slowly() -> None:
    limiter = AdaptiveLimiter(8)
    epochs = [await take(limiter) for _ in range(6)]
    limiter.release(epochs[0], ok=False, throttled=True)      # 5 others still in flight
    assert limiter.limit == 5
    limiter.release(epochs[1], ok=False, throttled=True)      # sent under the old limit: ignored
    assert limiter.limit == 5
    for epoch in epochs[2:]:
        limiter.release(epoch, ok=True)
    assert 5 < limiter.limit < 6                              # +1/limit per success
    for _ in range(40):
        limiter.release(await take(limiter), ok=True)
    assert int(limiter.limit) == 5 and limiter.ceiling == 6  # just under the level the endpoint refused


@in_a_loop
async def test_a_429_with_nothing_else_in_flight_keeps_one_slot() -> None:
    limiter = AdaptiveLimiter(4)
    limiter.release(await take(limiter), ok=False, throttled=True)
    assert limiter.limit == 1 and limiter.in_flight == 0
    limiter.release(await take(limiter), ok=True)             # the one slot is still given
    assert limiter.in_flight == 0


@in_a_loop
async def test_a_lowered_limit_holds_back_the_next_request() -> None:
    limiter = AdaptiveLimiter(4)
    epochs = [await take(limiter) for _ in range(3)]
    limiter.release(epochs[0], ok=False, throttled=True)      # the endpoint took 2 at once
    assert limiter.limit == 2 and limiter.in_flight == 2

    (waiting,) = await queue_up(limiter)                      # under the old limit of 4 it would have gone out
    limiter.release(epochs[1], ok=True)
    await settle()
    assert waiting.done() and waiting.result() == 1           # the new epoch
    assert limiter.in_flight == 2


@in_a_loop
async def test_a_429_holds_back_nothing_under_the_new_limit() -> None:
    limiter = AdaptiveLimiter(4)
    epochs = [await take(limiter) for _ in range(3)]
    limiter.release(epochs[0], ok=False, throttled=True)      # the endpoint took 2: the limit is 2, nothing paused
    limiter.release(epochs[1], ok=True)
    assert await take(limiter) == 1                           # a slot under the new limit is given at once
    assert limiter.in_flight == 2 and not limiter._waiting


async def _fill_and_refuse(limiter: AdaptiveLimiter, level: int) -> None:
    """``level`` requests in flight, the last refused: the endpoint takes ``level - 1``."""
    epochs = [await take(limiter) for _ in range(level)]
    limiter.release(epochs[-1], ok=False, throttled=True)
    for epoch in epochs[:-1]:
        limiter.release(epoch, ok=True)


async def _successes_until(limiter: AdaptiveLimiter, level: int) -> int:
    count = 0
    while int(limiter.limit) < level:
        limiter.release(await take(limiter), ok=True)
        count += 1
    return count


@in_a_loop
async def test_the_refused_level_is_tried_again_rarely_and_more_rarely_each_time() -> None:
    limiter = AdaptiveLimiter(8)
    await _fill_and_refuse(limiter, 5)                        # a hard cap of 4
    assert (limiter.ceiling, int(limiter.limit)) == (5, 4)
    first = await _successes_until(limiter, 5)
    assert first >= PROBE_AFTER * 4                           # not after ~4 successes, as a 1/limit climb would
    await _fill_and_refuse(limiter, 5)                        # the probe is refused again
    second = await _successes_until(limiter, 5)
    assert second >= 2 * PROBE_AFTER * 4 and limiter.ceiling == 5
    limiter.release(await take(limiter), ok=True)             # this time 5 at once went through: the cap rose
    assert limiter.ceiling is None
    await _successes_until(limiter, 8)
    assert limiter.limit == 8


@in_a_loop
async def test_fixed_limit_does_not_adapt() -> None:
    limiter = AdaptiveLimiter(4, adaptive=False)
    epochs = [await take(limiter) for _ in range(3)]
    limiter.release(epochs[0], ok=False, throttled=True)
    assert limiter.limit == 4
    limiter.release(epochs[1], ok=True)
    assert limiter.limit == 4
    assert [await take(limiter) for _ in range(2)] == [0, 0]  # still 4 at once, in the one epoch
    assert limiter.in_flight == 3


# -- cancelled waiters ---------------------------------------------------------------------------------------

@in_a_loop
async def test_a_waiter_cancelled_while_queued_is_skipped() -> None:
    limiter = AdaptiveLimiter(1)
    held = await take(limiter)
    first, gone, last = await queue_up(limiter, 3)
    gone.cancel()
    await settle()
    assert gone.cancelled() and limiter.in_flight == 1 and done([first, last]) == [False, False]

    limiter.release(held, ok=True)
    await settle()
    assert done([first, last]) == [True, False] and limiter.in_flight == 1
    limiter.release(first.result(), ok=True)                  # the cancelled waiter is passed over
    await settle()
    assert last.done() and limiter.in_flight == 1
    limiter.release(last.result(), ok=True)
    assert limiter.in_flight == 0 and not limiter._waiting


@in_a_loop
async def test_cancelled_waiters_alone_hold_nothing_back() -> None:
    limiter = AdaptiveLimiter(1)
    held = await take(limiter)
    waiting = await queue_up(limiter, 2)
    for task in waiting:
        task.cancel()
    await settle()
    limiter.release(held, ok=True)                            # no one left to give the slot to
    await settle()
    assert limiter.in_flight == 0 and not limiter._waiting
    limiter.release(await take(limiter), ok=True)             # the next request is not queued behind them
    assert limiter.in_flight == 0


@in_a_loop
async def test_a_waiter_cancelled_after_its_grant_gives_the_slot_back() -> None:
    limiter = AdaptiveLimiter(1)
    held = await take(limiter)
    granted, last = await queue_up(limiter, 2)
    limiter.release(held, ok=True)                            # the slot is granted, the waiter has not run yet
    assert limiter.in_flight == 1
    granted.cancel()                                          # its caller leaves before taking it
    await settle()
    assert granted.cancelled()
    assert last.done() and limiter.in_flight == 1             # the slot went on to the next waiter

    (alone,) = await queue_up(limiter)
    limiter.release(last.result(), ok=True)
    alone.cancel()
    await settle()
    assert alone.cancelled() and limiter.in_flight == 0       # with no one else waiting, it is free again
    limiter.release(await take(limiter), ok=True)
    assert limiter.in_flight == 0 and not limiter._waiting


# -- waiters on another event loop ---------------------------------------------------------------------------

class OtherLoop:
    """A second event loop, running in a thread of its own."""

    def __enter__(self) -> OtherLoop:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="other-loop", daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(TIMEOUT_S)
        self.loop.close()

    async def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """``coroutine``, run on the other loop, awaited from this one."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        return await asyncio.wait_for(asyncio.wrap_future(future), TIMEOUT_S)


async def _queued_here(limiter: AdaptiveLimiter) -> asyncio.Task[int]:
    """On the loop running it: a request waiting for a slot."""
    (task,) = await queue_up(limiter)
    return task


async def _finished(task: asyncio.Task[int]) -> asyncio.Task[int]:
    """On ``task``'s loop: ``task``, once it is done (cancelled or not)."""
    await asyncio.wait([task])
    return task


@in_a_loop
async def test_a_waiter_on_another_loop_is_granted_a_slot_released_on_this_one() -> None:
    limiter = AdaptiveLimiter(2)
    epochs = [await take(limiter) for _ in range(2)]
    with OtherLoop() as other:
        there = await other.run(_queued_here(limiter))
        here = await queue_up(limiter)                        # after the one there
        limiter.release(epochs[0], ok=False, throttled=True)  # the limit drops to 1, the one left in flight
        assert limiter.limit == 1 and not there.done()
        limiter.release(epochs[1], ok=True)                   # a slot, for the first to come: the one there
        assert (await other.run(_finished(there))).result() == 1
        await settle()
        assert limiter.in_flight == 1 and not here[0].done()
        await other.run(asyncio.to_thread(limiter.release, there.result(), ok=True))  # from a thread with no loop
        await settle()
        assert here[0].done() and here[0].result() == 1 and limiter.in_flight == 1
    limiter.release(here[0].result(), ok=True)
    assert limiter.in_flight == 0 and not limiter._waiting


@pytest.mark.parametrize("cancel_first", [False, True], ids=["grant-then-cancel", "cancel-then-grant"])
def test_a_waiter_on_another_loop_cancelled_while_its_grant_crosses_gives_the_slot_back(cancel_first: bool) -> None:
    async def main() -> None:
        limiter = AdaptiveLimiter(1)
        held = await take(limiter)
        with OtherLoop() as other:
            there = await other.run(_queued_here(limiter))
            gate = threading.Event()
            other.loop.call_soon_threadsafe(gate.wait, TIMEOUT_S)  # the other loop is held until the gate opens:
            if cancel_first:                                       # what is sent to it runs in the order sent
                other.loop.call_soon_threadsafe(there.cancel)
            limiter.release(held, ok=True)                         # the grant is sent across
            if not cancel_first:
                other.loop.call_soon_threadsafe(there.cancel)
            assert limiter.in_flight == 1
            gate.set()
            assert (await other.run(_finished(there))).cancelled()
            assert limiter.in_flight == 0 and not limiter._waiting
        limiter.release(await take(limiter), ok=True)
        assert limiter.in_flight == 0
    asyncio.run(main())


def test_a_waiter_left_on_a_closed_loop_does_not_jam_the_limiter() -> None:
    async def main() -> None:
        limiter = AdaptiveLimiter(1)
        held = await take(limiter)

        def caller() -> None:  # a caller's own loop, closed with its acquire still pending
            other = asyncio.new_event_loop()
            other.run_until_complete(asyncio.wait([other.create_task(limiter.acquire())], timeout=0))
            other.close()

        await asyncio.to_thread(caller)
        (mine,) = await queue_up(limiter)
        limiter.release(held, ok=True)
        await settle()
        assert mine.done() and limiter.in_flight == 1  # the dead waiter was passed over, its slot not lost
        limiter.release(mine.result(), ok=True)
        assert limiter.in_flight == 0

    asyncio.run(main())


# -- through the client, against a server that admits 2 requests at a time ------------------------------------

class ReportingQueue(deque[asyncio.Future[int]]):
    """A limiter's queue of waiters that puts None on ``queued`` for each waiter it takes in."""

    def __init__(self) -> None:
        super().__init__()
        self.queued: queue.Queue[None] = queue.Queue()

    def append(self, waiter: asyncio.Future[int]) -> None:
        super().append(waiter)
        self.queued.put(None)


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(4) as executor:
        yield executor


def _held_server() -> tuple[MockLLMServer, threading.Event, queue.Queue[None]]:
    """A server that admits 2 requests at once and holds each admitted one until ``release`` is set; each
    admitted request puts None on ``arrived``."""
    release, arrived = threading.Event(), queue.Queue[None]()

    def respond(request: object, index: int) -> str:
        arrived.put(None)
        assert release.wait(TIMEOUT_S)
        return "ok"
    return MockLLMServer(respond, max_concurrent=2, retry_after_s=0), release, arrived


def _client(server: MockLLMServer, *, adaptive: bool) -> tuple[LLMClient, AdaptiveLimiter, queue.Queue[bool],
                                                               ReportingQueue]:
    """A client allowing 4 requests in flight, and its limiter; ``releases`` gets, for each request it finishes,
    whether it was refused with a 429; the limiter's queue reports each request that waits for a slot."""
    client = LLMClient("k", server.base_url, max_in_flight=4, adaptive=adaptive, timeout_s=TIMEOUT_S,
                       retry=RetryPolicy(budget_s=TIMEOUT_S, base_delay_s=0, max_delay_s=0))
    limiter = client.limiter
    assert isinstance(limiter, AdaptiveLimiter)
    waiting = limiter._waiting = ReportingQueue()
    releases: queue.Queue[bool] = queue.Queue()
    release = limiter.release

    def reporting_release(epoch: int, *, ok: bool, throttled: bool = False) -> None:
        release(epoch, ok=ok, throttled=throttled)
        releases.put(throttled)
    limiter.release = reporting_release  # type: ignore[method-assign]
    return client, limiter, releases, waiting


def _ask(client: LLMClient) -> str | None:
    return client.chat("m", [{"role": "user", "content": "x"}]).replies[0].content


def test_the_client_lowers_its_limit_to_what_the_server_took(pool: ThreadPoolExecutor) -> None:
    server, release, arrived = _held_server()
    with server:
        client, limiter, releases, waiting = _client(server, adaptive=True)
        held: list[Future[str | None]] = [pool.submit(_ask, client) for _ in range(2)]
        arrived.get(timeout=TIMEOUT_S), arrived.get(timeout=TIMEOUT_S)     # both admitted, and held
        third = pool.submit(_ask, client)
        assert releases.get(timeout=TIMEOUT_S) is True                      # refused: 2 were in flight
        assert limiter.limit == 2
        waiting.queued.get(timeout=TIMEOUT_S)                               # its retry waits for a slot,
        assert len(waiting) == 1 and limiter.in_flight == 2
        assert releases.empty() and not third.done()                        # it did not go to the server again
        release.set()
        assert [f.result(TIMEOUT_S) for f in [*held, third]] == ["ok"] * 3
        assert [releases.get(timeout=TIMEOUT_S) for _ in range(3)] == [False] * 3
    assert server.stats.max_in_flight == 2
    assert limiter.in_flight == 0 and not waiting and waiting.queued.qsize() == 0


def test_a_fixed_limit_keeps_sending_into_429s(pool: ThreadPoolExecutor) -> None:
    server, release, arrived = _held_server()
    with server:
        client, limiter, releases, waiting = _client(server, adaptive=False)
        held = [pool.submit(_ask, client) for _ in range(2)]
        arrived.get(timeout=TIMEOUT_S), arrived.get(timeout=TIMEOUT_S)
        third = pool.submit(_ask, client)
        assert [releases.get(timeout=TIMEOUT_S) for _ in range(3)] == [True] * 3   # refused, again and again
        assert limiter.limit == 4 and waiting.queued.empty()                    # never held back
        release.set()
        assert [f.result(TIMEOUT_S) for f in [*held, third]] == ["ok"] * 3
    assert waiting.queued.empty() and limiter.in_flight == 0
