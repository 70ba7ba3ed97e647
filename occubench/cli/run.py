"""``occubench run`` / ``python -m occubench.evaluate``: evaluate an agent on a suite (the OccuBench tasks by
default).

Every flag of the OccuBench README works unchanged; ``--config FILE`` reads the same settings from a TOML file, and
flags given on the command line win over it. The flags become a :class:`occubench.RunConfig` and
:func:`occubench.run` does the rest. Re-running the same command resumes: tasks already ``ok`` in the run directory
are skipped, tasks that ended in an error are retried.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from occubench.config import EXECUTORS, FAULT_LEVELS, INJECTIONS, ROLES, SUITES, registered
from occubench.errors import ConfigError, OccuBenchError
from occubench.util.console import rich_console
from occubench.util.redact import Redactor, environment_secrets
from occubench.util.text import markup, terminal

if TYPE_CHECKING:
    from occubench.config import RunConfig, Settings
    from occubench.engine.run import RunSummary


def json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc.msg} at column {exc.colno}): {text}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"must be a JSON object, got: {text}")
    return value


def int_range(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` (to ``high``), so a bad count fails as the flag's own error
    before anything starts (a config file's values are checked by the settings class)."""
    bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number {bounds}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected a whole number {bounds}, got {value}")
        return value
    return parse


#: Counts that make sense only from 1 (trials, steps, workers, days...) or from 0 (fault windows).
positive_int = int_range(1)
non_negative_int = int_range(0)


_ROLE = re.compile(r":[a-z]+:`(~?)([^`]+)`")


def plain(text: str) -> str:
    """A docstring's reST as the terminal shows it: ``code`` and :class:`roles` as their bare text."""
    return _ROLE.sub(lambda m: m[2].rpartition(".")[2] if m[1] else m[2], text).replace("``", "")


class HelpFormatter(argparse.HelpFormatter):
    """Help from docstrings: markup shown plain, each paragraph of a description wrapped on its own, and lines
    broken at spaces only (never inside --max-tokens or a URL)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n\n".join("\n".join(indent + line for line in self._split_lines(paragraph, width - len(indent)))
                            for paragraph in text.split("\n\n"))

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(plain(text).split()), width, break_on_hyphens=False, break_long_words=False)


class _Commands(argparse._SubParsersAction):
    """Subcommands whose parsers say what they do: without a description of their own, their one-line help."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        kwargs.setdefault("description", kwargs.get("help"))
        return super().add_parser(name, **kwargs)


