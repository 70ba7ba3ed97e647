"""Where episodes run. An :class:`Executor` evaluates a phase's pending episodes and appends each result to the
run's store, in this process, as soon as it is final — so resume, the lock, error retry, progress and
``--max-cost`` are the run's, whichever executor ran the episodes.

``--executor NAME`` picks one among those registered under the entry-point group ``occubench.executors``
(:func:`occubench.engine.registry.load_executor`): ``local`` (this process's event loop, :class:`AsyncExecutor`)
and ``ray`` (a Ray cluster, :class:`occubench.distributed.executor.RayExecutor`). A third party adds one the same
way: a class built from the run's config, with :meth:`Executor.run` and :attr:`Executor.in_process`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from occubench.core.episode import Episodes
from occubench.core.results import Result
from occubench.core.task import Task
from occubench.store import ResultStore
from occubench.util.aio import run_sync, set_blocking_threads
from occubench.util.collector import Collector

if TYPE_CHECKING:
    from occubench.config import RunConfig
    from occubench.engine.factory import EpisodeFactory

#: Episodes started at once before the executor lets the loop run: a thousand are opened over a few ticks, so their
#: connections open gradually rather than as one burst the server's listen queue drops.
RAMP = 64
#: Called with each result once it is in the store.
OnResult = Callable[[Result], None]
#: Asked before each episode starts (a run-wide budget): False leaves it not started.
MayStart = Callable[[], bool]


@dataclass
class Job:
    """One phase of a run, as an executor gets it: the factory that builds its episodes from the config alone (an
    executor whose workers are other processes rebuilds them there), the run's date, the results each later phase
    was made from, and this process's own episodes for the phase (built when called, sharing the run's models)."""

    factory: EpisodeFactory
    date: str
    follow_ups: Sequence[dict[tuple[Any, int], Result]]
    episodes: Callable[[], Episodes] = field(repr=False)


class Executor(Protocol):
    #: Whether the episodes run in this process, which can then serve them from its own state: a run that rescores
    #: (reading the source run directory) or has an outside agent (served over MCP from here) needs one that does.
    in_process: ClassVar[bool]

    def __init__(self, config: RunConfig) -> None: ...

    def run(self, job: Job, todo: list[tuple[Task, int]], store: ResultStore, *, on_result: OnResult | None = None,
            may_start: MayStart | None = None) -> int:
        """Evaluate the (task, trial) pairs of ``todo``, appending each result to ``store`` as it is final; returns
        how many were not started because ``may_start()`` said no."""
        ...


class AsyncExecutor:
    """Episodes as tasks of this process's event loop, ``max_concurrency`` in flight at once: an episode waiting on
    a model costs a suspended coroutine, not a thread. Blocking world code runs in a pool of as many threads."""

    in_process = True

    def __init__(self, config: RunConfig) -> None:
        self.max_concurrency = config.max_concurrency

    def run(self, job: Job, todo: list[tuple[Task, int]], store: ResultStore, *, on_result: OnResult | None = None,
            may_start: MayStart | None = None) -> int:
        return run_episodes(job.episodes(), todo, store, max_concurrency=self.max_concurrency, on_result=on_result,
                            may_start=may_start)


def run_episodes(episodes: Episodes, tasks: list[tuple[Task, int]], store: ResultStore, *,
                 max_concurrency: int = 32, on_result: OnResult | None = None,
                 may_start: MayStart | None = None) -> int:
    """Evaluate (task, trial) pairs concurrently on the harness loop, appending each result to ``store`` as soon as
    it is final. A pair is started only while ``may_start()`` holds (a run-wide budget); returns how many were not
    started."""
    set_blocking_threads(max_concurrency)
    return run_sync(arun_episodes(episodes, tasks, store, max_concurrency=max_concurrency, on_result=on_result,
                                  may_start=may_start))


async def arun_episodes(episodes: Episodes, tasks: list[tuple[Task, int]], store: ResultStore, *,
                        max_concurrency: int = 32, on_result: OnResult | None = None,
                        may_start: MayStart | None = None) -> int:
    """The episodes as tasks of the running loop. Pairs are started as others finish, after each finished one is
    recorded: ``may_start`` sees every result before it. Each result goes to the store as its episode ends, and
    nothing of it is kept here, so memory stays flat however many episodes a run has."""
    queue = deque(tasks)
    not_started = 0
    running: set[asyncio.Task[Result]] = set()
    # Each episode posts itself here when done: waiting on the whole running set instead (asyncio.wait) costs time
    # in proportion to it at every wake-up, 30 ms at ten thousand.
    finished: asyncio.Queue[asyncio.Task[Result]] = asyncio.Queue()
    try:
        with Collector() as collector:
            collector.watch()
            while queue or running:
                started = 0
                while queue and len(running) < max_concurrency:
                    task, trial = queue.popleft()
                    if may_start is not None and not may_start():
                        not_started += 1
                        continue
                    episode = asyncio.ensure_future(episodes.aevaluate(task, trial))
                    episode.add_done_callback(finished.put_nowait)
                    running.add(episode)
                    started += 1
                    if started % RAMP == 0:
                        await asyncio.sleep(0.005)
                if not running:
                    break
                done = await finished.get()
                running.discard(done)
                record(done.result(), store, on_result)
    except BaseException:
        for unfinished in running:
            unfinished.cancel()
        raise
    return not_started


def record(result: Result, store: ResultStore, on_result: OnResult | None) -> None:
    """A finished episode into the store, then to whoever follows the run."""
    store.append(result)
    if on_result:
        on_result(result)
