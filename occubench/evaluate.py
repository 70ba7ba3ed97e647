"""``occubench run`` / ``python -m occubench.evaluate``: evaluate an agent on the OccuBench tasks.

Every flag of the OccuBench README works unchanged. Re-running the same command resumes: tasks already ``ok`` in
the run directory are skipped, tasks that ended in an infrastructure error are retried.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from occubench import __version__
from occubench._log import setup_logging
from occubench._redact import MASK, Redactor, redact_url
from occubench.agent import Agent, ToolCallingAgent
from occubench.environment import Environment
from occubench.errors import ConfigError, LLMError, OccuBenchError
from occubench.executable import BUILTIN_SUITE
from occubench.executable.validate import NOOP
from occubench.faults import FAULT_MODES, INJECTION_MODES, FaultInjector, fault_prompt
from occubench.llm import LLMClient, Model, ResponseCache, RetryPolicy
from occubench.plans import OCCUBENCH_SUITE, PLANS, SuitePlan
from occubench.progress import RunProgress
from occubench.runner import EnvWrapper, pending_tasks, run_tasks
from occubench.store import ARGS_FILE, ResultStore, latest_by_task
from occubench.summary import load_prices, print_summary, summarize
from occubench.task import Task
from occubench.workplace.report import workplace_tables
from occubench.workplace.suite import WORKPLACE_SUITE

ROLES = ("agent", "world", "verifier", "npc")
AGENTS = ("llm", "reference", "noop")
_SECRET_ARGS = ("api_key", *(f"{role}_api_key" for role in ROLES))


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc.msg} at column {exc.colno}): {text}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"must be a JSON object, got: {text}")
    return value


def _iso_date(text: str) -> str:
    try:
        return datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date as YYYY-MM-DD, got {text!r}") from None


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    models = parser.add_argument_group("models and endpoints")
    models.add_argument("--suite", default=OCCUBENCH_SUITE,
                        help=f"what to evaluate on: {OCCUBENCH_SUITE} (the LLM-simulated benchmark, default) or a "
                        f"built-in suite: {BUILTIN_SUITE} or {WORKPLACE_SUITE} (see `occubench suites`)")
    models.add_argument("--agent", choices=AGENTS, default="llm",
                        help="llm: the model given by --agent-model (default); reference / noop: replay each task's "
                        "reference solution / do nothing (suites with reference solutions; no model needed)")
    models.add_argument("--agent-model", help="model under evaluation")
    models.add_argument("--world-model", help="model that simulates the environments (simulated suites)")
    models.add_argument("--verifier-model", help="model that judges trajectories (default: the world model); for "
                        "executable suites, an optional judge that labels each episode")
    models.add_argument("--api-key", help="API key for every role (default: $OPENAI_API_KEY)")
    models.add_argument("--base-url", help="OpenAI-compatible endpoint for every role (default: $OPENAI_BASE_URL, "
                        "else OpenAI)")
    for role in ROLES:
        models.add_argument(f"--{role}-base-url", help=f"endpoint for the {role} (default: --base-url)")
        models.add_argument(f"--{role}-api-key", help=f"API key for the {role} (default: --api-key)")

    faults = parser.add_argument_group("environment mode")
    faults.add_argument("--env-mode", choices=FAULT_MODES, default="E0",
                        help="E0 clean, E1 explicit errors, E2 silent degradation, E3 mixed (default: E0)")
    faults.add_argument("--fault-count", type=int, default=2, help="fault windows per episode (default: 2)")
    faults.add_argument("--fault-duration", type=int, default=2,
                        help="consecutive faulted calls per window (default: 2)")
    faults.add_argument("--fault-mode", choices=INJECTION_MODES,
                        help="prompt: the simulator is told to misbehave, as in the OccuBench paper (default for "
                        "simulated worlds); harness: a seeded wrapper injects and logs every fault")
    faults.add_argument("--seed", type=int, default=0,
                        help="harness-mode fault schedule seed; with the task id it fixes which calls fail (default: 0)")

    data = parser.add_argument_group("data")
    data.add_argument("--data-dir", help="directory holding all three data paths (default: $OCCUBENCH_DATA, "
                      "else ./data)")
    data.add_argument("--eval-data", help="tasks file (default: <data-dir>/eval_benchmark_solvable.jsonl)")
    data.add_argument("--scenario-pool", help="scenarios file (default: <data-dir>/task_scenario_all_pool.jsonl)")
    data.add_argument("--config-dir", help="world-model configs (default: <data-dir>/world_model_configs)")
    data.add_argument("--download", action="store_true",
                      help="when the data is missing, download it into the user cache directory")
    data.add_argument("--task-ids", nargs="+", metavar="ID", help="only these tasks (space- or comma-separated)")
    data.add_argument("--categories", nargs="+", metavar="CATEGORY",
                      help="only these categories: full names or Agri, Biz, Comm, Edu, Hlth, Ind, Pub, Sci, "
                      "Tech, Trans (comma-separated or quoted)")

    agent = parser.add_argument_group("agent")
    agent.add_argument("--with-plan", action="store_true", help="give the agent the task's solution plan, if any")
    agent.add_argument("--max-steps", type=_positive_int, default=50, help="agent turns per task (default: 50)")
    agent.add_argument("--date", type=_iso_date,
                       help="date in the agent's prompt, YYYY-MM-DD (default: today; a resumed run keeps its date)")
    agent.add_argument("--temperature", type=float, help="agent sampling temperature")
    agent.add_argument("--max-tokens", type=_positive_int, help="agent completion token limit")
    agent.add_argument("--reasoning-effort", help="agent reasoning effort (for models that support it)")
    agent.add_argument("--agent-params", type=_json_object, default={},
                       help="other agent request parameters as a JSON object, e.g. '{\"top_p\": 0.9}'")
    agent.add_argument("--world-params", type=_json_object, default={},
                       help="world-model request parameters as a JSON object")
    agent.add_argument("--verifier-params", type=_json_object, default={},
                       help="verifier request parameters as a JSON object")
    agent.add_argument("--trials", type=_positive_int, default=1,
                       help="episodes per task, for pass^k and pass@k in reports (default: 1)")
    agent.add_argument("--num-votes", type=_positive_int, default=3, help="verifier votes per task (default: 3)")

    work = parser.add_argument_group("workplace suite")
    work.add_argument("--days", type=_positive_int, default=10, help="days to generate from --seed (default: 10)")
    work.add_argument("--workplace-dir", help="run the days written by `occubench workplace generate` instead")
    work.add_argument("--learning", action="store_true",
                      help="after each day, a second day with the same kinds of tasks and new parameters; the agent "
                      "starts it with the mentor's feedback on the first")
    work.add_argument("--with-notes", action="store_true",
                      help="with --learning: also give back the notes the agent left when it finished day one")
    work.add_argument("--npc-model", help="model that plays the colleagues (default: deterministic colleagues "
                      "that answer when asked the right question)")

    run = parser.add_argument_group("run")
    run.add_argument("--output-dir", default="./results", help="where run directories go (default: ./results)")
    run.add_argument("--run-name", help="run directory name (default: {agent}__{world}__{mode}[__fc{n}_fd{n}])")
    run.add_argument("--max-workers", type=_positive_int, default=8, help="tasks run at once (default: 8)")
    run.add_argument("--request-timeout", type=float, default=300.0,
                     help="seconds one model request may take (default: 300)")
    run.add_argument("--retry-budget", type=float, default=600.0,
                     help="seconds one model call may spend retrying rate limits and server errors before the "
                     "task is recorded as an error (default: 600)")
    run.add_argument("--max-connections", type=_positive_int, default=32,
                     help="requests in flight per endpoint at most (default: 32); lowered on 429 and raised again "
                     "slowly unless --fixed-concurrency")
    run.add_argument("--fixed-concurrency", action="store_true",
                     help="keep --max-connections fixed instead of adapting it to rate limits")
    run.add_argument("--cache", metavar="PATH", help="SQLite response cache: a request seen before is answered "
                     "from it (resume without paying twice; exact replay)")
    run.add_argument("--replay", action="store_true",
                     help="answer every request from --cache and never call an endpoint; a miss is an error")
    run.add_argument("--force", action="store_true",
                     help="add to a run directory whose results were made with a different configuration")
    run.add_argument("--prices", metavar="FILE", help='JSON prices per model to report cost: {"<model>": '
                     '{"input": USD per 1M prompt tokens, "output": USD per 1M completion tokens}}')
    run.add_argument("--skip-preflight", action="store_true", help="do not check the endpoints before the run")
    run.add_argument("--debug", action="store_true", help="log every agent, world-model and verifier step to the "
                     "terminal and debug.log")


@dataclass(frozen=True)
class Endpoint:
    base_url: str | None
    api_key: str | None


def resolve_endpoint(args: argparse.Namespace, role: str) -> Endpoint:
    """Role flag, then the shared flag, then the OpenAI environment variables."""
    return Endpoint(
        base_url=getattr(args, f"{role}_base_url") or args.base_url or os.environ.get("OPENAI_BASE_URL") or None,
        api_key=getattr(args, f"{role}_api_key") or args.api_key or os.environ.get("OPENAI_API_KEY") or None,
    )


def default_run_name(agent: str, world: str, mode: str, fault_count: int, fault_duration: int,
                     harness_seed: int | None = None) -> str:
    name = f"{agent}__{world}__{mode}" + (f"__fc{fault_count}_fd{fault_duration}" if mode != "E0" else "")
    if mode != "E0" and harness_seed is not None:
        name += f"__harness_s{harness_seed}"
    # Model names such as meta-llama/Llama-3-70b or llama3:8b must not create folders or odd file names.
    return re.sub(r"[^A-Za-z0-9._+-]", "_", name)


def preflight(models: dict[str, Model], endpoints: dict[str, Endpoint], budget_s: float) -> None:
    """One tiny request per distinct endpoint and model, so a wrong key, URL or model stops the run at once."""
    seen: set[tuple[int, str, str]] = set()
    for role, model in models.items():
        key = (id(model.client), model.name, json.dumps(model.params, sort_keys=True))
        if key in seen:
            continue
        seen.add(key)
        try:
            model.client.probe(model.name, model.params, budget_s=budget_s)
        except LLMError as exc:
            hint = {401: f"check --{role}-api-key, --api-key or OPENAI_API_KEY",
                    403: f"check --{role}-api-key, --api-key or OPENAI_API_KEY",
                    404: f"check --{role}-model and --{role}-base-url"}.get(getattr(exc, "status_code", 0),
                                                                             f"check --{role}-base-url and the "
                                                                             f"{role} parameters")
            url = redact_url(endpoints[role].base_url) or "the OpenAI API"
            raise ConfigError(f"preflight failed for the {role} ({model.name} at {url}): {exc} ({hint})") from None


def build_models(args: argparse.Namespace, endpoints: dict[str, Endpoint], roles: dict[str, str],
                 cache: ResponseCache | None = None) -> dict[str, Model]:
    """The model of each role in ``roles`` (role → model name); roles on the same endpoint and key share one
    client, its connections and its limiter."""
    clients: dict[Endpoint, LLMClient] = {}
    for endpoint in {endpoints[role] for role in roles}:
        clients[endpoint] = LLMClient(endpoint.api_key, endpoint.base_url, timeout_s=args.request_timeout,
                                      retry=RetryPolicy(budget_s=args.retry_budget),
                                      max_in_flight=args.max_connections, adaptive=not args.fixed_concurrency,
                                      cache=cache)
    named = {"temperature": args.temperature, "max_tokens": args.max_tokens, "reasoning_effort": args.reasoning_effort}
    params = {"agent": {**{k: v for k, v in named.items() if v is not None}, **args.agent_params},
              "world": args.world_params, "verifier": args.verifier_params, "npc": {}}
    return {role: Model(clients[endpoints[role]], name, params[role]) for role, name in roles.items()}


def make_agent(args: argparse.Namespace, models: dict[str, Model], date: str, plan: SuitePlan) -> Agent:
    if args.agent == "llm":
        return ToolCallingAgent(models["agent"], max_steps=args.max_steps, with_plan=args.with_plan, date=date)
    if plan.reference is None:
        raise ConfigError(f"--agent {args.agent} needs a suite with reference solutions, such as {BUILTIN_SUITE}")
    return plan.reference if args.agent == "reference" else NOOP


def fault_wrapper(args: argparse.Namespace) -> EnvWrapper:
    def wrap(env: Environment, task: Task) -> Environment:
        return FaultInjector(env, args.env_mode, args.fault_count, args.fault_duration, args.seed, task.task_id)
    return wrap


def run_config(run_fields: dict[str, Any], models: dict[str, Model], args: argparse.Namespace,
               date: str) -> dict[str, Any]:
    """Everything that changes what a result means. Results made under another configuration are not mixed in."""
    return {**run_fields, "date": date, "max_steps": args.max_steps, "num_votes": args.num_votes,
            **{f"{role}_params": model.params for role, model in models.items()}}


def config_hash(config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


def check_same_config(store: ResultStore, config: dict[str, Any], digest: str, force: bool,
                      console: Console) -> None:
    previous = _previous_args(store.run_dir)
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


def settings_record(args: argparse.Namespace) -> dict[str, Any]:
    """The command's settings for args.json: keys masked, credentials in URLs masked."""
    settings = {k: v for k, v in vars(args).items() if k not in ("func", "command")}  # set by `occubench run`
    settings.update({a: MASK for a in _SECRET_ARGS if settings.get(a)})
    settings.update({k: redact_url(settings[k]) for k in settings if k.endswith("base_url")})
    return {**settings, "occubench_version": __version__}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m occubench.evaluate", description=__doc__)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except OccuBenchError as exc:
        print(f"occubench: error: {exc}", file=sys.stderr)
        return 2


