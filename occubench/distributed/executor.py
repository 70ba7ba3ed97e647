"""``--executor ray``: a run's episodes as Ray tasks, this process remaining the single writer of the run directory.

Each Ray worker process is an :class:`_EpisodeWorker` actor that builds the run's episodes from its config alone
(:meth:`occubench.engine.factory.EpisodeFactory.build`: suite plan, models, agent, fault wrapper, limits) and
runs its share of ``max_concurrency`` episodes at once; each episode's :class:`Result` comes back here and is
appended as a local run's would be, so resume, the lock, error retry, progress and ``--max-cost`` work unchanged.

What the workers share lives in one :class:`_Hub` actor on this node: each endpoint's :class:`AdaptiveLimiter`,
so ``--max-connections`` and the back-off after a 429 hold for the whole cluster, and each response cache, whose
SQLite file is this machine's. API keys travel only inside the config object, in memory.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import ray
from pydantic import SecretStr
from ray.exceptions import RayError, RayTaskError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from occubench import telemetry
from occubench.config import Endpoint, RunConfig
from occubench.core.results import Result
from occubench.core.task import Task
from occubench.engine.executor import Job, MayStart, OnResult, record
from occubench.engine.factory import EpisodeFactory
from occubench.engine.models import connection_limit
from occubench.errors import OccuBenchError
from occubench.llm.cache import CacheMissError, ResponseCache
from occubench.llm.limiter import AdaptiveLimiter
from occubench.llm.types import Reply, Usage
from occubench.store import ResultStore
from occubench.util.log import setup_logging
from occubench.util.paths import user_cache_dir
from occubench.util.redact import Redactor

#: Suite settings naming files: made absolute, since workers do not share this process's working directory.
_PATHS = ("data_dir", "eval_data", "scenario_pool", "config_dir", "worlds_dir", "workplace_dir")
#: Variables of this process's environment a worker must read as it does (Ray starts workers with the environment
#: of the Ray instance, not of the run): where the user cache is — the AWM scenario folders and derived twins this
#: process wrote, which a worker on this machine then reuses — and which sandbox runs world code.
_VARIABLES = ("OCCUBENCH_CACHE_DIR", "XDG_CACHE_HOME", "OCCUBENCH_SANDBOX")


class _Hub:
    """What the workers of this process's runs share. Async: a request waiting for a slot is a queued future, not a
    blocked thread, so any number can wait without starving the cache calls."""

    def __init__(self) -> None:
        self.limiters: dict[str, AdaptiveLimiter] = {}
        self.caches: dict[tuple[str, bool], ResponseCache] = {}

    async def acquire(self, key: str, max_in_flight: int, adaptive: bool) -> int:
        if key not in self.limiters:  # the first run to use an endpoint sets its limit, as with shared clients
            self.limiters[key] = AdaptiveLimiter(max_in_flight, adaptive=adaptive)
        return await self.limiters[key].acquire()

    async def release(self, key: str, epoch: int, ok: bool, throttled: bool) -> None:
        self.limiters[key].release(epoch, ok=ok, throttled=throttled)

    async def cache_get(self, path: str, replay: bool, key: str) -> tuple[Reply, Usage] | str | None:
        try:
            return self._cache(path, replay).get(key)
        except CacheMissError as exc:
            return str(exc)  # the worker raises it again: Ray would wrap it in its own error

    async def cache_put(self, path: str, replay: bool, key: str, reply: Reply, usage: Usage) -> None:
        self._cache(path, replay).put(key, reply, usage)

    def _cache(self, path: str, replay: bool) -> ResponseCache:
        if (path, replay) not in self.caches:
            self.caches[(path, replay)] = ResponseCache(path, replay=replay)
        return self.caches[(path, replay)]


class _SharedLimiter:
    """An endpoint's limiter in the hub, as a client's :class:`occubench.llm.limiter.Limiter`."""

    def __init__(self, hub: Any, endpoint: Endpoint, max_in_flight: int, adaptive: bool) -> None:
        self.hub, self.max_in_flight, self.adaptive = hub, max_in_flight, adaptive
        # The hub knows an endpoint by a digest: its key stays out of the calls' arguments.
        self.key = hashlib.sha256(json.dumps([endpoint.base_url, endpoint.api_key]).encode()).hexdigest()

    async def acquire(self) -> int:
        return int(await self.hub.acquire.remote(self.key, self.max_in_flight, self.adaptive))

    def release(self, epoch: int, *, ok: bool, throttled: bool = False) -> None:
        self.hub.release.remote(self.key, epoch, ok, throttled)  # nothing to wait for


class _SharedCache:
    """A response cache in the hub, as a client's :class:`occubench.llm.cache.Cache`."""

    def __init__(self, hub: Any, path: str, replay: bool) -> None:
        self.hub, self.path, self.replay = hub, path, replay

    def get(self, key: str) -> tuple[Reply, Usage] | None:
        found = ray.get(self.hub.cache_get.remote(self.path, self.replay, key))
        if isinstance(found, str):
            raise CacheMissError(found)
        return found

    def put(self, key: str, reply: Reply, usage: Usage) -> None:
        # Waited for, so every answer is on disk before the run ends and the hub closes.
        ray.get(self.hub.cache_put.remote(self.path, self.replay, key, reply, usage))