class Parser(argparse.ArgumentParser):
    """Bad input is one line on stderr (no usage block), as every other refusal is; exit status 2 as argparse's.
    Options are never abbreviated: ``--config`` must not quietly become ``--config-dir``. Subcommands' parsers
    are of this class too (argparse makes them of the parent's class), so every command's help is rendered by
    :class:`HelpFormatter` and has a description."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        self.register("action", "parsers", _Commands)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    models = parser.add_argument_group("models and endpoints")
    models.add_argument("--suite",
                        help="what to evaluate on: an installed suite (entry-point group occubench.suites, see "
                        f"`occubench suites`): {', '.join(registered(SUITES))}; occubench, the LLM-simulated "
                        "benchmark, by default; or package.module:attribute")
    models.add_argument("--agent",
                        help="llm: the model given by --agent-model (default); reference / noop: replay each task's "
                        "reference solution / do nothing (suites with reference solutions; no model needed); "
                        "package.module:attribute or path/to/file.py:attribute: your own agent (see "
                        "docs/guides/own-agent.md); command:'PROGRAM {mcp_url} {instruction_file}': a program of "
                        "your own per task, playing over MCP (see docs/guides/outside-agents.md)")
    models.add_argument("--agent-model", nargs="+", metavar="MODEL",
                        help="model under evaluation; with several (or several --env-mode values), one run per "
                        "combination, all at once, sharing the endpoints, then a leaderboard and the E0–E3 table")
    models.add_argument("--world-model", help="model that simulates the environments (simulated suites)")
    models.add_argument("--verifier-model", help="model that judges trajectories (default: the world model); for "
                        "executable suites, an optional judge that labels each episode; for traineebench, the judge "
                        "of the checks the reference leaves to a model")
    models.add_argument("--api-key", help="API key for every role (default: $OPENAI_API_KEY)")
    models.add_argument("--base-url", help="OpenAI-compatible endpoint for every role (default: $OPENAI_BASE_URL, "
                        "else OpenAI)")
    for role in ROLES:
        # The agent reflects on its own endpoint unless another model is named (RunConfig.endpoint).
        default = "the agent's, or with --reflection-model " if role == "reflection" else ""
        models.add_argument(f"--{role}-base-url", help=f"endpoint for the {role} (default: {default}--base-url)")
        models.add_argument(f"--{role}-api-key", help=f"API key for the {role} (default: {default}--api-key)")

    faults = parser.add_argument_group("faults")
    faults.add_argument("--env-mode", choices=list(FAULT_LEVELS), nargs="+", metavar="LEVEL",
                        help="fault level: " + ", ".join(f"{level.name} {level.description}" for level in
                                                        FAULT_LEVELS.values()) + " (default: E0); several: one run "
                        "per level")
    faults.add_argument("--fault-count", type=non_negative_int, help="fault windows per episode (default: 2)")
    faults.add_argument("--fault-duration", type=positive_int,
                        help="consecutive faulted calls per window (default: 2)")
    faults.add_argument("--fault-mode", choices=INJECTIONS, metavar="INJECTION",
                        help="how faults are injected: prompt: the simulator is told to misbehave, as in the "
                        "OccuBench paper (default for simulated worlds); harness: a seeded wrapper injects and logs "
                        "every fault")
    faults.add_argument("--seed", type=int,
                        help="seed of the harness injection's fault schedule; with the task id it fixes which calls "
                        "fail (default: 0)")

    add_task_arguments(parser)

    agent = parser.add_argument_group("agent")
    agent.add_argument("--with-plan", action="store_true", help="give the agent the task's solution plan, if any")
    agent.add_argument("--max-steps", type=positive_int,
                       help="agent turns per task, and tool calls the engine lets any agent make (default: 50)")
    agent.add_argument("--history-window", type=positive_int, metavar="K",
                       help="the agent sees only its last K turns after the system prompt and the task (default: all); "
                       "train and evaluate with the same window")
    agent.add_argument("--agent-images", action="store_true",
                       help="the agent's model takes image input: an image a tool returns is sent as image content "
                       "(the built-in agent, and outside agents over MCP); without it, the image's text stands in")
    agent.add_argument("--live-hints", action="store_true",
                       help="let a person watching the run in `occubench view` (which prints the URL with the run's "
                       "token) send the agent hints of a tier 1-3; each reaches it with its next observation and is "
                       "recorded in the results, which reports keep apart from results without hints")
    agent.add_argument("--otel", action="store_true",
                       help="send OpenTelemetry traces and metrics of every episode over OTLP/HTTP to where the "
                       "standard OTEL_EXPORTER_OTLP_* variables say (default: localhost:4318); on without it when "
                       "OTEL_EXPORTER_OTLP_ENDPOINT is set (needs the otel extra)")
    agent.add_argument("--date",
                       help="date in the agent's prompt, YYYY-MM-DD (default: today; a resumed run keeps its date)")
    agent.add_argument("--temperature", type=float, help="agent sampling temperature")
    agent.add_argument("--max-tokens", type=positive_int, help="agent completion token limit")
    agent.add_argument("--reasoning-effort", help="agent reasoning effort (for models that support it)")
    agent.add_argument("--record-tokens", action="store_true",
                       help="keep each agent turn's prompt and completion token ids and logprobs as the endpoint "
                       "returns them (logprobs; vLLM's return_token_ids), for RL without re-tokenizing")
    agent.add_argument("--agent-params", type=json_object,
                       help="other agent request parameters as a JSON object, e.g. '{\"top_p\": 0.9}'")
    agent.add_argument("--world-params", type=json_object,
                       help="world-model request parameters as a JSON object")
    agent.add_argument("--verifier-params", type=json_object,
                       help="verifier request parameters as a JSON object")
    agent.add_argument("--npc-params", type=json_object,
                       help="colleague-model request parameters as a JSON object (workplace and traineebench suites)")
    agent.add_argument("--trials", type=positive_int,
                       help="episodes per task, for pass^k and pass@k in reports (default: 1)")
    agent.add_argument("--num-votes", type=positive_int, help="verifier votes per task (default: 3)")

    trainee = parser.add_argument_group("traineebench suite")
    trainee.add_argument("--traineebench-config", metavar="FILE",
                         help="a Trainee-Bench benchmark config in the reference's format; a bare name not in the "
                         "working folder is read from the reference files (traineebench_config.json, "
                         "traineebench_cl_config.json: the reference's own)")
    trainee.add_argument("--reference-dir", metavar="DIR",
                         help="the Trainee-Bench reference's own files (manuals, templates, résumés, articles; "
                         "default: the copy `occubench data download traineebench` made)")
    trainee.add_argument("--mentor-feedback", action="store_true",
                         help="run each scenario's days in order, the agent starting each day after the first with "
                         "its mentor's feedback on the day before (the reference's evaluators' notes)")
    trainee.add_argument("--paper-day-two", action="store_true",
                         help="each scenario as the paper's continual-learning experiment has it: its first day, then "
                         "a second with the same tasks and new arguments (the config's later days are not used)")
    trainee.add_argument("--self-evolution", type=positive_int, metavar="N",
                         help="each scenario's first day played N more times, each time told the reflections on every "
                         "time before (the paper's repeated self-evolution; needs a model to reflect)")

    work = parser.add_argument_group("workplace suite")
    work.add_argument("--days", type=positive_int, help="days to generate from --seed (default: 10)")
    work.add_argument("--workplace-dir", help="run the days written by `occubench workplace generate` instead")
    work.add_argument("--learning", action="store_true",
                      help="after each day, a second day with the same kinds of tasks and new parameters "
                      "(traineebench: the config's next day, or --paper-day-two's), in three arms: no experience, "
                      "the mentor's feedback (with the agent's own notes), and notes a reflection on the day before "
                      "wrote; the report compares day one and day two per arm")
    work.add_argument("--reflection-model",
                      help="with --learning: the model that reflects on day one's trajectory and feedback (default: "
                      "the agent's model, on the agent's endpoint)")
    work.add_argument("--guidance", type=int, nargs="+", choices=(0, 1, 2, 3), metavar="TIER",
                      help="hints each task shows in the task list: 0 none (default), 1 where to look, 2 also whom to "
                      "ask and what for, 3 also the plan step by step; several tiers run at once, a run directory each")
    work.add_argument("--npc-model", help="model that plays the colleagues, in the workplace and traineebench "
                      "suites (default: deterministic colleagues: the workplace's answer when asked the right "
                      "question, Trainee-Bench's with their reply rules)")

    limits = parser.add_argument_group("limits")
    limits.add_argument("--max-tokens-per-task", type=positive_int, metavar="N",
                        help="the agent starts no turn once it used N tokens in the episode; it is judged on what it "
                        "did (stop reason max_tokens_per_task)")
    limits.add_argument("--max-seconds-per-task", type=float, metavar="S",
                        help="the agent starts no turn once the episode ran S seconds (stop reason "
                        "max_seconds_per_task)")
    limits.add_argument("--max-cost", type=float, metavar="USD",
                        help="start no new task once the run directory's results cost this much (needs --prices); "
                        "the same command with a higher limit goes on")
    limits.add_argument("--fail-on-error", type=float, metavar="RATE",
                        help="exit with status 1 only when more than this share of the episodes ended in an error "
                        "(default: 0, any error)")

    run = parser.add_argument_group("run")
    run.add_argument("--output-dir", help="where run directories go (default: ./results)")
    run.add_argument("--json", action="store_true", help="print, instead of the tables, a JSON object whose runs "
                     "list each run's name, directory and counts (and, of several runs, the failures of those that "
                     "could not start)")
    run.add_argument("--run-name", help="run directory name (default: {agent}__{world}__{level}[__fc{n}_fd{n}])")
    run.add_argument("--force", action="store_true",
                     help="add to a run directory whose results were made with a different configuration")
    run.add_argument("--executor", metavar="NAME",
                     help="where episodes run, one of the executors installed (entry-point group "
                     f"occubench.executors): {', '.join(registered(EXECUTORS))}. local: in this process (default); "
                     "ray: as Ray tasks on a cluster (pip install 'occubench[ray]'), this process writing the "
                     "results; or package.module:Class")
    run.add_argument("--ray-address", metavar="ADDR",
                     help="with --executor ray: the cluster to join (default: a local Ray instance for the run)")
    run.add_argument("--ray-workers", type=positive_int, metavar="N",
                     help="with --executor ray: worker processes, each running its share of --max-concurrency episodes "
                     "at once (default: the cluster's CPUs)")
    add_model_call_arguments(run)


def add_task_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the tasks come from and which of them to take: shared by ``run`` and ``tasks``."""
    data = parser.add_argument_group("data and task selection")
    data.add_argument("--data-dir", help="directory holding all three data paths (default: $OCCUBENCH_DATA, "
                      "else ./data); --suite awm: the AWM-format set's folder (default: the downloaded copy)")
    data.add_argument("--eval-data", help="tasks file (default: <data-dir>/eval_benchmark_solvable.jsonl)")
    data.add_argument("--scenario-pool", help="scenarios file (default: <data-dir>/task_scenario_all_pool.jsonl)")
    data.add_argument("--config-dir", help="world-model configs (default: <data-dir>/world_model_configs)")
    data.add_argument("--download", action="store_true",
                      help="when the data is missing, download it into the user cache directory")
    data.add_argument("--worlds-dir", metavar="DIR", help="executable suite: run the world folders in DIR (as "
                      "`occubench synth executable` writes them) instead of the built-in worlds")
    data.add_argument("--worlds", metavar="REF", help="run the worlds of a world package: oci://HOST/NAME:VERSION, "
                      "git+URL@VERSION or hf://OWNER/NAME@VERSION (or @sha256:DIGEST); installed and validated in the "
                      "sandbox first, its reference and digest recorded (see `occubench worlds`)")
    data.add_argument("--twin-of", choices=("executable", "awm"),
                      help="twin suite: the worlds whose twins run: executable (the default: the built-in worlds, or "
                      "--worlds-dir) or awm (the AWM-format set of --data-dir)")
    add_trust_argument(data)
    data.add_argument("--task-ids", nargs="+", metavar="ID", help="only these tasks (space- or comma-separated)")
    data.add_argument("--categories", nargs="+", metavar="CATEGORY",
                      help="only these categories: full names or Agri, Biz, Comm, Edu, Hlth, Ind, Pub, Sci, "
                      "Tech, Trans (comma-separated or quoted)")
    data.add_argument("--difficulty", nargs="+", metavar="LEVEL", help="only tasks of these difficulty levels")
    data.add_argument("--shuffle", action="store_true", help="shuffle the selected tasks with --seed (before --limit)")
    data.add_argument("--limit", type=positive_int, metavar="N", help="only the first N selected tasks")


