"""``occubench twin derive``: the executable worlds' simulated twins, written as an OccuBench data folder.

A twin run itself is ``occubench run --suite twin`` (each call also made on the real world, and compared).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from occubench.cli.run import add_trust_argument
from occubench.errors import ConfigError


def _derive(args: argparse.Namespace) -> int:
    from occubench.executable.plugin import listed_worlds
    from occubench.twin.derive import facts_of, write_dataset
    from occubench.twin.suite import twin_tasks

    worlds = listed_worlds(args.worlds_dir, args.trust_world_code)
    try:
        count = write_dataset([facts_of(world.described) for world in worlds], twin_tasks(worlds), Path(args.out))
    except OSError as exc:  # --out is a file, or not writable
        raise ConfigError(f"--out: cannot write the twins: {exc}") from None
    print(f"{len(worlds)} twin world(s), {count} task(s) written to {args.out}: run them as any simulated world "
          f"with occubench run --suite occubench --data-dir {args.out} --world-model MODEL")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    twin = sub.add_parser("twin", help="twin worlds: the executable worlds as LLM-simulated ones (run them, each "
                          "call also made on the real world, with `occubench run --suite twin`)")
    actions = twin.add_subparsers(dest="twin_command", required=True, metavar="ACTION")
    derive = actions.add_parser("derive", help="write the twins' world-model configs and tasks as an OccuBench "
                                "data folder (no model needed; the same worlds give the same files)")
    derive.add_argument("--worlds-dir", metavar="DIR", help="the worlds of DIR instead of the built-in ones")
    add_trust_argument(derive)
    derive.add_argument("--out", required=True, help="the data folder to write")
    derive.set_defaults(func=_derive)
