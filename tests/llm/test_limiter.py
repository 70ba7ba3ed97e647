"""The per-endpoint limiter: never above its limit, lowered by 429s, raised slowly, the refused level retried rarely.

Every test here is deterministic: the test thread drives acquire and release itself, other threads are sequenced
with queues and events. To see a thread
blocked in :meth:`AdaptiveLimiter.acquire` (rather than sleep and hope it got there), the limiter's condition is
replaced by one that reports each wait: a thread reported waiting with no timeout is waiting for a free slot.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

import pytest

from occubench.llm import AdaptiveLimiter, LLMClient, RetryPolicy
from occubench.llm.limiter import PROBE_AFTER
from occubench.testing import MockLLMServer

TIMEOUT_S = 10.0  # only ever reached when a test is about to fail; no assertion depends on it


class ReportingCondition(threading.Condition):
    """A real condition that puts the timeout of each wait (None: until notified) on a queue, before waiting."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: queue.Queue[float | None] = queue.Queue()

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.put(timeout)
        return super().wait(timeout)

    def next_wait(self) -> float | None:
        return self.waits.get(timeout=TIMEOUT_S)


def reporting(limiter: AdaptiveLimiter) -> ReportingCondition:
    """Give ``limiter`` a reporting condition; do it before any thread uses the limiter."""
    condition = ReportingCondition()
    limiter._cond = condition
    return condition


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(4) as executor:
        yield executor


def test_never_more_in_flight_than_the_limit(pool: ThreadPoolExecutor) -> None:
    limiter = AdaptiveLimiter(3)
    condition = reporting(limiter)
    epochs = [limiter.acquire() for _ in range(3)]
    assert limiter.in_flight == 3 and condition.waits.empty()       # up to the limit: nobody waits

    waiting = [pool.submit(limiter.acquire) for _ in range(2)]
    assert condition.next_wait() is None and condition.next_wait() is None   # both asleep for a slot
    assert limiter.in_flight == 3 and not any(f.done() for f in waiting)

    limiter.release(epochs[0], ok=True)                               # one slot: exactly one of them is woken
    done, not_done = wait(waiting, TIMEOUT_S, return_when=FIRST_COMPLETED)
    (first,), (second,) = done, not_done
    assert limiter.in_flight == 3 and not second.done()

    limiter.release(epochs[1], ok=True)
    epochs[1:] = [epochs[2], first.result(TIMEOUT_S), second.result(TIMEOUT_S)]
    assert limiter.in_flight == 3
    for epoch in epochs[1:]:
        limiter.release(epoch, ok=True)
    assert limiter.in_flight == 0 and limiter.limit == 3


def test_a_429_lowers_the_limit_once_per_epoch_and_successes_raise_it_slowly() -> None:
    limiter = AdaptiveLimiter(8)
    epochs = [limiter.acquire() for _ in range(6)]
    limiter.release(epochs[0], ok=False, throttled=True)      # 5 others still in flight
    assert limiter.limit == 5
    limiter.release(epochs[1], ok=False, throttled=True)      # sent under the old limit: ignored
    assert limiter.limit == 5
    for epoch in epochs[2:]:
        limiter.release(epoch, ok=True)
    assert 5 < limiter.limit < 6                              # +1/limit per success
    for _ in range(40):
        limiter.release(limiter.acquire(), ok=True)
    assert int(limiter.limit) == 5 and limiter.ceiling == 6  # just under the level the endpoint refused


def test_a_429_with_nothing_else_in_flight_keeps_one_slot() -> None:
    limiter = AdaptiveLimiter(4)
    limiter.release(limiter.acquire(), ok=False, throttled=True)
    assert limiter.limit == 1 and limiter.in_flight == 0


def test_a_lowered_limit_holds_back_the_next_request(pool: ThreadPoolExecutor) -> None:
    limiter = AdaptiveLimiter(4)
    condition = reporting(limiter)
    epochs = [limiter.acquire() for _ in range(3)]
    limiter.release(epochs[0], ok=False, throttled=True)      # the endpoint took 2 at once
    assert limiter.limit == 2 and limiter.in_flight == 2

    waiting = pool.submit(limiter.acquire)
    assert condition.next_wait() is None and not waiting.done()
    limiter.release(epochs[1], ok=True)
    assert waiting.result(TIMEOUT_S) == 1                     # the new epoch
    assert limiter.in_flight == 2


def test_a_429_holds_back_nothing_under_the_new_limit() -> None:
    limiter = AdaptiveLimiter(4)
    condition = reporting(limiter)
    epochs = [limiter.acquire() for _ in range(3)]
    limiter.release(epochs[0], ok=False, throttled=True)      # the endpoint took 2: the limit is 2, nothing paused
    limiter.release(epochs[1], ok=True)
    limiter.acquire()                                         # a slot under the new limit is given at once
    assert condition.waits.empty() and limiter.in_flight == 2


