"""``occubench workplace generate``: the workplace suite's days, written to disk."""

from __future__ import annotations

import argparse
from pathlib import Path

from occubench.cli.run import positive_int
from occubench.errors import ConfigError


def _generate(args: argparse.Namespace) -> int:
    from occubench.workplace.generate import generate_days, write_days

    try:
        days = generate_days(args.seed, args.days)
        if args.learning:
            days += generate_days(args.seed, args.days, phase=2)
        paths = write_days(days, Path(args.out))
        print(f"{len(paths)} day(s) written to {args.out} (seed {args.seed})")
    except OSError as exc:  # --out is a file, or not writable
        raise ConfigError(f"--out: cannot write the days: {exc}") from None
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    workplace = sub.add_parser("workplace", help="workplace scenarios: generate days to disk")
    actions = workplace.add_subparsers(dest="workplace_command", required=True, metavar="ACTION")
    generate = actions.add_parser("generate", help="write generated days as JSON files (same seed, same bytes)")
    generate.add_argument("--days", type=positive_int, required=True, help="number of days")
    generate.add_argument("--seed", type=int, required=True, help="generation seed")
    generate.add_argument("--out", required=True, help="folder to write the day files into")
    generate.add_argument("--learning", action="store_true", help="also write each day's day-two variant")
    generate.set_defaults(func=_generate)
