"""Sessions and episodes: what an OpenEnv client's requests do, whatever carries them (WebSocket or HTTP).

A session plays one episode at a time. ``reset`` starts the run's next pending episode, or one of the task it names
(``task_id``); the episode is the engine's own (:meth:`~occubench.core.episode.Episodes.aevaluate`: the world with
the run's wrappers, the ledger, the verifier), its agent a :class:`Player` that takes the session's calls through
the same :class:`~occubench.mcp.hub.Episode` as an outside agent over MCP, so a call runs through the same code
and is recorded the same way. The call of the ``submit`` tool is the final answer: the episode ends, is verified
and stored in the run folder, and the answer to that call carries the verdict (``done``, the reward: 1.0 for a
verdict that passes, 0.0 for one that does not, none for an episode that ended in an error, which a run does not
score). ``--max-steps``, ``--max-seconds-per-task`` and the idle timeout end an episode as they end an outside
agent's; a reset before the end, a closed session or a closed WebSocket leave it unanswered (an ``agent`` error).
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Any

from occubench.core.agent import AsyncAgent, system_prompt
from occubench.core.environment import Environment, JSONObject
from occubench.core.episode import Episodes
from occubench.core.results import Result
from occubench.core.task import Task
from occubench.core.tools import clip
from occubench.core.trajectory import Trajectory
from occubench.engine.executor import MayStart, OnResult, record
from occubench.engine.registry import AgentContext
from occubench.errors import AgentError, ConfigError
from occubench.mcp.hub import FINISH, Episode
from occubench.openenv import wire
from occubench.store import ResultStore
from occubench.util.jsonsafe import json_safe


@dataclass
class Claim:
    """An episode a session started: its task and trial, its :class:`Episode` once the world is built, its result
    once it is stored (None if it could not be)."""

    task: Task
    trial: int
    opened: asyncio.Future[Episode] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    result: asyncio.Future[Result | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future())

    @property
    def episode_id(self) -> str:
        return f"{self.task.task_id}#{self.trial}"


#: The claim of the episode whose coroutine runs: set by the pool when it starts one, read by its player.
_CLAIM: ContextVar[Claim] = ContextVar("occubench_openenv_claim")


class Player(AsyncAgent):
    """The agent of an episode an OpenEnv session plays: it hands the session the episode, then makes its calls."""

    def __init__(self, *, max_steps: int, date: str, with_plan: bool, images: bool, idle: float | None) -> None:
        self.max_steps, self.date, self.with_plan, self.images, self.idle = max_steps, date, with_plan, images, idle

    async def arun(self, task: Task, env: Environment, trajectory: Trajectory) -> None:
        claim = _CLAIM.get(None)
        if claim is None:
            raise AgentError("this agent plays the episodes OpenEnv clients start: run `occubench serve --protocol "
                             "openenv`")
        episode = Episode(task, env.tools(), system_prompt(task, self.date, self.with_plan, FINISH), self.images)
        episode.ends_with_session = False  # the session, not a transport, says when the client has gone
        episode.client = "OpenEnv client"
        episode.seen("reset")  # the idle timeout counts from the reset
        claim.opened.set_result(episode)
        await episode.play(env, trajectory, self.max_steps, self.idle, None)


def openenv(context: AgentContext) -> Player:
    """The agent of ``occubench serve --protocol openenv`` (its name is the results' ``agent_model``)."""
    config = context.config
    return Player(max_steps=config.max_steps, date=context.date, with_plan=config.with_plan,
                  images=config.agent_images, idle=config.serve_idle_timeout)


class EpisodePool:
    """A phase's pending episodes, each started when a session resets and stored as it ends. ``finished`` is set
    once none is under way and none can start (all started, or the run's budget spent)."""

    def __init__(self, episodes: Episodes, todo: Sequence[tuple[Task, int]], tasks: Sequence[Task],
                 store: ResultStore, on_result: OnResult | None, may_start: MayStart | None) -> None:
        if not isinstance(episodes.agent, Player):
            raise ConfigError("the OpenEnv server's episodes are played by its own agent: run `occubench serve "
                             "--protocol openenv`, not --agent")
        self.episodes, self.store, self.on_result, self.may_start = episodes, store, on_result, may_start
        self.pending = list(todo)
        self.known = {str(task.task_id) for task in tasks}
        self.running: set[asyncio.Task[None]] = set()
        self.finished = asyncio.Event()
        #: What went wrong storing a result: the run stops with it.
        self.failure: BaseException | None = None
        self._settle()

    def _open(self) -> bool:
        return self.may_start is None or self.may_start()

    def _settle(self) -> None:
        if self.failure is not None or not self.running and (not self.pending or not self._open()):
            self.finished.set()

    def _pick(self, asked: int | str | None) -> int:
        if asked is None:
            if not self.pending:
                raise wire.ProtocolError("no episode is left to start: the run's other episodes are under way")
            return 0
        found = next((index for index, (task, _) in enumerate(self.pending) if str(task.task_id) == str(asked)), None)
        if found is not None:
            return found
        if str(asked) in self.known:
            raise wire.ProtocolError(f"task {clip(repr(asked), 200)}: each of its episodes is under way or done",
                                     wire.TASK_TAKEN)
        raise wire.ProtocolError(f"no task {clip(repr(asked), 200)} in this run's task set")

    async def start(self, asked: int | str | None) -> tuple[Claim, Episode]:
        """Start a pending episode (of task ``asked``, else the next) and wait until its world is open."""
        if self.finished.is_set():
            raise wire.ProtocolError("the run is over: no episode is left to start", wire.SESSION_ERROR)
        index = self._pick(asked)
        if not self._open():
            raise wire.ProtocolError("the run reached its --max-cost: no episode starts", wire.SESSION_ERROR)
        task, trial = self.pending.pop(index)
        claim = Claim(task, trial)
        token = _CLAIM.set(claim)
        try:
            running = asyncio.ensure_future(self._evaluate(claim))
        finally:
            _CLAIM.reset(token)
        self.running.add(running)
        running.add_done_callback(self._ended)
        either: list[asyncio.Future[Any]] = [claim.opened, claim.result]
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if claim.opened.done():
            return claim, claim.opened.result()
        result = claim.result.result()
        why = result.error.message if result is not None and result.error else "it could not be stored"
        raise wire.ProtocolError(f"task {clip(str(task.task_id), 200)}: the episode could not start: {why}",
                                 wire.EXECUTION_ERROR, wire.SERVER_ERROR)

    async def _evaluate(self, claim: Claim) -> None:
        result: Result | None = None
        try:
            result = await self.episodes.aevaluate(claim.task, claim.trial)
            record(result, self.store, self.on_result)
        except Exception as exc:  # noqa: BLE001 - a result that cannot be stored stops the run, as it stops any run
            self.failure, result = exc, None
        finally:
            claim.result.set_result(result)

    def _ended(self, running: asyncio.Task[None]) -> None:
        self.running.discard(running)
        self._settle()

    async def stop(self) -> int:
        """Cancel the episodes under way (the run was interrupted); how many pending episodes never started."""
        for running in list(self.running):
            running.cancel()
        await asyncio.gather(*self.running, return_exceptions=True)
        return len(self.pending)

    def outcome(self, result: Result | None) -> tuple[float | None, JSONObject]:
        """The reward of a stored result (None when it is not scored) and what the client is told of it."""
        if result is None:
            return None, {"status": "error", "error": {"kind": "internal", "message": "the result was not stored"}}
        reward = float(result.is_correct) if result.ok and result.is_correct is not None else None
        told = {"task_id": result.task_id, "trial": result.trial, "status": result.status,
                "is_correct": result.is_correct, "reward": reward, "feedback": result.feedback,
                "stop_reason": result.stop_reason, "error": asdict(result.error) if result.error else None,
                "verdict_details": result.verdict_details}
        return reward, self.store.redactor.value(json_safe(told))


class Session:
    """One client's session: at most one episode at a time."""

    def __init__(self, pool: EpisodePool) -> None:
        self.pool = pool
        self.id = secrets.token_urlsafe(32)
        self.claim: Claim | None = None
        self.episode: Episode | None = None
        self.calls = 0
        self.last_seen = time.monotonic()
        #: Whether a WebSocket plays it (OpenEnv lets one at a time attach to a session).
        self.attached = False
        #: Whether its client closed it while a WebSocket played it: it closes when the WebSocket does.
        self.closing = False

    @property
    def busy(self) -> bool:
        """Whether its episode is under way."""
        return self.claim is not None and not self.claim.result.done()

    def seen(self) -> None:
        self.last_seen = time.monotonic()
        if self.episode is not None:
            self.episode.seen("request")

    def abandon(self, why: str) -> None:
        """Its episode, if under way, ends unanswered (an agent error)."""
        if self.episode is not None and not self.episode.over:
            self.episode.gone(why)

    async def reset(self, data: Any) -> JSONObject:
        claim, episode = await self.pool.start(wire.task_asked(data))  # refused: the episode under way goes on
        self.abandon("the OpenEnv client reset its session before ending the episode")
        self.claim, self.episode, self.calls = claim, episode, 0
        task = self.claim.task
        return wire.step({"task_id": task.task_id, "trial": self.claim.trial, "episode_id": self.claim.episode_id,
                          "scenario": task.scenario, "instruction": task.instruction,
                          "prompt": self.episode.instructions, "submit": self.episode.submit})

    def _playing(self) -> tuple[Claim, Episode]:
        if self.claim is None or self.episode is None:
            raise wire.ProtocolError("no episode: reset first (the tools are the episode's task's)",
                                     rpc=wire.INVALID_REQUEST)
        return self.claim, self.episode

    def tools(self) -> list[JSONObject]:
        _, episode = self._playing()
        return [wire.tool(spec) for spec in [*episode.specs, episode.submit_spec()]]

    async def call(self, name: str, arguments: JSONObject) -> tuple[JSONObject, float | None, JSONObject | None]:
        """A tool call through the episode: its result, and once the episode is over its reward and what the
        client is told of the verdict (None while it goes on)."""
        claim, episode = self._playing()
        self.calls += 1
        observation, images = await episode.call(name, arguments)
        if not episode.over:
            return wire.call_result(observation, images), None, None
        reward, told = self.pool.outcome(await asyncio.shield(claim.result))
        if name == episode.submit:  # the answer to the final answer is the verdict
            observation = {**observation, "reward": reward, "verdict": told}
        return wire.call_result(observation, images), reward, told

    async def step(self, data: Any) -> JSONObject:
        kind, name, arguments = wire.action(data)
        if kind == "list_tools":
            return wire.step({"tools": self.tools()})
        result, reward, told = await self.call(name, arguments)
        return wire.step({"tool_name": name, "result": result, "error": None}, reward=reward, done=told is not None,
                         metadata=told)

    def state(self) -> JSONObject:
        if self.claim is None:
            return {"episode_id": None, "step_count": 0}
        claim = self.claim
        done = claim.result.done()
        reward, told = self.pool.outcome(claim.result.result()) if done else (None, None)
        return {"episode_id": claim.episode_id, "step_count": self.calls, "task_id": claim.task.task_id,
                "trial": claim.trial, "done": done, "reward": reward, "verdict": told}


class Sessions:
    """The open sessions, by id (looked up by digest, so how long a lookup takes says nothing about an id), at most
    ``capacity`` at once; one no WebSocket plays that was idle ``idle`` seconds makes room for a new one."""

    def __init__(self, pool: EpisodePool, capacity: int, idle: float | None) -> None:
        self.pool, self.capacity, self.idle = pool, capacity, idle
        self.open: dict[bytes, Session] = {}
        #: Set while no session is open.
        self.none = asyncio.Event()
        self.none.set()

    def __len__(self) -> int:
        return len(self.open)

    def create(self) -> Session:
        if len(self.open) >= self.capacity:
            self._reap()
        if len(self.open) >= self.capacity:
            raise wire.ProtocolError(f"Server at capacity: {self.capacity} sessions are open (--max-concurrency)",
                                     wire.CAPACITY_REACHED, wire.SERVER_ERROR)
        session = Session(self.pool)
        self.open[_key(session.id)] = session
        self.none.clear()
        return session

    def named(self, session_id: Any) -> Session:
        session = self.open.get(_key(session_id)) if isinstance(session_id, str) else None
        if session is None:
            raise wire.ProtocolError("Unknown session_id" if session_id else "session_id is required",
                                     wire.SESSION_ERROR)
        return session

    def close(self, session: Session, why: str) -> None:
        session.abandon(why)
        self.open.pop(_key(session.id), None)
        if not self.open:
            self.none.set()

    def _reap(self) -> None:
        if self.idle is None:
            return
        now = time.monotonic()
        for session in [s for s in self.open.values() if not s.attached and now - s.last_seen >= self.idle]:
            self.close(session, f"the OpenEnv client sent nothing for {self.idle:g} s")


def _key(session_id: str) -> bytes:
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).digest()
