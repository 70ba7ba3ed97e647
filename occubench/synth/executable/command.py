"""``occubench synth executable``: flags → :class:`ExecutableSynthConfig` → :func:`synthesize`, then the report."""

from __future__ import annotations

import argparse
import os

from rich.console import Console

from occubench.evaluate import add_trust_argument, config_from_args
from occubench.synth.command import add_synth_arguments


def _run(args: argparse.Namespace) -> int:
    from occubench.synth.executable.config import ExecutableSynthConfig
    from occubench.synth.executable.pipeline import synthesize

    config = config_from_args(args, ExecutableSynthConfig)
    console = Console(highlight=False)
    try:
        report = synthesize(config, console)
    except KeyboardInterrupt:
        # Every accepted answer on disk is whole; the same command resumes from them.
        os._exit(130)
    report.print(console)
    console.print(f"{len(report.worlds)} world(s) written to {config.out} (report: {config.out}/synthesis/"
                  f"report.json); check them with: occubench validate --worlds-dir {config.out}")
    return 0 if len(report.worlds) == report.requested else 1


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "executable", help="executable SQLite worlds from scenarios, every stage executed and corrected",
        description="From a scenario line: tasks, a SQLite schema, seed rows, tools as Python functions and per task "
        "code checks with a reference and a wrong solution. Every stage's answer is executed in a sandbox (tables "
        "created, rows inserted, tools called, checks run on the initial database and after each solution) and "
        "its errors fed back for up to 4 correction rounds; what still fails is dropped with its reason. Each "
        "world is written to <out>/<name>/, in the shape of the built-in worlds (load it with --worlds-dir).")
    add_synth_arguments(parser)
    worlds = parser.add_argument_group("worlds")
    worlds.add_argument("--scenario", action="append", help='a scenario, e.g. "Insurance claims adjudication" '
                        "(required; repeat for several)")
    worlds.add_argument("--category", help="one of the ten categories, name or abbreviation, for every world "
                        "(default: the model picks)")
    worlds.add_argument("--domain", help="the domain of every world (default: the model names it)")
    worlds.add_argument("--worlds", type=int, help="worlds made of each scenario, as different variants (default: 1)")
    worlds.add_argument("--tasks", type=int, help="tasks per world, at least 3 (default: 3); a world is kept with "
                        "at least 3 valid tasks covering difficulties 1, 2 and 3")
    add_trust_argument(worlds)
    parser.set_defaults(func=_run)
