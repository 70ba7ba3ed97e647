"""``occubench robustness``, ``occubench report`` and ``occubench compare``: tables from run directories."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from occubench.cli.run import int_range
from occubench.errors import ConfigError
from occubench.util.console import rich_console
from occubench.util.text import terminal

if TYPE_CHECKING:
    from occubench import report

#: Each resample walks every task of every run (and every pair of agents) in Python: 100,000 already takes about
#: 20 s for one run of 30 tasks, and more only narrows the interval's own noise (10^9 hung the command).
MAX_RESAMPLES = 100_000

RUN_DIRS_HELP = ("run directories (results/<run name>), or Inspect logs of occubench tasks (.eval files, or a "
                 "directory of them)")


def _robustness(args: argparse.Namespace) -> int:
    from occubench.report.robustness import load_named_runs, robustness_table, robustness_warnings, warn
    from occubench.report.tables import modes_table

    # A directory without results is skipped with a warning; none with results is an error.
    rows = robustness_table(load_named_runs(args.run_dirs))
    if not rows:
        raise ConfigError(f"no evaluated results in {', '.join(args.run_dirs)}: their results files are empty or hold "
                          "only errors")
    for message in robustness_warnings(rows):
        warn(message)
    rich_console().print(modes_table(rows))
    return 0


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
    from occubench.engine.summary import load_prices
    from occubench.report.robustness import robustness_table, robustness_warnings, warn

    notes: list[str] = []  # the loading warnings, for the report to show as well
    runs = _load_reported_runs(args.run_dirs, notes)
    prices = load_prices(Path(args.prices)) if args.prices else None
    stats = [report.run_stats(run, prices) for run in runs]
    modes = robustness_table({run.name: run.results for run in runs})
    for message in robustness_warnings(modes):
        warn(message)
    paired = report.paired_comparisons((r for run in runs for r in run.results), resamples=args.resamples,
                                       seed=args.seed, warnings=notes)
    if args.format == "json":
        print(json.dumps(report.report_json(stats, modes, by_domain=args.by_domain, notes=notes, paired=paired),
                         indent=2))  # ASCII: a string of a results file holds no control byte when printed
    elif args.format == "csv":
        sys.stdout.write(terminal(report.report_csv(stats, by_domain=args.by_domain)))
    else:
        print(terminal(report.markdown_report(stats, modes, extra=report.suite_tables(runs), notes=notes,
                                              paired=paired, overview=report.overview_tables(runs))))
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
        print(json.dumps(report.compare_json(pairs), indent=2))
    else:
        tables = report.compare_tables(pairs)
        if args.by == "agent_model":  # groups that are agents: is their difference more than noise?
            paired = report.paired_comparisons(result for run in runs for result in run.results)
            tables += [report.paired_table(paired)] if paired else []
        print(terminal("\n".join(report.to_markdown(table, 2) for table in tables)))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
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
    report.add_argument("--resamples", type=int_range(1, MAX_RESAMPLES), default=2000,
                        help=f"resamples of the paired bootstrap, at most {MAX_RESAMPLES:,} (default: 2000)")
    report.add_argument("--seed", type=int, default=0, help="paired bootstrap seed (default: 0)")
    report.set_defaults(func=_report)

    compare = sub.add_parser("compare", help="do groups of runs (say, two simulators) rank agents alike and agree "
                             "task by task?")
    compare.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help=RUN_DIRS_HELP)
    compare.add_argument("--by", default="world_model", help="result field that splits the groups "
                         "(default: world_model)")
    compare.add_argument("--format", choices=("md", "json"), default="md", help="printed format (default: md)")
    compare.set_defaults(func=_compare)
