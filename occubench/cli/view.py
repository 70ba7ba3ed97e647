"""``occubench view``: its flags → :func:`occubench.report.live.serve_view`."""

from __future__ import annotations

import argparse
from pathlib import Path

from occubench.cli.run import int_range


def _view(args: argparse.Namespace) -> int:
    from occubench.engine.summary import load_prices
    from occubench.report.live import serve_view  # the server and the report machinery (~80 ms) load only here

    serve_view(args.run_dirs, args.output_dir, port=args.port,
               prices=load_prices(Path(args.prices)) if args.prices else None)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "view", help="a live web viewer of run directories on 127.0.0.1: report tables and trajectories, refreshed "
        "while runs write", description="Serve the report's tables and every result's trajectory (instruction, "
        "system prompt, tools, conversation, judge prompt and votes, checks, state diff, faults, usage) on "
        "127.0.0.1, following the run directories as runs write them. Stop with Ctrl-C.")
    parser.add_argument("run_dirs", nargs="*", metavar="RUN_DIR",
                        help="run directories, or ATIF trajectory files (*.json) or folders of them (*.atif.json, "
                        "as `occubench export --format atif` writes) (default: every run directory in --output-dir)")
    parser.add_argument("--output-dir", metavar="DIR", help="show every run directory in DIR, those that appear "
                        "while the viewer runs included (default: ./results)")
    parser.add_argument("--port", type=int_range(0, 65535), default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--prices", metavar="FILE", help="model prices in USD per 1M tokens, for costs")
    parser.set_defaults(func=_view)
