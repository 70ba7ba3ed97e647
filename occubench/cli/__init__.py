"""The `occubench` command: one entry point with a subcommand per job."""

# Each command is a module of this package whose add_parser(sub) adds its subcommand(s) and sets the function that
# runs them; what a command needs beyond its flags loads in that function, so every command starts as fast as --help.

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from occubench import __version__
from occubench.cli import (
    data,
    demo,
    doctor,
    export,
    report,
    rescore,
    run,
    serve,
    suites,
    synth,
    twin,
    view,
    workplace,
    worlds,
)
from occubench.errors import OccuBenchError

#: In the order `occubench --help` lists them.
COMMANDS = (run, demo, suites, workplace, twin, serve, report, synth, rescore, export, view, worlds, doctor, data)


def build_parser() -> argparse.ArgumentParser:
    parser = run.Parser(prog="occubench", description=__doc__)
    parser.add_argument("--version", action="version", version=f"occubench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except OccuBenchError as exc:
        return run.print_error(exc)
    except BrokenPipeError:  # `occubench tasks --json | head`: the reader left, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit flush does not fail again
        return 0
    except SystemExit as exc:
        # A rich console meeting a closed pipe (`occubench run ... | head`) points stdout at /dev/null and exits
        # with 1 itself; the results are on disk, so that is the same quiet end as above.
        if isinstance(exc.__context__, BrokenPipeError):
            return 0
        raise
