"""``occubench export RUN_DIR --out FILE``: a run's token-exact rollouts as a training dataset.

One row per episode (or per turn, where a turn's prompt does not extend the turn before): ``input_ids``,
``mask`` (1 on the model's own tokens), ``logprobs``, ``reward``; see :mod:`occubench.engine.rollouts`. The run
must have been made with ``--record-tokens``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from occubench.errors import ConfigError


def _command(args: argparse.Namespace) -> int:
    from occubench.engine.rollouts import export_rollouts

    if Path(args.out).is_dir():
        raise ConfigError(f"--out {args.out} is a folder: name the file to write in it")
    rows = export_rollouts(Path(args.run_dir), Path(args.out))
    print(f"{rows} row(s) written to {args.out}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("export", help="a run's token-exact rollouts (made with --record-tokens) as a training "
                            "dataset of token ids, masks, logprobs and rewards", description=__doc__)
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run directory")
    parser.add_argument("--out", required=True, metavar="FILE",
                        help="the file to write: JSON Lines, or a Parquet table if it ends in .parquet (pip install "
                        "'occubench[parquet]')")
    parser.set_defaults(func=_command)
