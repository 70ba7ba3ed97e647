"""``occubench.run(config)``: one evaluation run, as a library call.

The command line only parses flags into a :class:`RunConfig` and calls :func:`run`; synthesis, Ray workers and
Inspect tasks call it the same way. Re-running a config resumes: tasks already ``ok`` in the run directory are
skipped, tasks that ended in an error are retried. One run at a time works in a directory.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from occubench import __version__
from occubench._lock import DirectoryLock
from occubench._log import setup_logging
from occubench._redact import Redactor
from occubench.config import Endpoint, RunConfig, Settings
from occubench.environment import Environment
from occubench.errors import ConfigError, LLMError
from occubench.faults import FaultInjector, fault_prompt
from occubench.plugins import AgentContext, SuitePlan, load_agent, load_suite
from occubench.progress import RunProgress
from occubench.results import Result
from occubench.runner import EnvWrapper, pending, pending_tasks, run_tasks
from occubench.store import ResultStore, latest_by_task, load_results
from occubench.summary import Summary, load_prices, summarize
from occubench.tables import Table
from occubench.task import Task

if TYPE_CHECKING:
    from occubench.agent import Agent
    from occubench.llm import Model, ResponseCache


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
        try:
            model.client.probe(model.name, model.params, budget_s=budget_s, role=role)
            if role == "agent" and not model.client.probe_tools(model.name, model.params):
                console.print("[yellow]warning: the agent endpoint answered a request that required a tool call "
                              "without calling it: it may ignore tools (llama.cpp needs a function-calling chat "
                              "format, vLLM --enable-auto-tool-choice with a --tool-call-parser; see the README's "
                              "Real servers)[/yellow]")
        except LLMError as exc:
            hint = {401: f"check --{role}-api-key, --api-key or OPENAI_API_KEY",
                    403: f"check --{role}-api-key, --api-key or OPENAI_API_KEY",
                    404: f"check --{role}-model and --{role}-base-url"}.get(getattr(exc, "status_code", 0),
                                                                             f"check --{role}-base-url and the "
                                                                             f"{role} parameters")
            raise ConfigError(f"preflight failed: {exc} ({hint})") from None


def build_models(settings: Settings, roles: dict[str, str], params: dict[str, dict[str, Any]],
                 cache: ResponseCache | None = None) -> dict[str, Model]:
    """The model of each role in ``roles`` (role → model name, called with ``params[role]``); roles on the same
    endpoint and key share one client, its connections and its limiter."""
    from occubench import llm  # the openai SDK loads only for runs that call models

    endpoints = {role: settings.endpoint(role) for role in roles}
    clients: dict[Endpoint, llm.LLMClient] = {}
    for endpoint in set(endpoints.values()):
        clients[endpoint] = llm.LLMClient(endpoint.api_key, endpoint.base_url, timeout_s=settings.request_timeout,
                                          retry=llm.RetryPolicy(budget_s=settings.retry_budget),
                                          max_in_flight=settings.max_connections or max(32, settings.max_workers),
                                          adaptive=not settings.fixed_concurrency, cache=cache)
    return {role: llm.Model(clients[endpoints[role]], name, params.get(role, {}), role)
            for role, name in roles.items()}


def role_params(config: RunConfig) -> dict[str, dict[str, Any]]:
    named = {"temperature": config.temperature, "max_tokens": config.max_tokens,
             "reasoning_effort": config.reasoning_effort}
    # Every role but the agent under test gets an output cap by default: a judge or a colleague that rambles for
    # thousands of tokens costs minutes on a one-slot server (override with --<role>-params '{"max_tokens": N}').
    return {"agent": {**{k: v for k, v in named.items() if v is not None}, **config.agent_params},
            "world": {"max_tokens": 4096, **config.world_params},
            "verifier": {"max_tokens": 2048, **config.verifier_params},
            "npc": {"max_tokens": 512, **config.npc_params}}


def _agent(config: RunConfig, models: dict[str, Model], date: str, plan: SuitePlan) -> Agent:
    if config.agent == "llm":
        from occubench.agent import ToolCallingAgent

        return ToolCallingAgent(models["agent"], max_steps=config.max_steps, with_plan=config.with_plan, date=date)
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


def _fault_wrapper(config: RunConfig) -> EnvWrapper:
    def wrap(env: Environment, task: Task) -> Environment:
        return FaultInjector(env, config.env_mode, config.fault_count, config.fault_duration, config.seed,
                             task.task_id)
    return wrap


def _check_same_config(store: ResultStore, config: dict[str, Any], digest: str, force: bool,
                       console: Console) -> None:
    previous = store.previous_args()
    if previous.get("config_hash") in (None, digest) or not store.load():
        return
    old = previous.get("config", {})
    changed = ", ".join(f"{key} {old.get(key)!r} → {config.get(key)!r}" for key in sorted(set(old) | set(config))
                        if old.get(key) != config.get(key))
    if not force:
        raise ConfigError(f"{store.run_dir} holds results made with a different configuration ({changed}); choose "
                          "another --run-name, or pass --force to add to them anyway")
    console.print(f"[yellow]warning: --force: adding results made with a different configuration ({changed})"
                  "[/yellow]")


def run(config: RunConfig, *, console: Console | None = None) -> RunSummary:
    """Evaluate ``config``'s agent on its suite; returns the summary of every result in the run directory.

    Progress goes to ``console`` (stderr by default; ``Console(quiet=True)`` for none). Raises
    :class:`ConfigError` for bad input, before any request is paid for; no error message carries a secret. A
    ``KeyboardInterrupt`` leaves every finished result on disk; the same config resumes.
    """
    redactor = Redactor(config.secrets())
    with redactor.errors():
        return _run(config, console or Console(stderr=True, highlight=False), redactor)


def _run(config: RunConfig, console: Console, redactor: Redactor) -> RunSummary:
    if config.agent == "llm" and not config.agent_model:
        raise ConfigError("--agent-model is required (or --agent reference/noop on a suite with reference "
                          "solutions, or --agent module:Callable)")
    if config.replay and not config.cache:
        raise ConfigError("--replay needs --cache PATH: the cache to replay from")
    prices = load_prices(Path(config.prices)) if config.prices else None
    definition = load_suite(config.suite)
    plan = definition.plan(config, console)
    if not plan.tasks:
        raise ConfigError("no task matches --task-ids/--categories")
    faulted = config.env_mode != "E0"
    injection = config.fault_mode or ("prompt" if plan.simulated else "harness")  # the paper's method where it can
    if faulted and injection == "prompt" and not plan.simulated:
        raise ConfigError(f"--fault-mode prompt needs a simulated world; {definition.name} faults are injected by "
                          "the harness (--fault-mode harness)")
    harness = injection == "harness" and faulted
    agent_label = _agent_label(config)
    run_name = config.run_name or default_run_name(agent_label, plan.world_label or definition.name,
                                                   config.env_mode, config.fault_count, config.fault_duration,
                                                   config.seed if harness else None)
    run_dir = Path(config.output_dir) / run_name
    if run_dir.exists() and not run_dir.is_dir() or Path(config.output_dir).is_file():
        raise ConfigError(f"--output-dir: {config.output_dir} holds a file where the run directory {run_dir} "
                          "should be")
    store = ResultStore(run_dir, redactor)
    date = config.date or store.previous_args().get("date") or datetime.date.today().isoformat()

    cache = None
    if config.cache:
        from occubench.llm import ResponseCache

        cache = ResponseCache(config.cache, replay=config.replay)
    scripted = config.agent in ("reference", "noop")
    roles = {**({"agent": config.agent_model} if config.agent_model and not scripted else {}), **plan.roles}
    models = build_models(config, roles, role_params(config), cache)
    agent = _agent(config, models, date, plan)
    run_fields: dict[str, Any] = {
        "agent_model": agent_label, "world_model": plan.world_label, "env_mode": config.env_mode,
        "fault_count": config.fault_count if faulted else 0, "fault_duration": config.fault_duration if faulted else 0,
        "with_plan": config.with_plan, "verifier_model": roles.get("verifier"), "npc_model": roles.get("npc"),
        "suite": definition.name,
        "fault_mode": injection if faulted else None, "seed": config.seed if harness else None}
    meaning = {**run_fields, "date": date, "max_steps": config.max_steps, "num_votes": config.num_votes,
               **{f"{role}_params": model.params for role, model in models.items()}}
    digest = config_hash(meaning)
    run_fields["config_hash"] = digest

    # A run directory appears only once the endpoints answered: a failed preflight leaves nothing behind.
    preflown = config.skip_preflight or config.replay or not models
    # Read-only here (no repair, no rewrite): the directory may be another run's until the lock is held.
    if not preflown and pending(plan.tasks, latest_by_task(load_results(store.path)), config.trials):
        preflight(models, {role: config.endpoint(role) for role in models}, config.retry_budget, console)
        preflown = True
    lock = DirectoryLock(run_dir).acquire()
    try:
        if lock.taken_over:
            console.print(f"note: taking over {run_dir} from process {lock.taken_over}, which ended without "
                          "releasing it")
        _check_same_config(store, meaning, digest, config.force, console)
        setup_logging(run_dir, debug=config.debug, redactor=redactor, tag_tasks=config.max_workers > 1)
        store.write_args({**config.record(), "occubench_version": __version__, "date": date, "config": meaning,
                          "config_hash": digest, **plan.settings})
        fault_rules = fault_prompt(config.env_mode, config.fault_count, config.fault_duration) \
            if faulted and not harness else None
        phase: SuitePlan | None = plan
        while phase is not None:
            todo = pending_tasks(phase.tasks, store, config.trials)
            total = len(phase.tasks) * config.trials
            console.print(f"Run directory: {run_dir}  ({total} episode(s): {len(phase.tasks)} task(s) × "
                          f"{config.trials} trial(s); {total - len(todo)} already done, {len(todo)} to run)")
            if todo and not preflown:
                preflight(models, {role: config.endpoint(role) for role in models}, config.retry_budget, console)
                preflown = True
            suite = phase.make(models, fault_rules)
            progress = RunProgress(len(todo), console, live=False if config.debug else None)
            try:
                with progress:
                    run_tasks(suite, agent, todo, store, run_fields=run_fields, max_workers=config.max_workers,
                              wrap=_fault_wrapper(config) if harness else None, on_result=progress.add)
            except KeyboardInterrupt:
                console.print(f"\nInterrupted: {progress.done} result(s) saved in {store.path}. Run the same "
                              "command to resume.")
                raise
            phase = phase.follow_up(latest_by_task(store.load())) if phase.follow_up else None
    finally:
        lock.release()
        if cache:
            cache.close()
    latest = list(latest_by_task(store.load()).values())
    if "agent" in models and latest and not any(r.tool_calls for r in latest if r.ok):
        console.print("[yellow]warning: the agent made no tool call in any task: if its endpoint drops the tools "
                      "(see the preflight's warning and the README's Real servers), every score here is "
                      "meaningless[/yellow]")
    return RunSummary(run_name, run_dir, digest, latest, summarize(latest, prices),
                      definition.report_tables(latest) if definition.report_tables else [])
