"""Any task of any suite as a Gymnasium environment, for trainers that step tool-using agents with RL.

An episode is one task in a fresh world, built by the engine's
:class:`~occubench.engine.factory.EpisodeFactory` as ``occubench.run`` builds it: the suite's plan, its models, the
simulator's fault rules and, for the harness injection, a :class:`~occubench.core.faults.FaultInjector` around the
world.

- ``reset()`` returns the task's instruction; ``info`` holds ``task_id``, ``tools`` (OpenAI function schemas),
  ``system_prompt`` (what the built-in agent is told) and ``max_steps``.
- A step is one agent turn: a tool call ``{"name": tool, "arguments": {...} or JSON text}`` or the final answer
  ``{"answer": text}``, as a mapping or its JSON text. A call goes through the agent loop's tool contract: an
  unknown tool, or arguments that are not one JSON object, never reach the world; otherwise the world answers. The
  observation is the JSON text of the tool's answer (the tool message the agent loop sends), the reward 0, or
  ``-malformed_penalty`` for a malformed call (unknown tool, arguments that are not JSON or do not match the
  tool's parameters, an action that is neither a call nor an answer; ``info["malformed"]``). An image in the
  tool's answer is given as its text (:mod:`occubench.core.images`): the observation is text.
- The answer ends the episode (``terminated``): the suite's verifier judges the trajectory and the reward is its
  verdict, 1.0 or 0.0 (a workplace day: its score in [0, 1]); ``info`` then holds ``is_correct``, ``feedback``,
  ``votes``, ``verdict_details``, ``stop_reason``, ``env_info`` and, with harness faults, ``fault_events`` and
  ``fault_windows`` (the record a run writes, built by the same code). After
  ``max_steps`` turns without an answer the episode is ``truncated`` and judged on what was done, as the harness
  judges an agent stopped by ``--max-steps`` (the reward is the verdict, less the penalty if that last call was
  malformed). Use ``max_steps`` rather than Gymnasium's ``max_episode_steps``, whose cut is never judged.
- A failure that is not the agent's (an endpoint that stays down, a simulator or judge that gives nothing usable)
  ends the episode ``truncated`` with reward 0 and ``info["error"] = {"kind": ..., "message": ...}`` (the kinds
  of a result's error): leave such episodes out of training, as a run leaves them out of its score.
- An action may carry the tokens of the policy that wrote it, ``"tokens": {"prompt_ids": [...], "completion_ids":
  [...], "logprobs": [...]}`` (as :class:`~occubench.gym.policy.EndpointPolicy` returns them, from the endpoint):
  the turn keeps them on its ``Step.tokens`` (:class:`~occubench.llm.types.Tokens`'s fields), so the judged
  trajectory holds them, as ``--record-tokens`` keeps a run's. Tokens that are not lists of ids and of finite
  numbers are left out, never an error: they change nothing else, the reward least of all.
"""

from __future__ import annotations

import copy
import datetime
import json
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium
from gymnasium import spaces
from gymnasium.error import ResetNeeded

from occubench.config import RunConfig
from occubench.core.agent import make_call, system_prompt
from occubench.core.environment import Environment
from occubench.core.episode import WorldReport, episode_result
from occubench.core.task import Task
from occubench.core.tools import json_arguments, tool_error
from occubench.core.trajectory import Step, ToolCall, Trajectory
from occubench.core.verifier import averdict
from occubench.engine.factory import EpisodeFactory
from occubench.errors import ConfigError, OccuBenchError, error_kind
from occubench.llm import Model, ResponseCache
from occubench.llm.types import Tokens
from occubench.util.aio import run_sync
from occubench.util.console import rich_console
from occubench.util.jsonsafe import dumps
from occubench.util.redact import Redactor

#: Longest observation, in characters: far beyond any instruction or tool answer (whose strings are cut at 1M).
MAX_OBSERVATION = 1 << 24
#: Longest action in the action space (a model's output); longer ones are still taken.
MAX_ACTION = 1 << 18
#: What ``info`` holds of the episode's record when it ends.
JUDGED = ("is_correct", "feedback", "votes", "verdict_details", "env_info", "fault_events", "fault_windows")
ACTION_FORMAT = ('an action is a tool call {"name": "<tool>", "arguments": {...}} or the final answer '
                 '{"answer": "<text>"}, as an object or its JSON text')


class AnyText(spaces.Text):
    """Text of any Unicode characters, up to ``max_length``: Gymnasium's Text admits only its charset, and an
    instruction or an observation may hold any. Samples are printable ASCII."""

    def __init__(self, max_length: int) -> None:
        super().__init__(max_length, min_length=0, charset=string.printable)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length


