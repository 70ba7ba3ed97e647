"""The harness's event loop, and the two bridges between it and blocking code.

Episodes are coroutines: their model requests are awaited on one event loop, so a thousand episodes in flight cost
a thousand small tasks, not a thousand threads. Code that blocks — a world's SQLite, a sandbox worker's pipes, a
user's synchronous agent — runs off the loop in a bounded pool of threads (:func:`off_loop`). Synchronous callers
(the Gymnasium interface, a library user's ``env.call``, world code that asks a model) reach the async code through
:func:`run_sync`, which runs it on the harness loop: one daemon thread, started on first use, shared by the process.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import functools
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # anyio loads when a thread is first needed: sandbox workers import this module and never do
    from anyio import CapacityLimiter

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
#: Closers to await on the harness loop before the process exits (clients' connection pools).
_closers: list[Callable[[], Awaitable[None]]] = []
#: How many threads may run blocking world code at once, per event loop (see :func:`set_blocking_threads`).
_threads = 64
#: Per event loop, a limiter for each pool: "world" (blocking world code) and "caller" (synchronous agents, which
#: may wait on world code themselves: apart, they can never take every thread the world code needs).
_limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, CapacityLimiter]] = \
    weakref.WeakKeyDictionary()


def harness_loop() -> asyncio.AbstractEventLoop:
    """The process's harness loop, running in its own daemon thread (started on first use)."""
    global _loop
    with _lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            started = threading.Event()
            threading.Thread(target=_serve, args=(loop, started), name="occubench-loop", daemon=True).start()
            started.wait()
            _loop = loop
            atexit.register(_close)
        return _loop


def _serve(loop: asyncio.AbstractEventLoop, started: threading.Event) -> None:
    asyncio.set_event_loop(loop)
    loop.call_soon(started.set)
    loop.run_forever()


def on_loop() -> bool:
    """Whether this thread is running an event loop (where blocking on one would deadlock it)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on the harness loop and wait for it, from synchronous code. It runs in a copy of the
    caller's context (the episode's usage ledger and limits follow it). Called on a running loop it raises
    ``RuntimeError`` instead of deadlocking: there, await the async variant."""
    if on_loop():
        coroutine.close()
        raise RuntimeError("a synchronous occubench call was made on a running event loop; await its async variant "
                           "(achat, acall, arun, averify...) instead")
    loop = harness_loop()
    context = contextvars.copy_context()
    outcome: Future[T] = Future()
    started: list[asyncio.Task[T]] = []

    def start() -> None:
        task = context.run(loop.create_task, coroutine)  # the task copies the context current when it is made
        started.append(task)
        task.add_done_callback(functools.partial(_settle, outcome))

    loop.call_soon_threadsafe(start)
    try:
        return outcome.result()
    except BaseException:
        if not outcome.done():  # interrupted while waiting (Ctrl-C): stop the work too
            loop.call_soon_threadsafe(lambda: started and started[0].cancel())
        raise


def _settle(outcome: Future[T], task: asyncio.Task[T]) -> None:
    if task.cancelled():
        outcome.cancel()
    elif (error := task.exception()) is not None:
        outcome.set_exception(error)
    else:
        outcome.set_result(task.result())


def set_blocking_threads(count: int) -> None:
    """How many threads may run blocking world code at once (each loop's pool is made with the count current at
    its first use): a run sets it to its concurrency, since a world may wait on a model inside a call."""
    global _threads
    _threads = max(1, count)
    for pools in list(_limiters.values()):
        for limiter in pools.values():
            limiter.total_tokens = _threads


async def off_loop(function: Callable[..., T], *args: Any, pool: str = "world") -> T:
    """``function(*args)`` in a thread of a bounded pool for blocking code, in a copy of this context; it may call
    :func:`run_sync` (a world asking a model) and, under Inspect, Inspect's ``from_thread``. ``pool="caller"`` is
    for code that itself waits on world code (a synchronous agent). A cancelled caller stops waiting; the thread
    finishes its call (Python cannot stop a thread), which is then thrown away."""
    import anyio.to_thread

    pools = _limiters.setdefault(asyncio.get_running_loop(), {})
    if (limiter := pools.get(pool)) is None:
        limiter = pools[pool] = anyio.CapacityLimiter(_threads)
    return await anyio.to_thread.run_sync(functools.partial(function, *args), limiter=limiter)


def close_at_exit(closer: Callable[[], Awaitable[None]]) -> None:
    """Await ``closer()`` on the harness loop when the process exits (a connection pool closed cleanly), if it is
    called on that loop: what belongs to another loop can only be closed there, by whoever runs it."""
    if on_loop() and asyncio.get_running_loop() is _loop:
        _closers.append(closer)


def _close() -> None:
    loop = _loop
    if loop is None or not _closers:
        return

    async def close_all() -> None:
        await asyncio.gather(*(closer() for closer in _closers), return_exceptions=True)

    try:
        asyncio.run_coroutine_threadsafe(close_all(), loop).result(timeout=5)
    except Exception:  # noqa: BLE001 - exiting anyway; an unclosed pool only costs a warning
        pass
