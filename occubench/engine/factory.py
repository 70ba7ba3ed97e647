"""The one place episodes are assembled: from a run's config, the suite's plan, the models of its roles, the agent,
each task's world with its wrappers (the harness fault injection), the verifier and the limits.

``occubench.run`` (and so the matrix, rescoring and synthesis's calibration), Ray workers, Gymnasium, the rollout
pool and Inspect all build their episodes through an :class:`EpisodeFactory`; none builds a world or an agent of
its own.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from occubench import telemetry
from occubench.config import FAULT_LEVELS, Endpoint, RunConfig, is_outside
from occubench.core.agent import NOOP, Agent, ToolCallingAgent
from occubench.core.environment import Environment
from occubench.core.episode import Episodes, StepLimit, WrapWorld
from occubench.core.faults import FaultInjector, fault_prompt
from occubench.core.hints import LIVE_DIR, LiveHints
from occubench.core.suite import Suite, SuiteDefinition, SuitePlan
from occubench.core.task import Task
from occubench.core.traced import ToolSpans
from occubench.engine.identity import config_hash, default_run_name, safe_name
from occubench.engine.models import build_models
from occubench.engine.registry import AgentContext, load_agent, load_suite
from occubench.errors import ConfigError
from occubench.hub.worlds import with_worlds
from occubench.llm.cache import current_trial
from occubench.llm.ledger import TaskLimits
from occubench.util.console import rich_console

if TYPE_CHECKING:
    from occubench.core.results import Result
    from occubench.engine.rescore import SavedEpisodes
    from occubench.llm import LLMClient, Model
    from occubench.llm.cache import Cache
    from occubench.llm.limiter import Limiter

#: What plays ``--agent mcp`` and ``--agent command:...``: episodes served over MCP.
OUTSIDE_AGENTS = "occubench.mcp.episodes:outside_agent"
@dataclass
class EpisodeFactory:
    """What a run's episodes are made of, from its config alone: the suite and its plan, the model of each role the
    run calls, the agent, how faults are made. Build one with :meth:`create`."""

    config: RunConfig
    definition: SuiteDefinition
    plan: SuitePlan
    #: Model name of each role the run calls (the agent's, unless it is scripted, and the suite's).
    roles: dict[str, str]
    #: The results' ``agent_model``.
    agent_label: str
    #: "prompt" (the simulator is told to misbehave) or "harness" (a wrapper injects faults); None in E0.
    injection: str | None

    @classmethod
    def create(cls, config: RunConfig, console: Console | None = None, *, plan: SuitePlan | None = None,
               given: Collection[str] = ()) -> EpisodeFactory:
        """The factory of ``config``'s suite (its ``plan`` when the caller has it already); bad input raises
        :class:`ConfigError`. The suite's roles in ``given`` are played by models the caller brings (Inspect's,
        a trainer's); every other needs its model in the config."""
        definition = load_suite(config.suite)
        definition.refuse_unread(config)
        config = with_worlds(config)
        plan = plan or definition.plan(config, console or rich_console(quiet=True))
        if not plan.tasks:
            raise ConfigError("no task matches --task-ids/--categories/--difficulty")
        for role, name in plan.roles.items():
            if not name and role not in given:
                raise ConfigError(f"--{role}-model is required: the {definition.name} suite needs a {role} model")
        # No agent model to call: scripted, rescored, or an outside agent (it brings its own).
        scripted = config.agent in ("reference", "noop") or bool(config.rescore) or is_outside(config.agent)
        roles = {**({"agent": config.agent_model} if config.agent_model and not scripted else {}),
                 **{role: name for role, name in plan.roles.items() if name and role not in given}}
        return cls(config, definition, plan, roles, _agent_label(config), fault_injection(config, plan))

    @property
    def harness(self) -> bool:
        return self.injection == "harness"

    @property
    def fault_rules(self) -> str | None:
        """What the simulator is told to do wrong (the prompt fault injection); None otherwise."""
        config = self.config
        return fault_prompt(config.env_mode, config.fault_count, config.fault_duration) \
            if self.injection == "prompt" else None

    @property
    def identity(self) -> dict[str, Any]:
        """What the run's task set is made of (see :class:`occubench.core.suite.TaskSet`)."""
        return self.plan.task_set.identity if self.plan.task_set else {}

    # -- what a run records ----------------------------------------------------------------------------------

    def describe(self, date: str, rescored: SavedEpisodes | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """The fields every result carries, ``config_hash`` among them, and the settings that hash is made of."""
        config, faulted = self.config, self.injection is not None
        run_fields: dict[str, Any] = {
            "agent_model": self.agent_label, "world_model": self.plan.world_label, "env_mode": config.env_mode,
            "fault_count": config.fault_count if faulted else 0,
            "fault_duration": config.fault_duration if faulted else 0,
            "with_plan": config.with_plan, "verifier_model": self.roles.get("verifier"),
            "npc_model": self.roles.get("npc"), "suite": self.definition.name,
            "fault_mode": self.injection, "seed": config.seed if self.harness else None}
        # Settings that only some runs have join the identity when they are set: a run without them keeps the
        # identity it had before each was added.
        when_set = {"rescore_of": rescored.config_hash if rescored else None,
                    "max_tokens_per_task": config.max_tokens_per_task,
                    "max_seconds_per_task": config.max_seconds_per_task, "history_window": config.history_window,
                    "agent_images": config.agent_images or None,
                    "context_window": config.context_window, "guidance": config.guidance or None,
                    "agent_command": config.agent if config.agent.startswith("command:") else None,
                    "reflection_model": self.roles.get("reflection"), "worlds_digest": config.worlds_digest,
                    "live_hints": config.live_hints or None}
        meaning = {**run_fields, "date": date, "max_steps": config.max_steps, "num_votes": config.num_votes,
                   **{f"{role}_params": config.role_params(role) for role in self.roles},
                   **{key: value for key, value in when_set.items() if value is not None}, **self.identity}
        return {**run_fields, "config_hash": config_hash(meaning)}, meaning

    def folder_name(self, rescored: SavedEpisodes | None = None) -> str:
        """The default run directory: readable (agent, world or suite, fault level, faults; or the rescored run and its
        judge) and ending in a short hash of every setting of the run's identity, so two runs that differ in any
        never share a directory. The date is left out: a resumed run takes its date from the directory."""
        config = self.config
        _, meaning = self.describe("", rescored)
        named = {key: value for key, value in meaning.items() if key != "date"}
        if config.worlds:  # by the reference, not what it names now: the same command finds its folder again, and
            # refuses to add to it once the reference names another package
            named = {**{k: v for k, v in named.items() if k not in ("worlds_digest", "task_content")},
                     "worlds": config.worlds}
        short = config_hash(named)[:8]
        if rescored:
            return safe_name(f"{rescored.source.name}__rescored_{self.plan.roles['verifier']}__{short}")
        return default_run_name(self.agent_label, self.plan.world_label or self.definition.name, config.env_mode,
                                config.fault_count, config.fault_duration, config.seed if self.harness else None) + \
            (f"__guidance{config.guidance}" if config.guidance else "") + \
            ("__live-hints" if config.live_hints else "") + f"__{short}"

    # -- the parts of an episode -----------------------------------------------------------------------------

    def models(self, roles: Mapping[str, str] | None = None, *, cache: Cache | None = None,
               clients: dict[Endpoint, LLMClient] | None = None,
               limiter: Callable[[Endpoint], Limiter] | None = None) -> dict[str, Model]:
        """The models of ``roles`` (default: every role the run calls), as :func:`build_models` makes them."""
        chosen = self.roles if roles is None else roles
        return build_models(self.config, [self.config.model_role(role, name) for role, name in chosen.items()],
                            cache, clients, limiter=limiter)

    def agent(self, models: Mapping[str, Model], date: str) -> Agent:
        """The agent under evaluation: the model's tool-calling loop, a suite's scripted solutions, or the user's."""
        config = self.config
        if config.agent == "llm":
            return ToolCallingAgent(models["agent"], max_steps=config.max_steps, with_plan=config.with_plan,
                                    date=date, history_window=config.history_window, images=config.agent_images)
        if config.agent in ("reference", "noop"):
            if self.plan.reference is None:
                raise ConfigError(f"--agent {config.agent} needs a suite with reference solutions (executable, "
                                  f"workplace); {config.suite} has none")
            return self.plan.reference if config.agent == "reference" else NOOP
        if is_outside(config.agent):  # by name, as suites are: the engine does not import the MCP integration
            return load_agent(OUTSIDE_AGENTS, AgentContext(config, None, date))
        return load_agent(config.agent, AgentContext(config, models.get("agent"), date))

    def suite(self, models: Mapping[str, Model], phase: SuitePlan | None = None) -> Suite:
        """The suite of ``phase`` (default: the first) with its models and the simulator's fault rules."""
        return (phase or self.plan).make(dict(models), self.fault_rules)

    @property
    def live_dir(self) -> Path | None:
        """With ``--live-hints``, the run directory's ``live/`` folder (:mod:`occubench.core.hints`); else None."""
        config = self.config
        if not config.live_hints:
            return None
        return Path(config.output_dir) / (config.run_name or self.folder_name()) / LIVE_DIR

    def wrapper(self, seed: int | None = None) -> WrapWorld:
        """What wraps each fresh world: harness-injected faults, the same for every episode of a task (seeded by the
        task and ``seed``, the config's by default), a span per tool call when traced, then, with ``--live-hints``,
        the calls shown to the viewer and its hints handed over (after the faults: a hint is never faulted), then
        the engine's hold on ``--max-steps``."""
        config = self.config
        fault_seed = config.seed if seed is None else seed
        harness = self.harness
        live = self.live_dir

        def wrap(env: Environment, task: Task) -> Environment:
            if harness:
                env = FaultInjector(env, config.env_mode, config.fault_count, config.fault_duration, fault_seed,
                                    task.task_id)
            if telemetry.active() is not None:  # outside the faults: a span sees what the agent sees
                env = ToolSpans(env)
            if live is not None:  # the episode's trial is the context's (Episodes.aevaluate sets it)
                env = LiveHints(env, live, task, current_trial.get())
            return StepLimit(env, config.max_steps)
        return wrap

    def world(self, suite: Suite, task: Task, seed: int | None = None) -> Environment:
        """A fresh world for one episode of ``task``, wrapped as a run wraps it."""
        return self.wrapper(seed)(suite.world(task), task)

    def episodes(self, models: Mapping[str, Model], agent: Agent, run_fields: dict[str, Any],
                 phase: SuitePlan | None = None, run: str = "") -> Episodes:
        """Everything evaluating ``phase``'s episodes of run ``run`` takes, bound together."""
        config = self.config
        return Episodes(self.suite(models, phase), agent, run_fields, self.wrapper(),
                        TaskLimits(config.max_tokens_per_task, config.max_seconds_per_task), run)

    def phase(self, follow_ups: Sequence[dict[tuple[Any, int], Result]] = ()) -> SuitePlan:
        """The plan of the phase reached through ``follow_ups`` (the results each later phase was made from)."""
        phase = self.plan
        for results in follow_ups:
            if phase.follow_up is None:
                raise ValueError("more follow-up results than the suite has phases")
            phase = phase.follow_up(results)
        return phase

    def build(self, date: str, follow_ups: Sequence[dict[tuple[Any, int], Result]] = (), *,
              cache: Cache | None = None, limiter: Callable[[Endpoint], Limiter] | None = None, run: str = "",
              ) -> tuple[list[Task], Episodes]:
        """A phase's tasks and episodes, whole, as an executor's worker builds them from the config alone."""
        models = self.models(cache=cache, limiter=limiter)
        phase = self.phase(follow_ups)
        run_fields, _ = self.describe(date)
        return phase.tasks, self.episodes(models, self.agent(models, date), run_fields, phase, run)


def today() -> str:
    return datetime.date.today().isoformat()


def fault_injection(config: RunConfig, plan: SuitePlan) -> str | None:
    """How E1–E3 faults are made: "prompt" (the simulator is told to misbehave: the paper's method, the default
    where the world is simulated) or "harness" (a wrapper injects them); None in E0."""
    if not FAULT_LEVELS[config.env_mode].kinds:
        return None
    injection = config.fault_mode or ("prompt" if plan.simulated else "harness")
    if injection == "prompt" and not plan.simulated:
        raise ConfigError(f"--fault-mode prompt needs a simulated world; {config.suite} faults are injected by the "
                          "harness (--fault-mode harness)")
    return injection


def _agent_label(config: RunConfig) -> str:
    if config.agent == "llm":
        return config.agent_model or ""
    if config.agent in ("reference", "noop"):
        return config.agent
    if is_outside(config.agent):  # the model it brings, if it says which
        name = config.agent.partition(":")[0]
        return f"{name}:{config.agent_model}" if config.agent_model else name
    name = config.agent.rpartition(":")[2]
    return f"{name}:{config.agent_model}" if config.agent_model else name