@dataclass(frozen=True)
class Call:
    name: str
    #: As JSON text, as a model writes them; read by :func:`occubench.core.tools.json_arguments` like a model's.
    arguments: str


@dataclass(frozen=True)
class Answer:
    text: str


def _decoded(action: object) -> object:
    """What an action given as JSON text holds (ValueError when it is not JSON); any other action as it is."""
    if not isinstance(action, str):
        return action
    try:
        return json.loads(action)
    except (ValueError, RecursionError):
        raise ValueError(f"the action is not JSON: {ACTION_FORMAT}") from None


def read_action(action: object) -> Call | Answer:
    """The call or answer ``action`` stands for (other keys, such as a call's ``id`` or ``tokens``, are ignored);
    ValueError, saying what an action is, when it stands for neither."""
    action = _decoded(action)
    if isinstance(action, Mapping) and ("name" in action) != ("answer" in action):
        if isinstance(action.get("answer"), str):
            return Answer(action["answer"])
        name, arguments = action.get("name"), action.get("arguments", "")
        if isinstance(name, str):
            if isinstance(arguments, str):
                return Call(name, arguments)
            try:
                # NaN is written as is, so that json_arguments refuses it as it refuses a model's.
                return Call(name, json.dumps(arguments))
            except (TypeError, ValueError, RecursionError):
                raise ValueError(f"the arguments are not a JSON value: {ACTION_FORMAT}") from None
    raise ValueError(ACTION_FORMAT)


def action_tokens(action: object) -> dict[str, Any] | None:
    """The policy's tokens ``action`` carries, as ``Step.tokens`` keeps them; None when it carries none that read
    (see the module docstring)."""
    try:
        action = _decoded(action)
    except ValueError:
        return None
    tokens = Tokens.read(action.get("tokens")) if isinstance(action, Mapping) else None
    return None if tokens is None else tokens.to_dict()


