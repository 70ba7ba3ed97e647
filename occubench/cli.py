"""The `occubench` command: one entry point with a subcommand per job."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from occubench import data, evaluate
from occubench.errors import ConfigError, OccuBenchError
from occubench.faults import FAULT_MODES
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="occubench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="evaluate an agent on the OccuBench tasks (same flags as "
                         "python -m occubench.evaluate)", description=evaluate.__doc__)
    evaluate.add_arguments(run)
    run.set_defaults(func=evaluate.run)

    robustness = sub.add_parser("robustness", help="E0–E3 completion and robustness score from run directories")
    robustness.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run directories (results/<run name>)")
    robustness.set_defaults(func=_robustness)

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
