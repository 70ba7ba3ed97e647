"""``occubench export RUN_DIR --out PATH``: a run's episodes in another format.

``--format rows`` (the default): the run's token-exact rollouts as a training dataset, one row per episode (or per
turn, where a turn's prompt does not extend the turn before): ``input_ids``, ``mask`` (1 on the model's own
tokens), ``logprobs``, ``reward``; see :mod:`occubench.engine.rollouts`. The run must have been made with
``--record-tokens``. ``--out`` is the file to write.

``--format atif``: each episode as an ATIF trajectory (Harbor's Agent Trajectory Interchange Format), one JSON
file per episode in the new folder ``--out``: its steps, tool calls and observations, tokens and logprobs where
recorded, token counts and (with ``--prices``) cost, and the verdict as ``extra.reward``; see
:mod:`occubench.export.atif`. ``occubench view`` opens such a file or folder.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from occubench.errors import ConfigError


def _command(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if args.format == "atif":
        from occubench.engine.summary import load_prices
        from occubench.export.atif import export_atif

        written = export_atif(Path(args.run_dir), out, load_prices(Path(args.prices)) if args.prices else None)
        print(f"{written} trajectory file(s) written to {out}")
        return 0
    from occubench.engine.rollouts import export_rollouts

    if args.prices:
        raise ConfigError("--prices is for --format atif: rows carry no cost")
    if out.is_dir():
        raise ConfigError(f"--out {out} is a folder: name the file to write in it")
    rows = export_rollouts(Path(args.run_dir), out)
    print(f"{rows} row(s) written to {out}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("export", help="a run's episodes as a training dataset of token ids, masks, logprobs "
                            "and rewards (made with --record-tokens), or as ATIF trajectories",
                            description=__doc__)
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run directory")
    parser.add_argument("--format", choices=("rows", "atif"), default="rows",
                        help="rows: training rows (default); atif: one ATIF trajectory file per episode")
    parser.add_argument("--out", required=True, metavar="PATH",
                        help="rows: the file to write, JSON Lines, or a Parquet table if it ends in .parquet (pip "
                        "install 'occubench[parquet]'); atif: the folder to make (new or empty)")
    parser.add_argument("--prices", metavar="FILE", help="atif: model prices in USD per 1M tokens, for the agent's "
                        "cost (final_metrics.total_cost_usd)")
    parser.set_defaults(func=_command)
