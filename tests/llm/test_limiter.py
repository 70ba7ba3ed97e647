"""The per-endpoint limiter: never above its limit, lowered by 429s, raised slowly, paused by Retry-After."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from occubench.llm import AdaptiveLimiter, LLMClient, RetryPolicy
from occubench.testing import MockLLMServer


def test_never_more_in_flight_than_the_limit() -> None:
    limiter, peak, lock = AdaptiveLimiter(3), [0], threading.Lock()

    def work(_: int) -> None:
        epoch = limiter.acquire()
        with lock:
            peak[0] = max(peak[0], limiter.in_flight)
        time.sleep(0.01)
        limiter.release(epoch, ok=True)
    with ThreadPoolExecutor(10) as pool:
        list(pool.map(work, range(40)))
    assert peak[0] == 3 and limiter.in_flight == 0


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
    assert limiter.limit == 8                                 # back to the cap, never above


def test_retry_after_pauses_new_requests() -> None:
    limiter = AdaptiveLimiter(4)
    limiter.release(limiter.acquire(), ok=False, throttled=True, retry_after=0.2)
    started = time.monotonic()
    limiter.acquire()
    assert time.monotonic() - started >= 0.18


def test_fixed_limit_does_not_adapt() -> None:
    limiter = AdaptiveLimiter(4, adaptive=False)
    epochs = [limiter.acquire() for _ in range(3)]
    limiter.release(epochs[0], ok=False, throttled=True)
    assert limiter.limit == 4


def _refusals(adaptive: bool) -> int:
    """429s a client with 12 concurrent callers gets from a server that admits 3 at a time."""
    with MockLLMServer(lambda request, index: "ok", max_concurrent=3, latency_s=0.02) as server:
        client = LLMClient("k", server.base_url, max_in_flight=12, adaptive=adaptive,
                           retry=RetryPolicy(budget_s=10, base_delay_s=0.01, max_delay_s=0.05))
        with ThreadPoolExecutor(12) as pool:
            assert set(pool.map(lambda _: client.chat("m", [{"role": "user", "content": "x"}]).replies[0].content,
                                range(120))) == {"ok"}
    assert server.stats.max_in_flight <= 3
    return server.stats.responses_by_status.get(429, 0)


def test_adapting_to_the_servers_capacity_avoids_most_refusals() -> None:
    adaptive, fixed = _refusals(True), _refusals(False)
    assert 0 < adaptive and adaptive * 3 < fixed, (adaptive, fixed)
