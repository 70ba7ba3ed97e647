"""The `occubench` command: one entry point with a subcommand per job."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from occubench import __version__, evaluate, rescore
from occubench.errors import ConfigError, OccuBenchError
from occubench.report import view_command
from occubench.synth.executable import command as executable_command
from occubench.synth.lwm import command as lwm_command

if TYPE_CHECKING:
    from occubench import report


def _data_download(args: argparse.Namespace) -> int:
    from occubench import data

    dest = data.download_data(Path(args.dest), url=args.url)
    print(f"OccuBench data ready in {dest}")
    return 0


def _data_verify(args: argparse.Namespace) -> int:
    from occubench import data

    manifest = data.verify_data(Path(args.dir))
    print(f"{args.dir}: every file matches {manifest}")
    return 0


def _robustness(args: argparse.Namespace) -> int:
    from occubench.report.tables import modes_table
    from occubench.robustness import load_named_runs, robustness_table, robustness_warnings, warn

    # A directory without results is skipped with a warning; none with results is an error.
    rows = robustness_table(load_named_runs(args.run_dirs))
    if not rows:
        raise ConfigError(f"no evaluated results in {', '.join(args.run_dirs)}: their results files are empty or hold "
                          "only errors")
    for message in robustness_warnings(rows):
        warn(message)
    Console(highlight=False).print(modes_table(rows).to_rich())
    return 0


#: Each resample walks every task of every run (and every pair of agents) in Python: 100,000 already takes about
#: 20 s for one run of 30 tasks, and more only narrows the interval's own noise (10^9 hung the command).
MAX_RESAMPLES = 100_000

RUN_DIRS_HELP = ("run directories (results/<run name>), or Inspect logs of occubench tasks (.eval files, or a "
                 "directory of them)")


def _load_reported_runs(run_dirs: list[str], notes: list[str] | None = None) -> list[report.Run]:
    """The run directories that hold results (the others skipped with a warning, also added to ``notes``); an
    error when they hold no result at all."""
    from occubench import report

    runs = report.load_run_dirs(run_dirs, notes)
    if not any(run.results for run in runs):
        raise ConfigError(f"no results in {', '.join(run_dirs)}: their results files are empty")
    return runs


def _report(args: argparse.Namespace) -> int:
    from occubench import report  # matplotlib loads only for this command
    from occubench.robustness import robustness_table, robustness_warnings, warn
    from occubench.summary import load_prices

    notes: list[str] = []  # the loading warnings, for the report to show as well
    runs = _load_reported_runs(args.run_dirs, notes)
    prices = load_prices(Path(args.prices)) if args.prices else None
    stats = [report.run_stats(run, prices, resamples=args.resamples, seed=args.seed) for run in runs]
    modes = robustness_table({run.name: run.results for run in runs})
    for message in robustness_warnings(modes):
        warn(message)
    paired = report.paired_comparisons((r for run in runs for r in run.results), resamples=args.resamples,
                                       seed=args.seed, warnings=notes)
    if args.format == "json":
        print(json.dumps(report.report_json(stats, modes, by_domain=args.by_domain, notes=notes, paired=paired),
                         indent=2, ensure_ascii=False))
    elif args.format == "csv":
        sys.stdout.write(report.report_csv(stats, by_domain=args.by_domain))
    else:
        print(report.markdown_report(stats, modes, extra=report.suite_tables(runs), notes=notes, paired=paired,
                                     overview=report.overview_tables(runs)))
    if args.html:
        report.write_html(Path(args.html), runs, stats, prices=prices, notes=notes, paired=paired)
        print(f"HTML report written to {args.html}", file=sys.stderr)
    return 0


def _compare(args: argparse.Namespace) -> int:
    from occubench import report  # matplotlib loads only for this command

    runs = _load_reported_runs(args.run_dirs)
    pairs = report.compare_groups((result for run in runs for result in run.results), by=args.by)
    if not pairs:
        raise ConfigError(f"nothing to compare: the results of {', '.join(args.run_dirs)} have fewer than two "
                          f"values of {args.by} within any one suite")
    if args.format == "json":
        print(json.dumps(report.compare_json(pairs), indent=2, ensure_ascii=False))
    else:
        tables = report.compare_tables(pairs)
        if args.by == "agent_model":  # groups that are agents: is their difference more than noise?
            paired = report.paired_comparisons(result for run in runs for result in run.results)
            tables += [report.paired_table(paired)] if paired else []
        print("\n".join(report.to_markdown(table, 2) for table in tables))
    return 0


def _demo(args: argparse.Namespace) -> int:
    from occubench.demo import demo

    return demo(args.output_dir)


def _suites(args: argparse.Namespace) -> int:
    from occubench.plugins import installed_suites

    if args.worlds_dir:  # the executable worlds of that folder, alone
        from occubench.executable import plugin

        suites = {plugin.NAME: plugin.suite}
        listings = {plugin.NAME: plugin.listing(args.worlds_dir, args.trust_world_code)}
    else:
        suites = installed_suites()
        listings = {name: definition.listing() if definition.listing else ([], None)
                    for name, definition in sorted(suites.items())}
    if args.json:
        print(json.dumps({name: {"description": suites[name].description, "listing": data}
                          for name, (_, data) in listings.items()}, indent=2, ensure_ascii=False))
        return 0
    console = Console(highlight=False)
    for name, (tables, _) in listings.items():
        console.print(f"[bold]{name}[/bold]: {suites[name].description}")
        for table in tables:
            console.print(table.to_rich())
    return 0


def _tasks(args: argparse.Namespace) -> int:
    from occubench.plugins import load_suite
    from occubench.tables import Table

    as_json = vars(args).pop("json")
    config = evaluate.config_from_args(args)
    tasks = load_suite(config.suite).plan(config, Console(stderr=True, highlight=False)).tasks
    rows = [{"task_id": t.task_id, "scenario": t.scenario, "category": t.category, "domain": t.domain,
             "difficulty": t.difficulty, "environment": t.env_name} for t in tasks]
    if as_json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    keys = ("task_id", "scenario", "category", "environment", "difficulty")
    table = Table(f"{config.suite}: {len(rows)} task(s)", ["Task", "Scenario", "Category", "Environment", "Difficulty"],
                  [[escape(str(row[key])) for key in keys] for row in rows], text_columns=4)
    Console(highlight=False).print(table.to_rich())
    return 0


def _validate(args: argparse.Namespace) -> int:
    from occubench.plugins import ValidateOptions, load_suite

    definition = load_suite(args.suite)
    if definition.validate is None:
        raise ConfigError(f"--suite: {definition.name} has no reference solutions to validate")
    options = ValidateOptions(days=args.days, seed=args.seed, worlds_dir=args.worlds_dir,
                              trust_world_code=args.trust_world_code)
    return 0 if definition.validate(options, Console(highlight=False)) else 1


def _serve(args: argparse.Namespace) -> int:
    from occubench.executable.plugin import listed_worlds
    from occubench.executable.registry import world_named
    from occubench.serve import serve, serve_token  # the MCP SDK loads only for this command

    # Refused before the world starts: an address others can reach is served only with a token.
    token = serve_token(args.host, args.token_file) if args.transport == "http" else None
    worlds = listed_worlds(args.worlds_dir, args.trust_world_code)
    try:
        world = world_named(args.env, worlds, args.worlds_dir)
    except ConfigError as exc:
        raise ConfigError(f"--env: {exc}") from None
    env = world.environment()
    try:
        serve(env, args.env, transport=args.transport, host=args.host, port=args.port, token=token,
              allowed_hosts=args.allowed_host)
    finally:
        env.close()
    return 0


def _doctor(args: argparse.Namespace) -> int:
    from importlib.util import find_spec

    from occubench.sandbox import INSTALL_HINT, detect

    detection = detect()
    sandbox = (detection.provider.describe() if detection.provider is not None else
               f"none ({detection.reason}): worlds from outside occubench are refused unless --trust-world-code; "
               f"to sandbox them, {INSTALL_HINT}")
    extras = ", ".join(f"{name} {'yes' if find_spec(module) else 'no'}" for name, module in
                       (("gym", "gymnasium"), ("ray", "ray"), ("inspect", "inspect_ai")))
    print(f"occubench {__version__} on Python {sys.version.split()[0]} ({sys.platform})")
    print(f"sandbox: {sandbox}")
    print(f"extras: {extras}")
    return 0


def _workplace_generate(args: argparse.Namespace) -> int:
    from occubench.workplace.commands import generate

    try:
        return generate(args)
    except OSError as exc:  # --out is a file, or not writable
        raise ConfigError(f"--out: cannot write the days: {exc}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = evaluate.Parser(prog="occubench", description=__doc__)
    parser.add_argument("--version", action="version", version=f"occubench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="evaluate an agent on a suite (same flags as python -m occubench.evaluate)",
                         description=evaluate.__doc__)
    evaluate.add_arguments(run)
    run.set_defaults(func=evaluate.run_command)

    demo = sub.add_parser("demo", help="a first evaluation, offline and without a key: the executable worlds with "
                          "their reference solutions, a simulated-world sample with the project's mock endpoint, the "
                          "leaderboard and an HTML report")
    demo.add_argument("--output-dir", default="results", metavar="DIR", help="where the runs and demo-report.html go "
                      "(default: results)")
    demo.set_defaults(func=_demo)

    suites = sub.add_parser("suites", help="list the installed suites and their environments")
    suites.add_argument("--json", action="store_true", help="print JSON instead of a table")
    suites.add_argument("--worlds-dir", metavar="DIR", help="list only the executable worlds in DIR (as `occubench "
                        "synth executable` writes them)")
    evaluate.add_trust_argument(suites)
    suites.set_defaults(func=_suites)

    tasks = sub.add_parser("tasks", help="list the tasks a run would evaluate: ids, scenario, category, difficulty",
                           argument_default=argparse.SUPPRESS)
    tasks.add_argument("--suite", help="occubench (default), executable, workplace, another installed suite or "
                       "package.module:attribute")
    evaluate.add_task_arguments(tasks)
    tasks.add_argument("--seed", type=int, help="--shuffle's seed; workplace: the days' generation seed (default: 0)")
    tasks.add_argument("--days", type=evaluate.positive_int, help="workplace: days to generate (default: 10)")
    tasks.add_argument("--workplace-dir", help="workplace: the days written by `occubench workplace generate`")
    tasks.add_argument("--json", action="store_true", default=False, help="print JSON instead of a table")
    tasks.set_defaults(func=_tasks)

    check = sub.add_parser("validate", help="check that every task of a suite is solvable and not trivially passed")
    check.add_argument("--suite", default="executable",
                       help="a suite with reference solutions: executable (default), workplace, another installed "
                       "suite or package.module:attribute")
    check.add_argument("--days", type=evaluate.positive_int, default=50,
                       help="workplace: days to generate (default: 50)")
    check.add_argument("--seed", type=int, default=0, help="workplace: generation seed (default: 0)")
    check.add_argument("--worlds-dir", metavar="DIR", help="executable: validate the world folders in DIR instead "
                       "of the built-in worlds")
    evaluate.add_trust_argument(check)

    workplace = sub.add_parser("workplace", help="workplace scenarios: generate days to disk")
    workplace_sub = workplace.add_subparsers(dest="workplace_command", required=True, metavar="ACTION")
    generate = workplace_sub.add_parser("generate", help="write generated days as JSON files (same seed, same bytes)")
    generate.add_argument("--days", type=evaluate.positive_int, required=True, help="number of days")
    generate.add_argument("--seed", type=int, required=True, help="generation seed")
    generate.add_argument("--out", required=True, help="folder to write the day files into")
    generate.add_argument("--learning", action="store_true", help="also write each day's day-two variant")
    generate.set_defaults(func=_workplace_generate)
    check.set_defaults(func=_validate)

    serve = sub.add_parser("serve", help="serve an isolated instance of an environment over MCP")
    serve.add_argument("--env", required=True, help="environment name (see `occubench suites`)")
    serve.add_argument("--worlds-dir", metavar="DIR", help="serve a world of DIR (as `occubench synth executable` "
                       "writes them) instead of a built-in one")
    evaluate.add_trust_argument(serve)
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio", help="default: stdio")
    serve.add_argument("--host", default="127.0.0.1", help="http transport: address to bind (default: 127.0.0.1)")
    # 8000 is vLLM's default and 8100 the mock server's: the three can run side by side.
    serve.add_argument("--port", type=evaluate.int_range(1, 65535), default=8200,
                       help="http transport: port (default: 8200)")
    serve.add_argument("--token-file", metavar="FILE",
                       help="http transport: every request must carry 'Authorization: Bearer <the file's text>' "
                       "(default: $OCCUBENCH_SERVE_TOKEN); required for a --host other than loopback")
    serve.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                       help="http transport, --host other than loopback: a name or address clients reach this "
                       "server by, accepted in the Host header besides --host (repeat for several)")
    serve.set_defaults(func=_serve)

    robustness = sub.add_parser("robustness", help="E0–E3 completion and robustness score from run directories")
    robustness.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help=RUN_DIRS_HELP)
    robustness.set_defaults(func=_robustness)

    report = sub.add_parser("report", help="completion with confidence intervals, breakdowns, leaderboard and "
                            "robustness from run directories; optionally one self-contained HTML file")
    report.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help=RUN_DIRS_HELP)
    report.add_argument("--html", metavar="FILE", help="also write an HTML report with charts and a trajectory viewer")
    report.add_argument("--format", choices=("md", "json", "csv"), default="md", help="printed format (default: md)")
    report.add_argument("--prices", metavar="FILE", help="model prices in USD per 1M tokens, for costs")
    report.add_argument("--by-domain", action="store_true",
                        help="include completion by domain in json and csv (markdown always has it)")
    report.add_argument("--resamples", type=evaluate.int_range(1, MAX_RESAMPLES), default=2000,
                        help=f"bootstrap resamples, at most {MAX_RESAMPLES:,} (default: 2000)")
    report.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    report.set_defaults(func=_report)

    compare = sub.add_parser("compare", help="do groups of runs (say, two simulators) rank agents alike and agree "
                             "task by task?")
    compare.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help=RUN_DIRS_HELP)
    compare.add_argument("--by", default="world_model", help="result field that splits the groups "
                         "(default: world_model)")
    compare.add_argument("--format", choices=("md", "json"), default="md", help="printed format (default: md)")
    compare.set_defaults(func=_compare)

    synth = sub.add_parser("synth", help="make new worlds and tasks from scenarios: lwm (LLM-simulated, calibrated "
                           "for solvability) or executable (SQLite, every stage executed)")
    synth_sub = synth.add_subparsers(dest="synth_command", required=True, metavar="TRACK")
    for track in (lwm_command, executable_command):
        track.add_parser(synth_sub)
    rescore.add_parser(sub)
    view_command.add_parser(sub)

    doctor = sub.add_parser("doctor", help="what this machine offers occubench: the sandbox for outside worlds, "
                            "the optional extras")
    doctor.set_defaults(func=_doctor)

    data_parser = sub.add_parser("data", help="fetch or check the OccuBench benchmark data")
    data_sub = data_parser.add_subparsers(dest="data_command", required=True, metavar="ACTION")
    download = data_sub.add_parser("download", help="download the pinned upstream data and verify its checksums")
    download.add_argument("--dest", default="data", help="directory to write the data into (default: ./data)")
    download.add_argument("--url", default=None,
                          help="tarball URL to fetch instead of the pinned GitHub archive (or set OCCUBENCH_DATA_URL)")
    download.set_defaults(func=_data_download)
    verify = data_sub.add_parser("verify", help="check a data directory against the pinned checksums")
    verify.add_argument("--dir", default="data", help="data directory to check (default: ./data)")
    verify.set_defaults(func=_data_verify)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except OccuBenchError as exc:
        print(f"occubench: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `occubench tasks --json | head`: the reader left, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit flush does not fail again
        return 0
    except SystemExit as exc:
        # A rich console meeting a closed pipe (`occubench run ... | head`) points stdout at /dev/null and exits
        # with 1 itself; the results are on disk, so that is the same quiet end as above.
        if isinstance(exc.__context__, BrokenPipeError):
            return 0
        raise


if __name__ == "__main__":
    sys.exit(main())