def _fill_and_refuse(limiter: AdaptiveLimiter, level: int) -> None:
    """``level`` requests in flight, the last refused: the endpoint takes ``level - 1``."""
    epochs = [limiter.acquire() for _ in range(level)]
    limiter.release(epochs[-1], ok=False, throttled=True)
    for epoch in epochs[:-1]:
        limiter.release(epoch, ok=True)


def _successes_until(limiter: AdaptiveLimiter, level: int) -> int:
    count = 0
    while int(limiter.limit) < level:
        limiter.release(limiter.acquire(), ok=True)
        count += 1
    return count


def test_the_refused_level_is_tried_again_rarely_and_more_rarely_each_time() -> None:
    limiter = AdaptiveLimiter(8)
    _fill_and_refuse(limiter, 5)                              # a hard cap of 4
    assert (limiter.ceiling, int(limiter.limit)) == (5, 4)
    first = _successes_until(limiter, 5)
    assert first >= PROBE_AFTER * 4                           # not after ~4 successes, as a 1/limit climb would
    _fill_and_refuse(limiter, 5)                              # the probe is refused again
    second = _successes_until(limiter, 5)
    assert second >= 2 * PROBE_AFTER * 4 and limiter.ceiling == 5
    limiter.release(limiter.acquire(), ok=True)               # this time 5 at once went through: the cap rose
    assert limiter.ceiling is None
    _successes_until(limiter, 8)
    assert limiter.limit == 8


def test_fixed_limit_does_not_adapt() -> None:
    limiter = AdaptiveLimiter(4, adaptive=False)
    epochs = [limiter.acquire() for _ in range(3)]
    limiter.release(epochs[0], ok=False, throttled=True)
    assert limiter.limit == 4
    limiter.release(epochs[1], ok=True)
    assert limiter.limit == 4


# -- through the client, against a server that admits 2 requests at a time ------------------------------------

def _held_server() -> tuple[MockLLMServer, threading.Event, queue.Queue[None]]:
    """A server that admits 2 requests at once and holds each admitted one until ``release`` is set; each
    admitted request puts None on ``arrived``."""
    release, arrived = threading.Event(), queue.Queue[None]()

    def respond(request: object, index: int) -> str:
        arrived.put(None)
        assert release.wait(TIMEOUT_S)
        return "ok"
    return MockLLMServer(respond, max_concurrent=2, retry_after_s=0), release, arrived


def _client(server: MockLLMServer, *, adaptive: bool) -> tuple[LLMClient, queue.Queue[bool]]:
    """A client allowing 4 requests in flight; ``releases`` gets, for each request it finishes, whether it was
    refused with a 429."""
    client = LLMClient("k", server.base_url, max_in_flight=4, adaptive=adaptive, timeout_s=TIMEOUT_S,
                       retry=RetryPolicy(budget_s=TIMEOUT_S, base_delay_s=0, max_delay_s=0))
    releases: queue.Queue[bool] = queue.Queue()
    release: Callable[..., None] = client.limiter.release

    def reporting_release(epoch: int, *, ok: bool, throttled: bool = False) -> None:
        release(epoch, ok=ok, throttled=throttled)
        releases.put(throttled)
    client.limiter.release = reporting_release  # type: ignore[method-assign]
    return client, releases


def _ask(client: LLMClient) -> str | None:
    return client.chat("m", [{"role": "user", "content": "x"}]).replies[0].content


def test_the_client_lowers_its_limit_to_what_the_server_took(pool: ThreadPoolExecutor) -> None:
    server, release, arrived = _held_server()
    with server:
        client, releases = _client(server, adaptive=True)
        condition = reporting(client.limiter)
        held: list[Future[str | None]] = [pool.submit(_ask, client) for _ in range(2)]
        arrived.get(timeout=TIMEOUT_S), arrived.get(timeout=TIMEOUT_S)     # both admitted, and held
        third = pool.submit(_ask, client)
        assert releases.get(timeout=TIMEOUT_S) is True                      # refused: 2 were in flight
        assert client.limiter.limit == 2
        assert condition.next_wait() is None                                # its retry waits for a slot,
        assert releases.empty() and not third.done()                        # it did not go to the server again
        release.set()
        assert [f.result(TIMEOUT_S) for f in [*held, third]] == ["ok"] * 3
    assert server.stats.max_in_flight == 2


def test_a_fixed_limit_keeps_sending_into_429s(pool: ThreadPoolExecutor) -> None:
    server, release, arrived = _held_server()
    with server:
        client, releases = _client(server, adaptive=False)
        condition = reporting(client.limiter)
        held = [pool.submit(_ask, client) for _ in range(2)]
        arrived.get(timeout=TIMEOUT_S), arrived.get(timeout=TIMEOUT_S)
        third = pool.submit(_ask, client)
        assert [releases.get(timeout=TIMEOUT_S) for _ in range(3)] == [True] * 3   # refused, again and again
        assert client.limiter.limit == 4 and condition.waits.empty()            # never held back
        release.set()
        assert [f.result(TIMEOUT_S) for f in [*held, third]] == ["ok"] * 3
