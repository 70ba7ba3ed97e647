"""``occubench.run(config)``: one evaluation run, as a library call.

The command line only parses flags into a :class:`RunConfig` and calls :func:`run`; synthesis, Ray workers and
Inspect tasks call it the same way. Re-running a config resumes: tasks already ``ok`` in the run directory are
skipped, tasks that ended in an error are retried. One run at a time works in a directory.
"""

from __future__ import annotations

import datetime
import hashlib
import importlib.util
import json
import shutil
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rich.console import Console
from rich.markup import escape

from occubench import __version__
from occubench._lock import DirectoryLock
from occubench._log import LogRoute, end_logging, setup_logging
from occubench._redact import Redactor
from occubench.config import Endpoint, RunConfig, Settings
from occubench.environment import Environment
from occubench.errors import ConfigError, LLMError
from occubench.faults import FaultInjector, fault_prompt
from occubench.llm.ledger import TaskLimits
from occubench.plugins import AgentContext, SuiteDefinition, SuitePlan, load_agent, load_suite
from occubench.progress import RunProgress
from occubench.results import Result
from occubench.runner import EnvWrapper, Episodes, pending, pending_tasks, run_episodes
from occubench.store import ResultStore, latest_by_task, read_context, run_records
from occubench.summary import Price, Summary, load_prices, summarize
from occubench.tables import Table
from occubench.task import Task

if TYPE_CHECKING:
    from occubench.agent import Agent, ReplayAgent
    from occubench.llm import LLMClient, Model, ResponseCache
    from occubench.llm.cache import Cache
    from occubench.llm.limiter import Limiter


@dataclass
class RunSummary:
    """What a finished run holds: the latest result of every (task, trial) in its directory and their summary."""

    run_name: str
    run_dir: Path
    config_hash: str
    results: list[Result]
    summary: Summary
    #: Tables the suite adds (the workplace's figures, say).
    tables: list[Table] = field(default_factory=list)
    #: Episodes not started because the run reached ``max_cost``; the same config resumes them.
    not_started: int = 0

    @property
    def passed(self) -> int:
        return self.summary.overall.passed

    @property
    def evaluated(self) -> int:
        return self.summary.overall.evaluated

    @property
    def errors(self) -> int:
        return len(self.summary.errors)

    @property
    def completion_rate(self) -> float | None:
        return self.summary.overall.rate


def default_run_name(agent: str, world: str, mode: str, fault_count: int, fault_duration: int,
                     harness_seed: int | None = None) -> str:
    name = f"{agent}__{world}__{mode}" + (f"__fc{fault_count}_fd{fault_duration}" if mode != "E0" else "")
    if mode != "E0" and harness_seed is not None:
        name += f"__harness_s{harness_seed}"
    return safe_name(name)


def safe_name(name: str) -> str:
    # Model names such as meta-llama/Llama-3-70b or llama3:8b must not create folders or odd file names.
    return "".join(c if c.isascii() and (c.isalnum() or c in "._+-") else "_" for c in name)


