"""Executable worlds that run in a worker process, never in the harness: the harness's side.

An :class:`IsolatedWorld` is what the harness knows of a world loaded by a worker (its name, tools, tasks and
reference solutions: data, no code); :meth:`IsolatedWorld.environment` leases a warm worker from the world's pool
and opens an instance there. Every request has a deadline enforced from outside the worker (see
:mod:`occubench.sandbox.pool`): a call the worker cannot answer in time, a crash or a memory overrun ends the episode
as an environment error naming the tool, and the worker is replaced. Which worker: confined by the machine's
sandbox provider where there is one; otherwise, for worlds we ship or that the user trusts, a plain child process
under the same limits (see :func:`occubench.sandbox.provider_for`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from occubench.core.state import StateDiff
from occubench.core.tools import TOOL_TIME_LIMIT, JSONObject, ToolSpec
from occubench.errors import ConfigError
from occubench.executable.environment import ExecutableEnvironment, Verification, WorldEnvironment
from occubench.executable.world import Call, Check, ExecTask, World
from occubench.sandbox import Pool, Provider, WorkerFailed, pool
from occubench.sandbox.boundary import Boundary
from occubench.sandbox.lease import Lease

SERVICE = "occubench.executable.service"
#: Seconds a world may take to load (its module and SQL) or its checks to run.
LOAD_SECONDS = VERIFY_SECONDS = 30.0


def sandbox_in_use(worlds: Sequence[IsolatedWorld]) -> str:
    """What runs ``worlds``' code, for a run's metadata: the provider of their workers."""
    return "; ".join(sorted({world.pool.provider.describe() for world in worlds}))


def describe(world: World) -> dict[str, Any]:
    """What the harness needs of a world to list, plan and validate its tasks: everything but its code. A worker
    sends it for the worlds it loads; :class:`IsolatedWorld` reads it."""
    return {
        "name": world.name, "scenario": world.scenario, "category": world.category, "domain": world.domain,
        "description": world.description, "main_tables": list(world.main_tables),
        "tools": [{"name": t.name, "description": t.spec.description, "parameters": t.spec.parameters,
                   "writes": t.writes} for t in world.tools.values()],
        "tasks": [{"id": t.id, "instruction": t.instruction, "difficulty": t.difficulty, "rubric": t.rubric,
                   "reference": [asdict(c) for c in t.reference], "answer": t.answer,
                   "wrong": [asdict(c) for c in t.wrong], "wrong_answer": t.wrong_answer} for t in world.tasks],
        "state": world.snapshot(),
    }


def _verify_in_worker(initial: object, final: object, answer: str) -> list[Check]:
    raise RuntimeError("an isolated world's checks run in its worker: use its environment's verify()")


class IsolatedWorld:
    """A world loaded by a worker of ``pool``, which sees its folder as ``worker_folder``."""

    def __init__(self, reply: object, directory: Path, pool: Pool, worker_folder: str) -> None:
        self.directory, self.pool, self.worker_folder = directory, pool, worker_folder
        #: What the harness accepts of this world's workers' replies.
        self.boundary = Boundary(directory)
        #: What :func:`describe` said of the world (``reply``), once the boundary accepted it.
        self.described = description = self.boundary.world(reply)
        self.name: str = description["name"]
        self.scenario, self.category = description["scenario"], description["category"]
        self.domain, self.description = description["domain"], description["description"]
        self.main_tables = tuple(description["main_tables"])
        self.tools = {tool["name"]: ToolSpec(tool["name"], tool["description"], tool["parameters"], tool["writes"])
                      for tool in description["tools"]}
        self.tasks = [ExecTask(id=t["id"], instruction=t["instruction"], difficulty=t["difficulty"],
                               verify=_verify_in_worker, reference=[Call(**c) for c in t["reference"]],
                               answer=t["answer"], wrong=[Call(**c) for c in t["wrong"]],
                               wrong_answer=t["wrong_answer"], rubric=t["rubric"]) for t in description["tasks"]]

    def environment(self, time_limit: float = TOOL_TIME_LIMIT) -> IsolatedEnvironment:
        return IsolatedEnvironment(self, time_limit)


def open_environment(world: World | IsolatedWorld, time_limit: float | None = TOOL_TIME_LIMIT) -> WorldEnvironment:
    """An instance of ``world``: in this process for a definition, in a worker for an isolated world."""
    if isinstance(world, World):
        return ExecutableEnvironment(world, time_limit=time_limit)
    return world.environment(TOOL_TIME_LIMIT if time_limit is None else time_limit)  # a worker always has one


def builtin_isolated(root: Path, worlds: Sequence[World], provider: Provider) -> list[IsolatedWorld]:
    """The built-in ``worlds`` (folders of ``root``), described from their definitions here (our code) and run by
    workers of ``provider``, started when the first instance is opened."""
    workers = pool(provider, SERVICE, [root])
    inside = provider.path(root, 0)
    return [IsolatedWorld(describe(world), root / world.name, workers, f"{inside}/{world.name}") for world in worlds]


def load_isolated(root: Path, folders: Sequence[Path], provider: Provider,
                  service: str | None = None) -> list[IsolatedWorld]:
    """The worlds of ``folders`` (subfolders of ``root``), loaded by workers of ``provider`` that see ``root`` and
    serve ``service`` (:data:`SERVICE`, or a test's)."""
    workers = pool(provider, service or SERVICE, [root])
    worlds = []
    try:
        worker = workers.lease()
    except WorkerFailed as exc:
        raise ConfigError(f"the {provider.name} worker for {root} did not start: {exc.kind}: {exc}") from None
    try:
        for folder in folders:
            inside = f"{worker.path(0)}/{folder.relative_to(root).as_posix()}"
            try:  # the description checked at the boundary within the load's deadline
                worlds.append(worker.request("load", {"folder": inside}, LOAD_SECONDS,
                                             check=functools.partial(IsolatedWorld, directory=folder, pool=workers,
                                                                     worker_folder=inside)))
            except WorkerFailed as exc:
                # The worker names files as it sees them: name them as the user does.
                message = str(exc).replace(worker.path(0), str(root))
                raise ConfigError(message if exc.kind == "refused" else
                                  f"{folder}: the world does not load: {message}") from None
    finally:
        workers.release(worker)
    return worlds


class IsolatedEnvironment(WorldEnvironment):
    """An instance of ``world`` in a worker leased for this environment's lifetime."""

    def __init__(self, world: IsolatedWorld, time_limit: float) -> None:
        self.world = world
        self.seconds = time_limit  # the worker's limit per call; the deadline here is a little later
        self._specs = list(world.tools.values())
        self._lease = Lease(world.name, world.pool, world.boundary)
        try:
            self._instance: int = self._request("open", {"folder": world.worker_folder, "time_limit": time_limit},
                                                LOAD_SECONDS, "opening an instance")
        except BaseException:
            self._lease.close(None)
            raise

    def _request(self, op: str, args: dict[str, Any], seconds: float | None, what: str) -> Any:
        return self._lease.request(op, args, seconds, what)

    def tools(self) -> list[ToolSpec]:
        return self._specs

    def _call(self, name: str, arguments: JSONObject) -> Any:
        return self._request("call", {"instance": self._instance, "tool": name, "arguments": arguments},
                             self.seconds, f"tool {name}")

    def verify(self, task_id: str, answer: str) -> Verification:
        reply = self._request("verify", {"instance": self._instance, "task": task_id, "answer": answer},
                              VERIFY_SECONDS, f"the checks of task {task_id}")
        return Verification([Check(**check) for check in reply["checks"]], reply["diff"])

    def state_diff(self) -> StateDiff:
        return self._request("diff", {"instance": self._instance}, VERIFY_SECONDS, "the state diff")

    def table_sizes(self) -> dict[str, int]:
        return self._request("sizes", {"instance": self._instance}, VERIFY_SECONDS, "counting rows")

    def reset(self) -> None:
        self._request("reset", {"instance": self._instance}, LOAD_SECONDS, "reset")

    def close(self) -> None:
        self._lease.close({"instance": self._instance})
