"""``occubench data download`` and ``occubench data verify``: the OccuBench benchmark data."""

from __future__ import annotations

import argparse
from pathlib import Path


def _download(args: argparse.Namespace) -> int:
    from occubench.simulated import data

    dest = data.download_data(Path(args.dest), url=args.url)
    print(f"OccuBench data ready in {dest}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from occubench.simulated import data

    manifest = data.verify_data(Path(args.dir))
    print(f"{args.dir}: every file matches {manifest}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    data = sub.add_parser("data", help="fetch or check the OccuBench benchmark data")
    actions = data.add_subparsers(dest="data_command", required=True, metavar="ACTION")
    download = actions.add_parser("download", help="download the pinned upstream data and verify its checksums")
    download.add_argument("--dest", default="data", help="directory to write the data into (default: ./data)")
    download.add_argument("--url", default=None,
                          help="tarball URL to fetch instead of the pinned GitHub archive (or set OCCUBENCH_DATA_URL)")
    download.set_defaults(func=_download)
    verify = actions.add_parser("verify", help="check a data directory against the pinned checksums")
    verify.add_argument("--dir", default="data", help="data directory to check (default: ./data)")
    verify.set_defaults(func=_verify)