def worker_environment() -> dict[str, str]:
    """The variables of :data:`_VARIABLES` and OpenTelemetry's set here, the cache folder made absolute."""
    found = {name: value for name, value in os.environ.items() if value and (name in _VARIABLES or
                                                                            name.startswith("OTEL_"))}
    if "OCCUBENCH_CACHE_DIR" in found:
        found["OCCUBENCH_CACHE_DIR"] = str(user_cache_dir().resolve())
    return found


class _EpisodeWorker:
    """One worker process: the run built from its config, running up to its ``max_concurrency`` episodes at once.
    The process is the actor's alone, so it takes ``environment`` (:func:`worker_environment`) as its own."""

    def __init__(self, config: RunConfig, follow_ups: list[dict[tuple[Any, int], Result]], hub: Any,
                 run_dir: Path, environment: dict[str, str]) -> None:
        os.environ.update(environment)
        self.config, self.follow_ups, self.hub, self.run_dir = config, follow_ups, hub, run_dir

    def prepare(self) -> None:
        config, hub = self.config, self.hub
        redactor = Redactor(config.secrets())
        telemetry.configure(config.otel, config.secrets())  # the OTEL_* variables came in its environment
        # debug.log is the run directory's: written by workers that see it (this machine, a shared filesystem).
        setup_logging(self.run_dir, debug=config.debug and self.run_dir.is_dir(), redactor=redactor, tag_tasks=True)
        limit, adaptive = connection_limit(config), not config.fixed_concurrency
        with redactor.errors():
            assert config.date is not None  # worker_config set it
            tasks, self.episodes = EpisodeFactory.create(config).build(
                config.date, self.follow_ups,
                cache=_SharedCache(hub, config.cache, config.replay) if config.cache else None,
                limiter=lambda endpoint: _SharedLimiter(hub, endpoint, limit, adaptive), run=self.run_dir.name)
        self.tasks = {task.task_id: task for task in tasks}

    def run(self, task_id: int | str, trial: int) -> Result:
        try:
            return self.episodes.evaluate(self.tasks[task_id], trial)
        finally:
            telemetry.flush()  # the actor is killed at the run's end, before any exit handler would export


# The actor classes; Ray's annotations describe remote functions, so these are used untyped.
_HubActor: Any = ray.remote(_Hub)
_WorkerActor: Any = ray.remote(_EpisodeWorker)

_lock = threading.Lock()
_users = 0  # runs of this process on Ray right now
_started = False  # whether those runs started the Ray instance (and so shut it down after the last)
_hub: Any = None


@contextmanager
def session(address: str | None) -> Iterator[None]:
    """Ray, joined at ``address`` or started here (quietly, without the dashboard), for as long as anything of this
    process uses it; a Ray this process had already joined is used as it is."""
    global _users, _started, _hub
    with _lock:
        if not ray.is_initialized():
            options: dict[str, Any] = {"address": address} if address else {"include_dashboard": False}
            ray.init(**options, logging_level=logging.ERROR)
            _started = True
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                if _hub is not None:
                    ray.kill(_hub)
                    _hub = None
                if _started:
                    ray.shutdown()
                    _started = False


