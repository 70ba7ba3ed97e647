"""``occubench doctor``: what this machine offers occubench."""

from __future__ import annotations

import argparse
import sys

from occubench import __version__


def _doctor(args: argparse.Namespace) -> int:
    from importlib.util import find_spec

    from occubench.sandbox import INSTALL_HINT, detect

    detection = detect()
    sandbox = (detection.provider.describe() if detection.provider is not None else
               f"none ({detection.reason}): worlds from outside occubench are refused unless --trust-world-code; "
               f"to sandbox them, {INSTALL_HINT}")
    extras = ", ".join(f"{name} {'yes' if find_spec(module) else 'no'}" for name, module in
                       (("gym", "gymnasium"), ("ray", "ray"), ("inspect", "inspect_ai")))
    print(f"occubench {__version__} on Python {sys.version.split()[0]} ({sys.platform})")
    print(f"sandbox: {sandbox}")
    print(f"extras: {extras}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    doctor = sub.add_parser("doctor", help="what this machine offers occubench: the sandbox for outside worlds, "
                            "the optional extras")
    doctor.set_defaults(func=_doctor)