def run(args: argparse.Namespace) -> int:
    console = Console(stderr=True, highlight=False)
    endpoints = {role: resolve_endpoint(args, role) for role in ROLES}
    redactor = Redactor([e.api_key for e in endpoints.values()] + [getattr(args, a) for a in _SECRET_ARGS])
    if args.fault_count < 0 or args.fault_duration < 1:
        raise ConfigError("--fault-count must be 0 or more and --fault-duration 1 or more")
    if args.agent == "llm" and not args.agent_model:
        raise ConfigError("--agent-model is required (or --agent reference/noop on a suite with reference solutions)")
    if args.suite not in PLANS:
        raise ConfigError(f"--suite: unknown suite {args.suite!r}; choose from {', '.join(PLANS)}")
    prices = load_prices(Path(args.prices)) if args.prices else None

    plan = PLANS[args.suite](args, console)
    if not plan.tasks:
        raise ConfigError("no task matches --task-ids/--categories")
    faulted = args.env_mode != "E0"
    injection = args.fault_mode or ("prompt" if plan.simulated else "harness")  # the paper's method where it can
    if faulted and injection == "prompt" and not plan.simulated:
        raise ConfigError(f"--fault-mode prompt needs a simulated world; {args.suite} faults are injected by the "
                          "harness (--fault-mode harness)")
    harness = injection == "harness" and faulted
    agent_label = args.agent_model if args.agent == "llm" else args.agent
    run_name = args.run_name or default_run_name(agent_label, plan.world_label or args.suite, args.env_mode,
                                                 args.fault_count, args.fault_duration,
                                                 args.seed if harness else None)
    if Path(run_name).name != run_name or run_name in ("", ".", ".."):
        raise ConfigError(f"--run-name must be a plain directory name, got {run_name!r}")
    run_dir = Path(args.output_dir) / run_name
    store = ResultStore(run_dir, redactor)
    date = args.date or _previous_args(run_dir).get("date") or datetime.date.today().isoformat()
    setup_logging(run_dir, debug=args.debug, redactor=redactor, tag_tasks=args.max_workers > 1)

    if args.replay and not args.cache:
        raise ConfigError("--replay needs --cache PATH: the cache to replay from")
    cache = ResponseCache(args.cache, replay=args.replay) if args.cache else None
    roles = {**({"agent": args.agent_model} if args.agent == "llm" else {}), **plan.roles}
    models = build_models(args, endpoints, roles, cache)
    agent = make_agent(args, models, date, plan)

    run_fields = {"agent_model": agent_label, "world_model": plan.world_label, "env_mode": args.env_mode,
                  "fault_count": args.fault_count if faulted else 0,
                  "fault_duration": args.fault_duration if faulted else 0,
                  "with_plan": args.with_plan, "verifier_model": roles.get("verifier"), "suite": args.suite,
                  "fault_mode": injection if faulted else None, "seed": args.seed if harness else None}
    config = run_config(run_fields, models, args, date)
    digest = config_hash(config)
    check_same_config(store, config, digest, args.force, console)
    run_fields["config_hash"] = digest
    store.write_args({**settings_record(args), "date": date, "config": config, "config_hash": digest,
                      **plan.settings})

    fault_rules = fault_prompt(args.env_mode, args.fault_count, args.fault_duration) if faulted and not harness \
        else None
    preflown = args.skip_preflight or args.replay or not models
    phase: SuitePlan | None = plan
    while phase is not None:
        todo = pending_tasks(phase.tasks, store, args.trials)
        total = len(phase.tasks) * args.trials
        console.print(f"Run directory: {run_dir}  ({total} episode(s): {len(phase.tasks)} task(s) × {args.trials} "
                      f"trial(s); {total - len(todo)} already done, {len(todo)} to run)")
        if todo and not preflown:
            preflight(models, endpoints, args.retry_budget)
            preflown = True
        suite = phase.make(models, fault_rules)
        progress = RunProgress(len(todo), console, live=False if args.debug else None)  # debug needs the terminal
        try:
            with progress:
                run_tasks(suite, agent, todo, store, run_fields=run_fields, max_workers=args.max_workers,
                          wrap=fault_wrapper(args) if harness else None, on_result=progress.add)
        except KeyboardInterrupt:
            console.print(f"\nInterrupted: {progress.done} result(s) saved in {store.path}. Run the same command "
                          "to resume.")
            # Worker threads may be waiting on the network; results on disk are complete, so leave without them.
            os._exit(130)
        phase = phase.follow_up(latest_by_task(store.load())) if phase.follow_up else None

    if cache:
        cache.close()
    latest = latest_by_task(store.load())
    summary = summarize(latest.values(), prices)
    print_summary(summary, Console(highlight=False), title=f"{run_name}: {len(latest)} episode(s) in {run_dir}")
    if args.suite == WORKPLACE_SUITE:
        for table in workplace_tables(list(latest.values())):
            Console(highlight=False).print(table)
    return 1 if summary.errors else 0


def _previous_args(run_dir: Path) -> dict[str, Any]:
    try:
        previous = json.loads((run_dir / ARGS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return previous if isinstance(previous, dict) else {}


if __name__ == "__main__":
    sys.exit(main())