def _shared_hub() -> Any:
    """The hub, made on first use in a session: the runs under way in this process share it (those of a matrix, so
    an endpoint's limit holds across them)."""
    global _hub
    with _lock:
        if _hub is None:
            here = ray.get_runtime_context().get_node_id()  # the cache files are this machine's
            _hub = _HubActor.options(num_cpus=0, max_concurrency=10_000,
                                     scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote()
        return _hub


def remote_error(exc: RayTaskError) -> Exception:
    """The worker's own error (bad input, say) rather than Ray's wrapping of it, whose text holds the remote
    traceback."""
    cause = exc.cause
    if isinstance(cause, OccuBenchError):
        return cause
    return OccuBenchError(f"a Ray worker failed: {type(cause).__name__}: {cause}")


def worker_config(config: RunConfig, date: str, settings: dict[str, Any]) -> RunConfig:
    """``config`` as the workers get it: what they would look up in this process's environment or working
    directory made explicit — the run's date, each role's endpoint and key (``OPENAI_*`` variables included),
    absolute paths, and the data the suite found or downloaded (``settings["data_paths"]``)."""
    endpoints = {role: config.endpoint(role) for role in config.roles}
    options = dict(config.suite_options)
    options.update({name: str(Path(value).resolve()) for name in _PATHS if isinstance(value := options.get(name), str)})
    options.update({name: str(Path(value).resolve()) for name, value in settings.get("data_paths", {}).items()})
    if "download" in options:  # found or fetched by this process already
        options["download"] = False
    return config.model_copy(update={
        "date": date, "suite_options": options, "cache": str(Path(config.cache).resolve()) if config.cache else None,
        **{f"{role}_base_url": endpoint.base_url for role, endpoint in endpoints.items()},
        **{f"{role}_api_key": SecretStr(endpoint.api_key) if endpoint.api_key else None
           for role, endpoint in endpoints.items()}})


class RayExecutor:
    """The ``ray`` executor (``--executor ray``): see the module docstring."""

    in_process = False

    def __init__(self, config: RunConfig) -> None:
        self.config = config

    def run(self, job: Job, todo: list[tuple[Task, int]], store: ResultStore, *, on_result: OnResult | None = None,
            may_start: MayStart | None = None) -> int:
        return run_on_ray(self.config, job.date, job.factory.plan.settings, job.follow_ups, todo, store,
                          on_result=on_result, may_start=may_start)


def run_on_ray(config: RunConfig, date: str, settings: dict[str, Any],
               follow_ups: Sequence[dict[tuple[Any, int], Result]], tasks: list[tuple[Task, int]],
               store: ResultStore, *, on_result: OnResult | None = None,
               may_start: MayStart | None = None) -> int:
    """:func:`occubench.core.episode.run_tasks` on Ray: ``tasks`` (of the phase reached through ``follow_ups``) as
    episodes on the cluster of ``config.ray_address``, each result appended to ``store`` here as it arrives. An
    episode is started only while ``may_start()`` holds; returns how many were not started."""
    if not tasks:
        return 0
    with session(config.ray_address):
        hub = _shared_hub()
        cpus = int(ray.cluster_resources().get("CPU", 1))
        count = min(config.ray_workers or cpus, config.max_concurrency, len(tasks))
        each = math.ceil(config.max_concurrency / count)
        shared, settled = ray.put(list(follow_ups)), worker_config(config, date, settings)
        # Ray's default for actors: a CPU to be placed, none held while running, so the workers of runs started
        # together (a matrix) never wait for each other's CPUs; spread over the nodes.
        workers = [_WorkerActor.options(max_concurrency=each, scheduling_strategy="SPREAD").remote(
            settled, shared, hub, store.run_dir.resolve(), worker_environment()) for _ in range(count)]
        try:
            ray.get([worker.prepare.remote() for worker in workers])
            return _dispatch(workers, each, tasks, store, on_result, may_start)
        except RayTaskError as exc:
            raise remote_error(exc) from None
        except RayError as exc:
            raise OccuBenchError(f"a Ray worker stopped ({type(exc).__name__}); finished results are saved: run the "
                                 "same command again to resume") from None
        finally:
            for worker in workers:
                ray.kill(worker)


def _dispatch(workers: list[Any], each: int, tasks: list[tuple[Task, int]], store: ResultStore,
              on_result: OnResult | None, may_start: MayStart | None) -> int:
    """Keep every worker ``each`` episodes busy; append each result as it comes back."""
    free = dict.fromkeys(range(len(workers)), each)
    running: dict[Any, int] = {}
    queue = deque(tasks)
    not_started = 0
    while queue or running:
        while queue and free[index := max(free, key=free.__getitem__)] > 0:  # the least busy worker
            task, trial = queue.popleft()
            if may_start is not None and not may_start():
                not_started += 1
                continue
            running[workers[index].run.remote(task.task_id, trial)] = index
            free[index] -= 1
        if not running:
            break
        done, _ = ray.wait(list(running), num_returns=1)
        for ref in done:
            free[running.pop(ref)] += 1
            record(ray.get(ref), store, on_result)
    return not_started