def config_hash(config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


def preflight(models: dict[str, Model], endpoints: dict[str, Endpoint], budget_s: float, console: Console) -> None:
    """One tiny request per distinct endpoint and model, so a wrong key, URL or model stops the run at once."""
    seen: set[tuple[int, str, str]] = set()
    for role, endpoint in endpoints.items():
        if endpoint.base_url is None and endpoint.api_key is None:
            raise ConfigError(f"no API key for the {role}: the OpenAI API needs one (--{role}-api-key, --api-key or "
                              "OPENAI_API_KEY), or point --base-url at a server that needs none")
    for role, model in models.items():
        key = (id(model.client), model.name, json.dumps(model.params, sort_keys=True))
        if key in seen:
            continue
        seen.add(key)
        client = cast("LLMClient", model.client)  # a run's models come from build_models, on endpoints
        try:
            client.probe(model.name, model.params, budget_s=budget_s, role=role)
        except LLMError as exc:
            hint = {401: f"check --{role}-api-key, --api-key or OPENAI_API_KEY",
                    403: f"check --{role}-api-key, --api-key or OPENAI_API_KEY",
                    404: f"check --{role}-model and --{role}-base-url"}.get(getattr(exc, "status_code", 0),
                                                                             f"check --{role}-base-url and the "
                                                                             f"{role} parameters")
            raise ConfigError(f"preflight failed: {exc} ({hint})") from None
        if role == "agent":
            _probe_tools(client, model, console)


def _probe_tools(client: LLMClient, model: Model, console: Console) -> None:
    """The agent's tool-call check, after its plain request passed: a failure is the server refusing requests
    with tools as the run sends them, and says so."""
    choice = model.params.get("tool_choice", "auto")
    try:
        calls = client.probe_tools(model.name, model.params)
    except LLMError as exc:
        raise ConfigError(
            f"preflight failed: the agent's tool-call check (a request with one tool and tool_choice {choice!r}, "
            f"as the run sends them) failed, though a plain request passed: {exc}. The server does not take tools "
            "this way: start it with a function-calling chat format (llama.cpp: --jinja or --chat_format "
            "chatml-function-calling; vLLM: --enable-auto-tool-choice --tool-call-parser NAME), or pass "
            "--agent-params '{\"tool_choice\": \"omit\"}' for a server that takes tools without tool_choice; "
            "--skip-preflight skips the checks") from None
    if not calls:
        console.print("[yellow]warning: the agent endpoint answered a request that asked for a tool call "
                      "without calling it: it may ignore tools (llama.cpp needs a function-calling chat format, vLLM "
                      "--enable-auto-tool-choice with a --tool-call-parser; see docs/guides/endpoints.md)[/yellow]")


def with_server_profile(config: RunConfig, console: Console) -> RunConfig:
    """``config`` with the profile of the agent's server (``--server``, or found out from the endpoint) applied
    where the run sets nothing, and said on ``console`` (:mod:`occubench.llm.servers`)."""
    if config.agent != "llm" or config.replay or config.rescore:
        return config
    from occubench.llm.servers import PROFILES, detect

    endpoint = config.endpoint("agent")
    profile = PROFILES[config.server] if config.server != "auto" else detect(endpoint.base_url, endpoint.api_key)
    applied = {key: value for key, value in profile.settings().items() if key not in config.model_fields_set}
    if not applied:
        return config
    console.print(f"Server profile {profile.name} ({profile.source}): " +
                  ", ".join(f"--{key.replace('_', '-')} {value}" for key, value in applied.items()) +
                  " (each flag given overrides it)")
    return config.model_copy(update=applied)


def connection_limit(settings: Settings) -> int:
    """Requests in flight per endpoint at most: ``max_connections``, else 32 or ``max_workers`` if more."""
    return settings.max_connections or max(32, settings.max_workers)


def build_models(settings: Settings, roles: dict[str, str], params: dict[str, dict[str, Any]],
                 cache: Cache | None = None, clients: dict[Endpoint, LLMClient] | None = None, *,
                 limiter: Callable[[Endpoint], Limiter] | None = None) -> dict[str, Model]:
    """The model of each role in ``roles`` (role → model name, called with ``params[role]``); roles on the same
    endpoint and key share one client, its connections and its limiter — and with the runs that pass the same
    ``clients``, which holds the clients by endpoint. ``limiter`` gives each endpoint's client a limiter shared
    beyond this process (a Ray cluster's) instead of its own."""
    from occubench import llm  # the openai SDK loads only for runs that call models

    endpoints = {role: settings.endpoint(role) for role in roles}
    clients = {} if clients is None else clients
    for endpoint in set(endpoints.values()) - set(clients):
        clients[endpoint] = llm.LLMClient(endpoint.api_key, endpoint.base_url, timeout_s=settings.request_timeout,
                                          retry=llm.RetryPolicy(budget_s=settings.retry_budget),
                                          max_in_flight=connection_limit(settings),
                                          adaptive=not settings.fixed_concurrency, cache=cache,
                                          limiter=limiter(endpoint) if limiter else None)
    return {role: llm.Model(clients[endpoints[role]], name, params.get(role, {}), role)
            for role, name in roles.items()}


def role_params(config: RunConfig) -> dict[str, dict[str, Any]]:
    named = {"temperature": config.temperature, "max_tokens": config.max_tokens,
             "reasoning_effort": config.reasoning_effort}
    # Every role but the agent under test gets an output cap by default: a judge or a colleague that rambles for
    # thousands of tokens costs minutes on a one-slot server (override with --<role>-params '{"max_tokens": N}').
    agent = {**{k: v for k, v in named.items() if v is not None}, **config.agent_params}
    return {"agent": agent,
            "world": {"max_tokens": 4096, **config.world_params},
            "verifier": {"max_tokens": 2048, **config.verifier_params},
            "npc": {"max_tokens": 512, **config.npc_params},
            # The agent's own model reflects with the agent's settings; another model with defaults.
            "reflection": {"max_tokens": 2048, **(agent if config.reflection_model is None else {})}}


def _agent(config: RunConfig, models: dict[str, Model], date: str, plan: SuitePlan) -> Agent:
    if config.agent == "llm":
        from occubench.agent import ToolCallingAgent

        return ToolCallingAgent(models["agent"], max_steps=config.max_steps, with_plan=config.with_plan, date=date,
                                history_window=config.history_window)
    if config.agent in ("reference", "noop"):
        if plan.reference is None:
            raise ConfigError(f"--agent {config.agent} needs a suite with reference solutions (executable, "
                              f"workplace); {config.suite} has none")
        from occubench.executable.validate import NOOP

        return plan.reference if config.agent == "reference" else NOOP
    return load_agent(config.agent, AgentContext(config, models.get("agent"), date))


def _agent_label(config: RunConfig) -> str:
    if config.agent == "llm":
        assert config.agent_model is not None
        return config.agent_model
    if config.agent in ("reference", "noop"):
        return config.agent
    name = config.agent.rpartition(":")[2]
    return f"{name}:{config.agent_model}" if config.agent_model else name


def fault_wrapper(config: RunConfig) -> EnvWrapper:
    """Harness-mode faults around a task's world, the same for every trial of the task (seeded by the task)."""
    def wrap(env: Environment, task: Task) -> Environment:
        return FaultInjector(env, config.env_mode, config.fault_count, config.fault_duration, config.seed,
                             task.task_id)
    return wrap


@dataclass
class RunSetup:
    """What a run is made of, from its config alone: the suite and its plan, the model of each role the run calls,
    how faults are made. The run's own process builds one, and so does each Ray worker (:func:`build_episodes`),
    which is given nothing but the config."""

    definition: SuiteDefinition
    plan: SuitePlan
    roles: dict[str, str]
    agent_label: str
    #: "prompt" (the simulator is told to misbehave) or "harness" (a wrapper injects faults); None in E0.
    injection: str | None

    @property
    def harness(self) -> bool:
        return self.injection == "harness"

    def describe(self, config: RunConfig, date: str,
                 rescored: _Rescored | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """The fields every result carries, ``config_hash`` among them, and the settings that hash is made of."""
        faulted, params = self.injection is not None, role_params(config)
        run_fields: dict[str, Any] = {
            "agent_model": self.agent_label, "world_model": self.plan.world_label, "env_mode": config.env_mode,
            "fault_count": config.fault_count if faulted else 0,
            "fault_duration": config.fault_duration if faulted else 0,
            "with_plan": config.with_plan, "verifier_model": self.roles.get("verifier"),
            "npc_model": self.roles.get("npc"), "suite": self.definition.name,
            "fault_mode": self.injection, "seed": config.seed if self.harness else None}
        meaning = {**run_fields, "date": date, "max_steps": config.max_steps, "num_votes": config.num_votes,
                   **{f"{role}_params": params.get(role, {}) for role in self.roles},
                   **({"rescore_of": rescored.config_hash} if rescored else {}),
                   # Limits stop episodes as --max-steps does, and the window is what the agent sees; absent
                   # when unset, so earlier run directories match.
                   **{key: value for key in ("max_tokens_per_task", "max_seconds_per_task", "history_window",
                                             "context_window") if (value := getattr(config, key)) is not None},
                   **({"guidance": config.guidance} if config.guidance else {}),
                   **({"reflection_model": self.roles["reflection"]} if "reflection" in self.roles else {}),
                   **self.identity}
        return {**run_fields, "config_hash": config_hash(meaning)}, meaning

    @property
    def identity(self) -> dict[str, Any]:
        """What the run's task set is made of (see :class:`occubench.plugins.TaskSet`)."""
        return self.plan.task_set.identity if self.plan.task_set else {}

    def folder_name(self, config: RunConfig, rescored: _Rescored | None) -> str:
        """The default run directory: readable (agent, world or suite, mode, faults; or the rescored run and its
        judge) and ending in a short hash of every setting of the run's identity, so two runs that differ in any
        never share a directory. The date is left out: a resumed run takes its date from the directory."""
        _, meaning = self.describe(config, "", rescored)
        short = config_hash({key: value for key, value in meaning.items() if key != "date"})[:8]
        if rescored:
            return safe_name(f"{rescored.source.name}__rescored_{self.plan.roles['verifier']}__{short}")
        return default_run_name(self.agent_label, self.plan.world_label or self.definition.name, config.env_mode,
                                config.fault_count, config.fault_duration, config.seed if self.harness else None) + \
            (f"__guidance{config.guidance}" if config.guidance else "") + f"__{short}"

    def episodes(self, config: RunConfig, phase: SuitePlan, models: dict[str, Model], agent: Agent,
                 run_fields: dict[str, Any]) -> Episodes:
        return Episodes(phase.make(models, fault_rules(config, self.injection)), agent, run_fields,
                        fault_wrapper(config) if self.harness else None,
                        TaskLimits(config.max_tokens_per_task, config.max_seconds_per_task))


def setup_run(config: RunConfig, console: Console) -> RunSetup:
    """The suite's plan for ``config`` and what follows from it; bad input raises :class:`ConfigError`."""
    definition = load_suite(config.suite)
    plan = definition.plan(config, console)
    if not plan.tasks:
        raise ConfigError("no task matches --task-ids/--categories/--difficulty")
    for role, name in plan.roles.items():
        if not name:
            raise ConfigError(f"--{role}-model is required: the {definition.name} suite needs a {role} model")
    injection = fault_injection(config, plan, definition.name)
    scripted = config.agent in ("reference", "noop") or bool(config.rescore)
    roles = {**({"agent": config.agent_model} if config.agent_model and not scripted else {}),
             **{role: name for role, name in plan.roles.items() if name}}
    return RunSetup(definition, plan, roles, _agent_label(config), injection)


def fault_injection(config: RunConfig, plan: SuitePlan, suite: str) -> str | None:
    """How E1–E3 faults are made: "prompt" (the simulator is told to misbehave: the paper's method, the default
    where the world is simulated) or "harness" (a wrapper injects them); None in E0."""
    if config.env_mode == "E0":
        return None
    injection = config.fault_mode or ("prompt" if plan.simulated else "harness")
    if injection == "prompt" and not plan.simulated:
        raise ConfigError(f"--fault-mode prompt needs a simulated world; {suite} faults are injected by the harness "
                          "(--fault-mode harness)")
    return injection


def fault_rules(config: RunConfig, injection: str | None) -> str | None:
    """What the simulator is told to do wrong (prompt-mode faults, see :func:`fault_injection`); None otherwise."""
    return fault_prompt(config.env_mode, config.fault_count, config.fault_duration) if injection == "prompt" else None


def build_episodes(config: RunConfig, follow_ups: Sequence[dict[tuple[Any, int], Result]] = (), *,
                   cache: Cache | None = None, limiter: Callable[[Endpoint], Limiter] | None = None,
                   ) -> tuple[list[Task], Episodes]:
    """A run's tasks and episodes from its config alone, as a Ray worker builds them: the suite's plan (taken
    through its follow-up phases with the results each was made from), the models (with ``cache`` and each
    endpoint's ``limiter``), the agent, the fault wrapper and the limits. ``config.date`` is the run's date."""
    if config.date is None:
        raise ValueError("build_episodes needs the run's date in config.date")
    setup = setup_run(config, Console(quiet=True))  # the run's own process has said what there is to say
    models = build_models(config, setup.roles, role_params(config), cache, limiter=limiter)
    phase = setup.plan
    for results in follow_ups:
        if phase.follow_up is None:
            raise ValueError("more follow-up results than the suite has phases")
        phase = phase.follow_up(results)
    run_fields, _ = setup.describe(config, config.date)
    return phase.tasks, setup.episodes(config, phase, models, _agent(config, models, config.date, setup.plan),
                                       run_fields)


def _check_same_config(store: ResultStore, config: dict[str, Any], digest: str, force: bool, setup: RunSetup,
                       console: Console) -> dict[str, Any]:
    """Stop (exit 2, naming what differs) before any request when the directory holds results of another
    configuration, unless ``force``; the ``args.json`` fields saying which results belong to the directory from now
    on: the configuration hashes they may carry and the ids of the task set."""
    ids = sorted(setup.plan.task_set.ids, key=str) if setup.plan.task_set else None
    belongs: dict[str, Any] = {"config_hashes": [digest], **({"task_ids": ids} if ids is not None else {})}
    previous = store.previous_args()
    if not store.load():
        return belongs
    earlier = [h for h in previous.get("config_hashes") or [previous.get("config_hash")] if isinstance(h, str)]
    old = previous.get("config", {}) if isinstance(previous.get("config"), dict) else {}
    # A directory written before runs had an identity has no task-set fields: it matches on everything else.
    changed = ", ".join(f"{_named(key)} {old.get(key)!r} → {config.get(key)!r}"
                        for key in sorted(set(old) | set(config))
                        if old.get(key) != config.get(key) and not (key in setup.identity and key not in old))
    if previous.get("config_hash") not in (None, digest) and changed:
        if not force:
            raise ConfigError(f"{store.run_dir} holds results made with a different configuration ({changed}); "
                              "choose another --run-name, or pass --force to add to them anyway")
        console.print(f"[yellow]warning: --force: adding results made with a different configuration ({changed})"
                      "[/yellow]")
    old_ids = previous.get("task_ids")
    if ids is not None and isinstance(old_ids, list):  # what --force added to keeps belonging
        belongs["task_ids"] = sorted({*ids, *(i for i in old_ids if isinstance(i, (str, int)))}, key=str)
    belongs["config_hashes"] = sorted({*earlier, digest})
    return belongs


#: How a user names the settings of a run's identity that are not a flag of their own name.
_NAMES = {"task_content": "the tasks' content (data files, world configs or folders, days)", "workplace_seed": "--seed",
          "workplace_days": "--days", "agent_model": "--agent-model (or --agent)", "world_model": "--world-model",
          "seed": "--seed", "rescore_of": "the rescored run", "fault_mode": "--fault-mode",
          "npc_model": "--npc-model"}


def _named(key: str) -> str:
    """A setting of a run's identity as the user gives it: its flag, or what it stands for."""
    return _NAMES.get(key, "--" + key.replace("_", "-"))


class RunGroup:
    """What runs made together in one process share (``occubench.run_matrix``): one client per endpoint, so its
    connection limit and adaptive back-off hold across all of them; one response cache per file; and the terminal,
    where each run's progress comes as plain lines tagged with its name."""

    def __init__(self) -> None:
        self.clients: dict[Endpoint, LLMClient] = {}
        self.caches: dict[str, ResponseCache] = {}
        self.lock = threading.Lock()

    def cache(self, path: str, replay: bool) -> ResponseCache:
        from occubench.llm import ResponseCache

        with self.lock:  # opened once: each ResponseCache holds a connection to the file
            if path not in self.caches:
                self.caches[path] = ResponseCache(path, replay=replay)
            return self.caches[path]

    def close(self) -> None:
        for cache in self.caches.values():
            cache.close()


def run(config: RunConfig, *, console: Console | None = None, group: RunGroup | None = None) -> RunSummary:
    """Evaluate ``config``'s agent on its suite; returns the summary of every result in the run directory.

    Progress goes to ``console`` (stderr by default; ``Console(quiet=True)`` for none). Raises
    :class:`ConfigError` for bad input, before any request is paid for; no error message carries a secret. A
    ``KeyboardInterrupt`` leaves every finished result on disk; the same config resumes. Runs of one ``group``
    share their endpoints' clients and caches.
    """
    redactor = Redactor(config.secrets())
    with redactor.errors():
        return _run(config, console or Console(stderr=True, highlight=False), redactor, group)


def _run(config: RunConfig, console: Console, redactor: Redactor, group: RunGroup | None) -> RunSummary:
    if config.agent == "llm" and not config.agent_model:
        raise ConfigError("--agent-model is required (or --agent reference/noop on a suite with reference "
                          "solutions, or --agent module:Callable)")
    if config.replay and not config.cache:
        raise ConfigError("--replay needs --cache PATH: the cache to replay from")
    prices = load_prices(Path(config.prices)) if config.prices else None
    if config.max_cost is not None and prices is None:
        raise ConfigError("--max-cost needs --prices FILE: the prices to count the cost with")
    if config.executor == "ray" and config.rescore:
        raise ConfigError("rescoring reads the source run directory, so it runs in one process: drop --executor ray")
    if config.executor == "ray" and importlib.util.find_spec("ray") is None:
        raise ConfigError("--executor ray needs Ray: pip install 'occubench[ray]'")
    config = with_server_profile(config, console)
    setup = setup_run(config, console)
    definition, plan = setup.definition, setup.plan
    rescored = _saved_episodes(config, plan, definition.name, console) if config.rescore else None
    run_name = config.run_name or setup.folder_name(config, rescored)
    run_dir = Path(config.output_dir) / run_name
    if run_dir.exists() and not run_dir.is_dir() or Path(config.output_dir).is_file():
        raise ConfigError(f"--output-dir: {config.output_dir} holds a file where the run directory {run_dir} "
                          "should be")
    store = ResultStore(run_dir, redactor)
    date = config.date or store.previous_args().get("date") or datetime.date.today().isoformat()

    cache = None
    if config.cache and group:
        cache = group.cache(config.cache, config.replay)
    elif config.cache:
        from occubench.llm import ResponseCache

        cache = ResponseCache(config.cache, replay=config.replay)
    roles = setup.roles
    if prices is not None and config.max_cost is not None and (unpriced := set(roles.values()) - set(prices)):
        raise ConfigError(f"--max-cost: no price for {', '.join(sorted(unpriced))} in {config.prices}: their cost "
                          "could not be counted")
    if group:
        with group.lock:
            models = build_models(config, roles, role_params(config), cache, group.clients)
    else:
        models = build_models(config, roles, role_params(config), cache)
    agent = rescored.agent if rescored else _agent(config, models, date, plan)
    run_fields, meaning = setup.describe(config, date, rescored)
    digest = run_fields["config_hash"]

    # Rescoring calls only the judge: a simulated world's model is built for the suite but never asked.
    called = {role: model for role, model in models.items() if not rescored or role == "verifier"}
    preflown = config.skip_preflight or config.replay or not called
    created = next((folder for folder in [*reversed(run_dir.parents), run_dir] if not folder.exists()), None)
    # The folder is locked and its results checked against this run before any request is sent: a second run into
    # it, or one with another configuration, stops at once.
    lock = DirectoryLock(run_dir).acquire()
    preflight_failed = False
    logging_to: LogRoute | None = None
    try:
        if lock.taken_over:
            console.print(f"note: taking over {run_dir} from process {lock.taken_over}, which ended without "
                          "releasing it")
        belongs = _check_same_config(store, meaning, digest, config.force, setup, console)
        if not preflown and pending(plan.tasks, latest_by_task(store.load()), config.trials):
            preflight_failed = True
            preflight(called, {role: config.endpoint(role) for role in called}, config.retry_budget, console)
            preflight_failed, preflown = False, True
        logging_to = setup_logging(run_dir, debug=config.debug, redactor=redactor,
                                   tag_tasks=config.max_workers > 1)
        store.write_args({**config.record(), "occubench_version": __version__, "date": date, "config": meaning,
                          "config_hash": digest, **belongs, **plan.settings})
        budget = _CostBudget(config.max_cost, prices, store.load()) \
            if config.max_cost is not None and prices is not None else None
        not_started = 0
        follow_ups: list[dict[tuple[Any, int], Result]] = []  # the results each follow-up phase was made from
        phase: SuitePlan | None = plan
        while phase is not None:
            todo, kept = pending_tasks(phase.tasks, store, config.trials)
            total = len(phase.tasks) * config.trials
            if rescored:  # only the episodes the source run evaluated
                todo = [(task, trial) for task, trial in todo if (task.task_id, trial) in rescored.agent.episodes]
                total = len(rescored.agent.episodes)
            console.print(f"Run directory: {run_dir}  ({total} episode(s): {len(phase.tasks)} task(s) × "
                          f"{config.trials} trial(s); {total - len(todo)} already done, {len(todo)} to run)")
            if todo and not preflown:
                preflight(called, {role: config.endpoint(role) for role in called}, config.retry_budget, console)
                preflown = True
            progress = RunProgress(len(todo), console, live=False if config.debug or group else None,
                                   label=run_name if group else None, earlier=kept)
            on_result = budget.counting(progress.add) if budget else progress.add
            may_start = budget.open if budget else None
            try:
                with progress:
                    if config.executor == "ray":
                        from occubench.distributed import run_on_ray

                        not_started += run_on_ray(config, date, plan.settings, follow_ups, todo, store,
                                                  on_result=on_result, may_start=may_start)
                    else:
                        not_started += run_episodes(setup.episodes(config, phase, models, agent, run_fields), todo,
                                                    store, max_workers=config.max_workers, on_result=on_result,
                                                    may_start=may_start)
            except KeyboardInterrupt:
                console.print(f"\nInterrupted: {progress.done} result(s) saved in {store.path}. Run the same "
                              "command to resume.")
                raise
            if phase.follow_up and not not_started:
                follow_ups.append(latest_by_task(store.load()))
                phase = phase.follow_up(follow_ups[-1])
            else:
                phase = None
        if not_started and budget:
            console.print(f"[yellow]--max-cost {config.max_cost:g} USD reached ({budget.spent:.4f} USD spent in "
                          f"{run_dir}): {not_started} episode(s) not started; run again with a higher --max-cost to "
                          "go on[/yellow]")
    finally:
        if logging_to:
            end_logging(logging_to)
        lock.release()
        if preflight_failed and created is not None:  # a failed preflight leaves nothing behind
            shutil.rmtree(created, ignore_errors=True)
        if cache and not group:
            cache.close()
    latest = list(latest_by_task(store.load()).values())
    if "agent" in models and any(r.ok for r in latest) and not any(r.tool_calls for r in latest if r.ok):
        console.print("[yellow]warning: the agent made no tool call in any task: if its endpoint drops the tools "
                      "(see the preflight's warning and docs/guides/endpoints.md), every score here is "
                      "meaningless[/yellow]")
    return RunSummary(run_name, run_dir, digest, latest, summarize(latest, prices),
                      definition.report_tables(latest) if definition.report_tables else [], not_started)


@dataclass
class _Rescored:
    source: Path
    config_hash: str | None
    agent: ReplayAgent


def _saved_episodes(config: RunConfig, plan: SuitePlan, suite: str, console: Console) -> _Rescored:
    """The episodes of ``config.rescore`` that were evaluated (error records have nothing to judge)."""
    from occubench.agent import ReplayAgent

    if "verifier" not in plan.roles:
        raise ConfigError(f"the {suite} suite judges its episodes without a model: there is nothing to rescore (give "
                          "--verifier-model for a suite whose judge is a model)")
    source = Path(config.rescore or "")
    records = run_records(source)  # read only: the source directory is never changed
    if records.warning:
        console.print(f"[yellow]warning: {escape(records.warning)}[/yellow]")
    latest = latest_by_task(records.results)
    episodes = {key: result for key, result in latest.items() if result.ok}
    if not episodes:
        raise ConfigError(f"{source}: no evaluated episode to rescore (the results file is missing, empty or holds "
                          "only errors)")
    hashes = {result.config_hash for result in episodes.values()}
    return _Rescored(source, hashes.pop() if len(hashes) == 1 else None,
                     ReplayAgent(episodes, read_context(source), call_env=not plan.simulated))


class _CostBudget:
    """``--max-cost``: what the run directory's results cost so far (every record, errors included, as the
    summary counts them); new episodes start only below the limit, those under way finish."""

    def __init__(self, limit: float, prices: dict[str, Price], results: list[Result]) -> None:
        self.limit, self.prices = limit, prices
        self.spent = summarize(results, prices).cost_total
        self._lock = threading.Lock()

    def open(self) -> bool:
        with self._lock:
            return self.spent < self.limit

    def counting(self, on_result: Callable[[Result], None]) -> Callable[[Result], None]:
        def add(result: Result) -> None:
            with self._lock:  # what the attempts it replaced spent is counted already
                self.spent += summarize([replace(result, earlier_usage={})], self.prices).cost_total
            on_result(result)
        return add
