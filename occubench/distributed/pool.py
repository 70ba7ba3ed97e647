"""Worlds on Ray for RL rollouts: ``RolloutPool(...).rollout(agent_fn, tasks, n)`` → trajectories and rewards.

Each worker process (a Ray actor) holds ``per_worker`` :class:`occubench.gym.OccuBenchEnv` instances; an episode
takes a free one and resets it to a fresh world of its task. **The actors step, the caller decides**:
``agent_fn(observation, info) -> action`` runs in the calling process — where a trainer's model lives, on its
GPU — once per step, as each episode's observation arrives, while the worlds of all episodes under way are
stepped (tool calls made, answers judged) in the actors at once. Actions and observations are those of
:mod:`occubench.gym.env`: ``{"name": tool, "arguments": {...}}`` or ``{"answer": text}``, with the policy's
``tokens`` if it keeps them (:class:`occubench.gym.EndpointPolicy` does); the reward of an episode is its verdict.
:meth:`Rollout.rows` gives an episode's tokens as the training rows of ``occubench export``.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import ray
from ray.exceptions import RayTaskError

from occubench.config import RunConfig
from occubench.distributed.executor import remote_error, session, worker_environment
from occubench.engine.rollouts import episode_rows

#: ``agent_fn(observation, info) -> action``; ``info`` is the episode's reset info (``task_id``, ``tools``,
#: ``system_prompt``, ``max_steps``) updated with its last step's, and ``episode``: its index in the rollouts.
AgentFn = Callable[[str, dict[str, Any]], Any]


@dataclass
class Rollout:
    """One episode: what the agent was given, what it did, what each action brought back and earned."""

    task_id: int | str
    #: Which of the task's ``n`` episodes this is.
    sample: int
    instruction: str
    #: The reset's info: ``tools`` (OpenAI function schemas), ``system_prompt``, ``max_steps``.
    start: dict[str, Any]
    actions: list[Any] = field(default_factory=list)
    #: The policy's tokens each action carried, as the environment kept them on its turn (None where none).
    tokens: list[dict[str, Any] | None] = field(default_factory=list)
    #: The answer to each action (a tool's output as JSON text; "" after the final answer).
    observations: list[str] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    terminated: bool = False
    truncated: bool = False
    #: The last step's info: ``is_correct``, ``feedback``, ``verdict_details``; ``error`` for an episode to leave
    #: out of training (a failure that was not the agent's).
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def reward(self) -> float:
        return sum(self.rewards)

    def rows(self) -> list[dict[str, Any]]:
        """The episode as training rows, in the format of ``occubench export`` (:mod:`occubench.engine.rollouts`)
        with its :attr:`reward` and ``trial`` its :attr:`sample`; none for an episode to leave out (``error``) or
        whose actions carried no tokens."""
        return [] if "error" in self.info else list(episode_rows(self.task_id, self.sample, self.reward, self.tokens))


class _Worlds:
    """One worker process's environments, each stepped by one episode at a time; the process is the actor's alone,
    so it takes ``environment`` (:func:`~occubench.distributed.executor.worker_environment`) as its own."""

    def __init__(self, suite: str, config: RunConfig | None, settings: dict[str, Any], slots: int,
                 environment: dict[str, str]) -> None:
        from occubench.gym import OccuBenchEnv  # gymnasium, in the worker

        os.environ.update(environment)
        self.envs = [OccuBenchEnv(suite, config=config, **settings) for _ in range(slots)]

    def ready(self) -> None:
        """Returns once the environments are built (their errors come back here)."""

    def reset(self, slot: int, task_id: int | str) -> tuple[str, dict[str, Any]]:
        return self.envs[slot].reset(options={"task_id": task_id})

    def step(self, slot: int, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        return self.envs[slot].step(action)


_WorldsActor: Any = ray.remote(_Worlds)  # Ray's annotations describe remote functions: the actor is used untyped


class RolloutPool:
    """``workers`` Ray worker processes (default: the cluster's CPUs) × ``per_worker`` environments of ``suite``.

    ``config`` and ``settings`` are those of :class:`occubench.gym.OccuBenchEnv` (models, ``max_steps``, faults,
    ``worlds_dir``...); ``address`` a Ray cluster to join (default: a local Ray instance, or the one this process
    joined). Use it as a context manager, or call :meth:`close`.
    """

    def __init__(self, suite: str = "executable", *, workers: int | None = None, per_worker: int = 8,
                 config: RunConfig | None = None, address: str | None = None, **settings: Any) -> None:
        self._actors: list[Any] = []
        self._stack = ExitStack()
        self._stack.enter_context(session(address))
        self._stack.callback(self._kill)
        count = workers or int(ray.cluster_resources().get("CPU", 1))
        # Ray's default actor resources (none held while running) and spread over the nodes, as run workers.
        self._actors = [_WorldsActor.options(max_concurrency=per_worker, scheduling_strategy="SPREAD").remote(
            suite, config, settings, per_worker, worker_environment()) for _ in range(count)]
        self.slots = [(actor, slot) for slot in range(per_worker) for actor in self._actors]
        try:
            ray.get([actor.ready.remote() for actor in self._actors])
        except RayTaskError as exc:
            self.close()
            raise remote_error(exc) from None
        except BaseException:
            self.close()
            raise

    def rollout(self, agent_fn: AgentFn, tasks: Sequence[int | str], n: int = 1) -> list[Rollout]:
        """``n`` episodes of each task, as many at once as the pool has environments; ``rollouts[i * n + j]`` is
        ``tasks[i]``'s ``j``-th. ``agent_fn`` is called here, one step at a time (see the module docstring)."""
        from occubench.gym import action_tokens  # as the environments read them (gymnasium, here too)

        rollouts: list[Rollout | None] = [None] * (len(tasks) * n)
        free = deque(self.slots)
        waiting = deque(range(len(rollouts)))
        running: dict[Any, tuple[int, Any, int]] = {}  # a reset's or a step's reply → (episode, actor, slot)
        while waiting or running:
            while waiting and free:
                episode, (actor, slot) = waiting.popleft(), free.popleft()
                running[actor.reset.remote(slot, tasks[episode // n])] = (episode, actor, slot)
            (ref,), _ = ray.wait(list(running), num_returns=1)
            episode, actor, slot = running.pop(ref)
            try:
                reply = ray.get(ref)
            except RayTaskError as exc:
                raise remote_error(exc) from None
            rollout = rollouts[episode]
            if rollout is None:
                observation, info = reply
                rollout = rollouts[episode] = Rollout(tasks[episode // n], episode % n, observation, info)
            else:
                observation, reward, rollout.terminated, rollout.truncated, rollout.info = reply
                rollout.observations.append(observation)
                rollout.rewards.append(reward)
                if rollout.terminated or rollout.truncated:
                    free.append((actor, slot))
                    continue
            action = agent_fn(observation, {**rollout.start, **rollout.info, "episode": episode})
            rollout.actions.append(action)
            rollout.tokens.append(action_tokens(action))
            running[actor.step.remote(slot, action)] = (episode, actor, slot)
        return [rollout for rollout in rollouts if rollout is not None]

    def close(self) -> None:
        self._stack.close()

    def _kill(self) -> None:
        for actor in self._actors:
            ray.kill(actor)

    def __enter__(self) -> RolloutPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