class OccuBenchEnv(gymnasium.Env[str, Any]):
    """One task of a suite (see the module docstring).

    ``suite`` is an installed suite's name or ``package.module:attribute``; ``task_id`` one of its tasks (the
    first when None; ``reset(options={"task_id": ...})`` switches to another). ``config`` holds the run settings
    that apply (models and endpoints, ``max_steps``, ``env_mode``, ``fault_mode``, ``fault_count``,
    ``fault_duration``, ``seed``, ``num_votes``, ``cache``, data paths, ``days``...); ``settings`` override them by
    name (``world_model="gpt-4o"``), but give API keys in ``config`` or ``OPENAI_API_KEY``: Gymnasium keeps
    ``settings`` in the env's spec, in clear. ``models`` are models for the roles the suite needs (``world``,
    ``verifier``, ``npc``); the others are built from the config, as ``occubench.run`` builds them.
    """

    # render_fps only quiets Gymnasium's checker: text frames have no rate (its own text environments give 4).
    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, suite: str, task_id: str | int | None = None, *, config: RunConfig | None = None,
                 models: Mapping[str, Model] | None = None, malformed_penalty: float = 0.0,
                 render_mode: str | None = None, **settings: Any) -> None:
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode {render_mode!r}: only 'ansi' (the trajectory as text) or None")
        self.config = RunConfig.create({**(dict(config) if config else {}), "suite": suite, **settings})
        self._redactor = Redactor(self.config.secrets())  # info goes to a trainer's logs
        given = dict(models or {})
        self._factory = EpisodeFactory.create(self.config, rich_console(stderr=True), given=given)
        self.tasks = self._factory.plan.tasks
        self.task = self._task(task_id)
        self._cache = ResponseCache(self.config.cache, replay=self.config.replay) if self.config.cache else None
        # The suite's own roles only: a trainer's policy is the agent.
        built = self._factory.models({role: name for role, name in self._factory.roles.items() if role != "agent"},
                                     cache=self._cache)
        self.suite = self._factory.suite({**built, **given})
        self.malformed_penalty = malformed_penalty
        self.render_mode = render_mode
        self.observation_space = AnyText(MAX_OBSERVATION)
        self.action_space = AnyText(MAX_ACTION)
        self.trajectory = Trajectory()
        self._date = self.config.date or datetime.date.today().isoformat()
        self._fault_seed = self.config.seed
        self._world: Environment | None = None
        self._env_calls = 0

    def _task(self, task_id: object) -> Task:
        found = next((task for task in self.tasks if task_id is None or str(task.task_id) == str(task_id)), None)
        if found is None:
            shown = ", ".join(str(task.task_id) for task in self.tasks[:5])
            raise ConfigError(f"no task {task_id!r} in suite {self.config.suite} ({len(self.tasks)} tasks: {shown}"
                              f"{', ...' if len(self.tasks) > 5 else ''})")
        return found

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
              ) -> tuple[str, dict[str, Any]]:
        """A fresh world for the task. ``seed`` also fixes the schedule of harness-injected faults from then on (the
        config's ``seed`` until one is given: as in a run, every episode of a task meets the same faults)."""
        super().reset(seed=seed)
        if options and "task_id" in options:
            self.task = self._task(options["task_id"])
        if seed is not None:
            self._fault_seed = seed
        self._close_world()
        world = self._factory.world(self.suite, self.task, self._fault_seed)
        self._world, self._env_calls = world, 0
        self.trajectory = Trajectory(system_prompt=system_prompt(self.task, self._date, self.config.with_plan))
        # Copies: a trainer keeps what it is given, and the schemas are the world's own objects.
        return self.task.instruction, {"task_id": self.task.task_id, "system_prompt": self.trajectory.system_prompt,
                                       "tools": copy.deepcopy([spec.schema() for spec in world.tools()]),
                                       "max_steps": self.config.max_steps}

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """One agent turn: a tool call or the final answer (see the module docstring)."""
        if self._world is None or self.trajectory.stop_reason:
            raise ResetNeeded("the episode is over (or was never started): call reset() before step()")
        info: dict[str, Any] = {"step": len(self.trajectory.steps) + 1, "malformed": False}
        observation, reward = "", 0.0
        try:
            observation, info["malformed"] = self._turn(action, self._world)
            reward = -self.malformed_penalty if info["malformed"] else 0.0
            if self.trajectory.stop_reason:
                reward += self._judge(self._world, info)
        except OccuBenchError as exc:
            # Not the agent's doing: a trainer must be able to leave the episode out rather than learn from it.
            self.trajectory.stop_reason = "error"
            info["error"] = {"kind": error_kind(exc), "message": self._redactor.text(str(exc))}
            reward = 0.0
        if self.trajectory.stop_reason:
            info["stop_reason"] = self.trajectory.stop_reason
        terminated = self.trajectory.stop_reason == "answer"
        return observation, reward, terminated, bool(self.trajectory.stop_reason) and not terminated, info

    def _turn(self, action: object, world: Environment) -> tuple[str, bool]:
        """Play one turn into the trajectory as the agent loop records it; (observation, whether malformed)."""
        try:
            decoded = _decoded(action)  # JSON text read once, for its tokens and its request
        except ValueError:
            decoded = action  # not JSON: no tokens, and read_action says what is wrong
        turn = Step(content=None, tokens=action_tokens(decoded))
        self.trajectory.steps.append(turn)
        try:
            request = read_action(decoded)
        except ValueError as exc:
            turn.tool_calls.append(ToolCall("", action if isinstance(action, str) else dumps(action),
                                            tool_error("invalid_arguments", str(exc))))
            malformed = True
        else:
            if isinstance(request, Answer):
                turn.content = self.trajectory.final_answer = request.text
                self.trajectory.stop_reason = "answer"
                return "", False
            turn.tool_calls.append(ToolCall(request.name, request.arguments, {}))
            malformed = self._call(turn.tool_calls[-1], world)
        if len(self.trajectory.steps) >= self.config.max_steps:
            self.trajectory.stop_reason = "max_steps"
        return json.dumps(turn.tool_calls[-1].observation, ensure_ascii=False), malformed

    def _call(self, record: ToolCall, world: Environment) -> bool:
        """Make the call as the agent loop does (:func:`occubench.core.agent.make_call`); True when malformed: it did
        not reach the world, or its arguments fail the tool's schema (the world answered with an error)."""
        specs = world.tools()
        if not run_sync(make_call(world, specs, record, self._env_calls)):
            return True
        self._env_calls += 1
        spec = next(spec for spec in specs if spec.name == record.name)
        return spec.check(json_arguments(record.arguments)) is not None

    def _judge(self, world: Environment, info: dict[str, Any]) -> float:
        """The verdict, recorded as a run records an episode's end (:func:`episode_result`), into ``info``."""
        verdict = run_sync(averdict(self.suite.averify(self.task, self.trajectory, world)))
        result = episode_result(self.task, self.trajectory, {}, verdict=verdict, world=WorldReport.of(world))
        record = result.to_dict()
        info.update({key: record[key] for key in JUDGED})
        return verdict.reward

    def render(self) -> str | None:
        return self.trajectory.render() if self.render_mode == "ansi" else None

    def close(self) -> None:
        self._close_world()
        if self._cache is not None:
            self._cache.close()

    def _close_world(self) -> None:
        world, self._world = self._world, None
        if world is not None:
            world.close()
