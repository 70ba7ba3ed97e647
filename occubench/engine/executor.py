"""Where episodes run. An :class:`Executor` evaluates a phase's pending episodes and appends each result to the
run's store, in this process, as soon as it is final — so resume, the lock, error retry, progress and
``--max-cost`` are the run's, whichever executor ran the episodes.

``--executor NAME`` picks one among those registered under the entry-point group ``occubench.executors``:
``local`` (this process's threads, :class:`ThreadExecutor`) and ``ray`` (a Ray cluster,
:class:`occubench.distributed.executor.RayExecutor`). A third party adds one the same way.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Protocol

from occubench.core.agent import Agent
from occubench.core.episode import EnvWrapper, Episodes
from occubench.core.results import Result
from occubench.core.suite import Suite
from occubench.core.task import Task
from occubench.errors import ConfigError
from occubench.llm.ledger import TaskLimits
from occubench.store import ResultStore

if TYPE_CHECKING:
    from occubench.config import RunConfig
    from occubench.engine.factory import EpisodeFactory

GROUP = "occubench.executors"
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
    def run(self, job: Job, todo: list[tuple[Task, int]], store: ResultStore, *, on_result: OnResult | None = None,
            may_start: MayStart | None = None) -> int:
        """Evaluate the (task, trial) pairs of ``todo``, appending each result to ``store`` as it is final; returns
        how many were not started because ``may_start()`` said no."""
        ...


class ThreadExecutor:
    """Episodes in this process's threads, ``max_workers`` at once."""

    def __init__(self, config: RunConfig) -> None:
        self.max_workers = config.max_workers

    def run(self, job: Job, todo: list[tuple[Task, int]], store: ResultStore, *, on_result: OnResult | None = None,
            may_start: MayStart | None = None) -> int:
        return run_episodes(job.episodes(), todo, store, max_workers=self.max_workers, on_result=on_result,
                            may_start=may_start)


def executor_named(name: str, config: RunConfig) -> Executor:
    """The executor registered as ``name``, for ``config``'s run."""
    found = {point.name: point for point in entry_points(group=GROUP)}
    if name not in found:
        raise ConfigError(f"--executor: unknown executor {name!r}; installed: {', '.join(sorted(found)) or 'none'} "
                          "(install occubench with pip install -e . rather than running it from a source folder)")
    executor: Executor = found[name].load()(config)
    return executor


def run_tasks(suite: Suite, agent: Agent, tasks: list[tuple[Task, int]], store: ResultStore, *,
              run_fields: dict[str, Any], max_workers: int = 8, wrap: EnvWrapper | None = None,
              on_result: OnResult | None = None, limits: TaskLimits | None = None,
              may_start: MayStart | None = None) -> int:
    """Evaluate (task, trial) pairs concurrently, appending each result to ``store`` as soon as it is final. A
    pair is started only while ``may_start()`` holds (a run-wide budget); returns how many were not started."""
    return run_episodes(Episodes(suite, agent, run_fields, wrap, limits), tasks, store, max_workers=max_workers,
                        on_result=on_result, may_start=may_start)


def run_episodes(episodes: Episodes, tasks: list[tuple[Task, int]], store: ResultStore, *, max_workers: int = 8,
                 on_result: OnResult | None = None, may_start: MayStart | None = None) -> int:
    """:func:`run_tasks` in this process's threads, for episodes already assembled. Pairs are handed out from this
    thread as others finish, after each finished one is recorded: ``may_start`` sees every result before it."""
    queue = deque(tasks)
    not_started = 0
    with ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="task") as pool:
        running: set[Future[Result]] = set()
        try:
            while queue or running:
                while queue and len(running) < max_workers:
                    task, trial = queue.popleft()
                    if may_start is not None and not may_start():
                        not_started += 1
                        continue
                    running.add(pool.submit(episodes.evaluate, task, trial))
                if not running:
                    break
                done, running = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    record(future.result(), store, on_result)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return not_started


def record(result: Result, store: ResultStore, on_result: OnResult | None) -> None:
    """A finished episode into the store, then to whoever follows the run."""
    store.append(result)
    if on_result:
        on_result(result)
