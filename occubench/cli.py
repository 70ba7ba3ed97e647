"""The `occubench` command: one entry point with a subcommand per job."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from occubench import data, evaluate
from occubench.errors import ConfigError, OccuBenchError
from occubench.executable import BUILTIN_SUITE, ExecutableEnvironment, builtin_worlds, load_world, validate
from occubench.faults import FAULT_MODES
from occubench.workplace import commands as workplace_commands
from occubench.workplace.suite import WORKPLACE_SUITE
from occubench.workplace.templates import FAMILIES
from occubench.robustness import load_runs, robustness_table


def _data_download(args: argparse.Namespace) -> int:
    dest = data.download_data(Path(args.dest), url=args.url)
    print(f"OccuBench data ready in {dest}")
    return 0


def _data_verify(args: argparse.Namespace) -> int:
    data.verify_data(Path(args.dir))
    print(f"{args.dir}: every file matches the pinned checksums")
    return 0


def _robustness(args: argparse.Namespace) -> int:
    rows = robustness_table(load_runs(Path(d) for d in args.run_dirs))
    if not rows:
        raise ConfigError(f"no results in {', '.join(args.run_dirs)}")
    table = Table(title="Completion by environment mode; R = min(E1, E2, E3) / E0")
    for column in ("Agent", "World model", *FAULT_MODES, "R"):
        table.add_column(column, justify="left" if column in ("Agent", "World model") else "right")
    for row in rows:
        rates = [f"{100 * rate:.1f}" if (rate := row.rates[m]) is not None else "-" for m in FAULT_MODES]
        table.add_row(row.agent_model, row.world_model, *rates, "-" if row.score is None else f"{row.score:.2f}")
    Console(highlight=False).print(table)
    return 0


def _report(args: argparse.Namespace) -> int:
    from occubench import report  # matplotlib loads only for this command
    from occubench.summary import load_prices

    if args.resamples < 1:
        raise ConfigError(f"--resamples must be at least 1, got {args.resamples}")
    runs = report.load_run_dirs(args.run_dirs)
    prices = load_prices(Path(args.prices)) if args.prices else None
    stats = [report.run_stats(run, prices, resamples=args.resamples, seed=args.seed) for run in runs]
    modes = robustness_table(record for run in runs for record in run.records)
    if args.format == "json":
        print(json.dumps(report.report_json(stats, modes, by_domain=args.by_domain), indent=2, ensure_ascii=False))
    elif args.format == "csv":
        sys.stdout.write(report.report_csv(stats, by_domain=args.by_domain))
    else:
        print(report.markdown_report(stats, modes))
    if args.html:
        report.write_html(Path(args.html), runs, stats, prices=prices)
        print(f"HTML report written to {args.html}", file=sys.stderr)
    return 0


def _compare(args: argparse.Namespace) -> int:
    from occubench import report  # matplotlib loads only for this command

    runs = report.load_run_dirs(args.run_dirs)
    pairs = report.compare_groups((record for run in runs for record in run.records), by=args.by)
    if not pairs:
        raise ConfigError(f"nothing to compare: the results of {', '.join(args.run_dirs)} have fewer than two "
                          f"values of {args.by}")
    if args.format == "json":
        print(json.dumps(report.compare_json(pairs), indent=2, ensure_ascii=False))
    else:
        print("\n".join(report.to_markdown(table, 2) for table in report.compare_tables(pairs)))
    return 0


def _suites(args: argparse.Namespace) -> int:
    worlds = builtin_worlds()
    listing: dict[str, Any] = {BUILTIN_SUITE: [{"name": w.name, "scenario": w.scenario, "category": w.category, "domain": w.domain,
                                "tools": len(w.tools), "tasks": len(w.tasks)} for w in worlds],
                               WORKPLACE_SUITE: {"families": [{"name": f.name, "kind": f.kind, "difficulty": f.difficulty}
                                                              for f in sorted(FAMILIES.values(), key=lambda f: f.name)]}}
    if args.json:
        print(json.dumps(listing, indent=2))
        return 0
    table = Table(title=f"Suite {BUILTIN_SUITE}: executable worlds (run with --suite {BUILTIN_SUITE})")
    for column in ("Environment", "Category", "Domain", "Tools", "Tasks"):
        table.add_column(column, justify="right" if column in ("Tools", "Tasks") else "left",
                         no_wrap=column == "Environment")
    for entry in listing[BUILTIN_SUITE]:
        table.add_row(entry["name"], entry["category"], entry["domain"], str(entry["tools"]), str(entry["tasks"]))
    console = Console(highlight=False)
    console.print(table)
    console.print(f"Suite {WORKPLACE_SUITE}: generated working days ({len(FAMILIES)} task families: "
                  f"{', '.join(sorted(FAMILIES))}); run with --suite {WORKPLACE_SUITE} --days N --seed S.")
    console.print("Suite occubench: the OccuBench benchmark itself (LLM-simulated worlds), the default of "
                  "`occubench run`.")
    return 0


def _validate(args: argparse.Namespace) -> int:
    if args.suite == WORKPLACE_SUITE:
        return workplace_commands.validate(args.days, args.seed)
    if args.suite != BUILTIN_SUITE:
        raise ConfigError(f"--suite: {BUILTIN_SUITE} and {WORKPLACE_SUITE} have reference solutions to validate, "
                          f"not {args.suite!r}")
    world_problems, results = validate(builtin_worlds())
    table = Table(title="Reference solution must pass; doing nothing and the wrong solution must fail")
    for column in ("Task", "Difficulty", "Reference", "Do nothing", "Wrong", "Problems"):
        table.add_column(column, no_wrap=column == "Task")
    mark = {True: "[green]pass[/green]", False: "[red]fail[/red]"}
    for result in results:
        table.add_row(str(result.task.task_id), str(result.task.difficulty), mark[result.reference],
                      mark[result.noop], mark[result.wrong], "; ".join(result.problems))
    console = Console(highlight=False)
    console.print(table)
    bad_worlds = {name: problems for name, problems in world_problems.items() if problems}
    for name, problems in bad_worlds.items():
        console.print(f"[red]{name}: {'; '.join(problems)}[/red]")
    good = sum(result.ok for result in results)
    console.print(f"{good}/{len(results)} tasks valid (reference 100 %, do-nothing 0 %, wrong solution 0 %) in "
                  f"{len(world_problems)} environments")
    return 0 if good == len(results) and not bad_worlds else 1


def _serve(args: argparse.Namespace) -> int:
    from occubench.serve import serve  # the MCP SDK loads only for this command

    env = ExecutableEnvironment(load_world(args.env))
    try:
        serve(env, args.env, transport=args.transport, host=args.host, port=args.port)
    finally:
        env.close()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="occubench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="evaluate an agent on the OccuBench tasks (same flags as "
                         "python -m occubench.evaluate)", description=evaluate.__doc__)
    evaluate.add_arguments(run)
    run.set_defaults(func=evaluate.run)

    suites = sub.add_parser("suites", help="list the built-in suites and their environments")
    suites.add_argument("--json", action="store_true", help="print JSON instead of a table")
    suites.set_defaults(func=_suites)

    check = sub.add_parser("validate", help="check that every task of a suite is solvable and not trivially passed")
    check.add_argument("--suite", default=BUILTIN_SUITE,
                       help=f"{BUILTIN_SUITE} (default) or {WORKPLACE_SUITE}")
    check.add_argument("--days", type=int, default=50, help=f"{WORKPLACE_SUITE}: days to generate (default: 50)")
    check.add_argument("--seed", type=int, default=0, help=f"{WORKPLACE_SUITE}: generation seed (default: 0)")

    workplace = sub.add_parser("workplace", help="workplace scenarios: generate days to disk")
    workplace_sub = workplace.add_subparsers(dest="workplace_command", required=True, metavar="ACTION")
    generate = workplace_sub.add_parser("generate", help="write generated days as JSON files (same seed, same bytes)")
    generate.add_argument("--days", type=int, required=True, help="number of days")
    generate.add_argument("--seed", type=int, required=True, help="generation seed")
    generate.add_argument("--out", required=True, help="folder to write the day files into")
    generate.add_argument("--learning", action="store_true", help="also write each day's day-two variant")
    generate.set_defaults(func=workplace_commands.generate)
    check.set_defaults(func=_validate)

    serve = sub.add_parser("serve", help="serve an isolated instance of an environment over MCP")
    serve.add_argument("--env", required=True, help="environment name (see `occubench suites`)")
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio", help="default: stdio")
    serve.add_argument("--host", default="127.0.0.1", help="http transport: address to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="http transport: port (default: 8000)")
    serve.set_defaults(func=_serve)

    robustness = sub.add_parser("robustness", help="E0–E3 completion and robustness score from run directories")
    robustness.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run directories (results/<run name>)")
    robustness.set_defaults(func=_robustness)

    report = sub.add_parser("report", help="completion with confidence intervals, breakdowns, leaderboard and "
                            "robustness from run directories; optionally one self-contained HTML file")
    report.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run directories (results/<run name>)")
    report.add_argument("--html", metavar="FILE", help="also write an HTML report with charts and a trajectory viewer")
    report.add_argument("--format", choices=("md", "json", "csv"), default="md", help="printed format (default: md)")
    report.add_argument("--prices", metavar="FILE", help="model prices in USD per 1M tokens, for costs")
    report.add_argument("--by-domain", action="store_true",
                        help="include completion by domain in json and csv (markdown always has it)")
    report.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default: 2000)")
    report.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    report.set_defaults(func=_report)

    compare = sub.add_parser("compare", help="do groups of runs (say, two simulators) rank agents alike and agree "
                             "task by task?")
    compare.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run directories (results/<run name>)")
    compare.add_argument("--by", default="world_model", help="result field that splits the groups "
                         "(default: world_model)")
    compare.add_argument("--format", choices=("md", "json"), default="md", help="printed format (default: md)")
    compare.set_defaults(func=_compare)

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


if __name__ == "__main__":
    sys.exit(main())