def add_trust_argument(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    parser.add_argument("--trust-world-code", action="store_true",
                        help="where no sandbox (bubblewrap) is available, run world code from outside occubench "
                        "(--worlds-dir, synthesis) as a plain process anyway: it can then read your files and keys")


def add_model_call_arguments(run: argparse._ArgumentGroup) -> None:
    """How models are called and what is kept: the flags every command that calls models shares."""
    run.add_argument("--max-concurrency", "--max-workers", dest="max_concurrency", type=positive_int, metavar="N",
                     help="episodes in flight at once, each awaiting its model on one event loop (default: 32, for "
                     "hosted APIs; a local server: its parallel slots, which --server sets; --max-workers is its "
                     "former name)")
    run.add_argument("--request-timeout", type=float,
                     help="seconds one model request may take (default: 300)")
    run.add_argument("--retry-budget", type=float,
                     help="seconds one model call may spend retrying rate limits and server errors before the "
                     "task is recorded as an error (default: 600)")
    servers = ("auto", "llama.cpp", "vllm", "ollama", "openai", "generic")
    run.add_argument("--server", choices=servers, metavar="KIND",  # the choices in the help: usage fits 80 columns
                     help=f"the kind of server the agent's endpoint is ({', '.join(servers)}); its profile sets what "
                     "the run leaves unset: --max-concurrency and --max-connections from its slots, the agent's "
                     "--max-tokens, the --context-window (default: auto, found out from the endpoint's /models and "
                     "/props)")
    run.add_argument("--context-window", type=int_range(1024, 10_000_000), metavar="TOKENS",
                     help="context of the judge's and the world model's model: longer prompts are trimmed in the "
                     "middle, marked and recorded (default: what the server says, else no trimming)")
    run.add_argument("--max-connections", type=positive_int,
                     help="requests in flight per endpoint at most (default: 32, or --max-concurrency if more); "
                     "lowered on 429 and raised again slowly unless --fixed-concurrency")
    run.add_argument("--fixed-concurrency", action="store_true",
                     help="keep --max-connections fixed instead of adapting it to rate limits")
    run.add_argument("--cache", metavar="PATH", help="SQLite response cache: a request seen before is answered "
                     "from it (resume without paying twice; exact replay)")
    run.add_argument("--replay", action="store_true",
                     help="answer every request from --cache and never call an endpoint; a miss is an error")
    run.add_argument("--prices", metavar="FILE", help='JSON prices per model to report cost: {"<model>": '
                     '{"input": USD per 1M prompt tokens, "output": USD per 1M completion tokens}}')
    run.add_argument("--skip-preflight", action="store_true", help="do not check the endpoints before the run")
    run.add_argument("--debug", action="store_true", help="log every model request and step to the terminal and "
                     "debug.log")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The run flags. None has a default here: a flag that is not given is absent, so a ``--config`` file's value
    stands; the defaults live in :class:`occubench.RunConfig` (the help texts quote them)."""
    parser.argument_default = argparse.SUPPRESS
    parser.add_argument("--config", metavar="FILE", help="read the settings from a TOML file (keys as the flags "
                        "without dashes, e.g. max_steps = 5); flags given here win over it")
    _add_run_arguments(parser)


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("run", help="evaluate an agent on a suite (same flags as python -m occubench.evaluate)",
                            description=__doc__)
    add_arguments(parser)
    parser.set_defaults(func=run_command)


def config_from_args(args: argparse.Namespace, kind: type[Settings] | None = None) -> Any:
    """The settings (a :class:`occubench.RunConfig` unless ``kind`` says) of parsed flags, over the ``--config``
    file's."""
    from occubench.config import RunConfig

    kind = kind or RunConfig
    flags = _flags(args)
    if getattr(args, "config", None):
        return kind.from_file(args.config, **flags)
    return kind.create(flags)


def _flags(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given as flags: every parsed value but the command's own bookkeeping."""
    return {key: value for key, value in vars(args).items() if key not in ("func", "command", "config")
            and not key.endswith("_command")}


def run_configs_from_args(args: argparse.Namespace) -> list[RunConfig]:
    """The run of each combination of the ``--agent-model`` and ``--env-mode`` values (flags over the ``--config``
    file's, which may list several too)."""
    from occubench.config import RunConfig, read_config_file
    from occubench.engine.matrix import expand

    flags = _flags(args)
    for key in ("agent_model", "env_mode"):  # one value on the command line is a plain setting
        if isinstance(flags.get(key), list) and len(flags[key]) == 1:
            flags[key] = flags[key][0]
    source = getattr(args, "config", None)
    values = {**read_config_file(Path(source)), **flags} if source else flags
    return [RunConfig.create(combination, source=source) for combination in expand(values)]


def _exit_status(summaries: list[RunSummary], fail_on_error: float) -> int:
    """1 when more than ``fail_on_error`` of the episodes ended in an error, or a budget left episodes unstarted."""
    episodes = sum(len(s.results) for s in summaries)
    errors = sum(s.errors for s in summaries)
    return 1 if errors > fail_on_error * episodes or any(s.not_started for s in summaries) else 0


def run_command(args: argparse.Namespace) -> int:
    """Run, print the summary; exit status 0 when every task has a result, 1 when some ended in an error (more
    than ``--fail-on-error`` of them) or ``--max-cost`` left some unstarted; 2 for bad input."""
    from occubench.engine.run import run

    fail_on_error = vars(args).pop("fail_on_error", 0.0)
    as_json = vars(args).pop("json", False)
    if not 0 <= fail_on_error <= 1:
        raise ConfigError(f"--fail-on-error: expected a share between 0 and 1, got {fail_on_error}")
    configs = run_configs_from_args(args)
    try:
        if len(configs) > 1:
            return _run_matrix(configs, fail_on_error, as_json)
        outcome = run(configs[0])
    except KeyboardInterrupt:
        # Worker threads may be waiting on the network; results on disk are complete, so leave without them.
        os._exit(130)
    if as_json:
        _print_json([outcome])
        return _exit_status([outcome], fail_on_error)
    return print_run(outcome, fail_on_error)


def _print_json(runs: list[RunSummary], failures: dict[str, str] | None = None) -> None:
    """What a script needs of finished runs (``--json``): where each is, and its counts."""
    print(json.dumps({"runs": [{"run_name": s.run_name, "run_dir": str(s.run_dir), "passed": s.passed,
                                "evaluated": s.evaluated, "errors": s.errors, "completion_rate": s.completion_rate,
                                "not_started": s.not_started} for s in runs], "failures": failures or {}},
                     indent=2))  # ASCII: a name from a config holds no control byte when printed


def print_run(outcome: RunSummary, fail_on_error: float = 0.0) -> int:
    """Print a run's summary and the suite's tables; the exit status (see ``run_command``)."""
    from occubench.engine.summary import print_summary
    from occubench.report.runs import worlds_of

    console = rich_console()
    if outcome.apart:  # results with live hints and without are never pooled, here either
        for suffix, summary in outcome.apart.items():
            episodes = summary.overall.evaluated + len(summary.errors)
            print_summary(summary, console, title=f"{outcome.run_name}{suffix}: {episodes} episode(s) in "
                          f"{outcome.run_dir}")
    else:
        print_summary(outcome.summary, console,
                      title=f"{outcome.run_name}: {len(outcome.results)} episode(s) in {outcome.run_dir}")
    print_worlds(*worlds_of(outcome.run_dir))
    for table in outcome.tables:
        console.print(table)
    return _exit_status([outcome], fail_on_error)


def print_worlds(reference: str | None, digest: str | None, *, stderr: bool = False) -> None:
    """The world package a command's ``--worlds`` resolved to (nothing without one), on one line that is never
    wrapped, so that grep finds it whole."""
    if reference and digest:
        from occubench.hub.worlds import cited

        print(f"Worlds: {terminal(cited(reference, digest), newlines=False)}", file=sys.stderr if stderr else None)


def _run_matrix(configs: list[RunConfig], fail_on_error: float, as_json: bool) -> int:
    from occubench import report
    from occubench.engine.matrix import run_matrix
    from occubench.engine.summary import load_prices
    from occubench.report.robustness import robustness_table, robustness_warnings, warn

    outcome = run_matrix(configs)
    exit_status = 2 if outcome.failures else _exit_status(outcome.runs, fail_on_error)
    if as_json:
        _print_json(outcome.runs, outcome.failures)
        return exit_status
    console = rich_console()
    prices = load_prices(Path(configs[0].prices)) if configs[0].prices else None
    runs = [part for s in outcome.runs for part in report.apart(report.Run(s.run_name, s.run_dir, s.results))]
    if runs:
        console.print(report.leaderboard_table([report.run_stats(r, prices) for r in runs]))
        modes = robustness_table({r.name: r.results for r in runs})
        console.print(report.modes_table(modes))
        if paired := report.paired_comparisons(result for r in runs for result in r.results):
            console.print(report.paired_table(paired))
        for table in report.overview_tables(runs):
            console.print(table)
        for message in robustness_warnings(modes):
            warn(message)
    for summary in outcome.runs:
        if summary.errors:
            console.print(f"{markup(summary.run_name)}: {summary.errors} episode(s) ended in an error; run the same "
                          "command again to retry them")
    for name, message in outcome.failures.items():
        console.print(f"[red]{markup(name)}: {markup(message)}[/red]")
    return exit_status


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(prog="python -m occubench.evaluate", description=__doc__)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_command(args)
    except OccuBenchError as exc:
        return print_error(exc)


def print_error(exc: OccuBenchError) -> int:
    """``exc`` for the user on stderr, and the exit status for bad input. Its text may quote a world's string or a
    server's answer: the environment's secrets are masked, control characters shown escaped."""
    print(f"occubench: error: {terminal(Redactor(environment_secrets()).text(str(exc)))}", file=sys.stderr)
    return 2
