"""``occubench doctor``: what this machine offers occubench."""

from __future__ import annotations

import argparse
import sys

from occubench import __version__

DISTRIBUTION = "occubench"


def _unmet(name: str, extras: frozenset[str] = frozenset(), seen: set[tuple[str, str]] | None = None) -> list[str]:
    """What the installed distribution ``name`` needs for ``extras`` and this environment lacks: each requirement
    (followed into the extras it names, its own or another project's) not installed, or installed at a version
    outside its range. Read from the installed distributions' metadata, so an extra added to pyproject.toml is
    checked with no list here to update."""
    from importlib.metadata import PackageNotFoundError, distribution

    from packaging.requirements import Requirement

    seen = set() if seen is None else seen
    requirements = distribution(name).requires or []
    missing: list[str] = []
    for extra in sorted(extras):
        if (name, extra) in seen:
            continue
        seen.add((name, extra))
        for line in requirements:
            requirement = Requirement(line)
            if requirement.marker is None or not requirement.marker.evaluate({"extra": extra}):
                continue  # a core requirement, another extra's, or not for this Python
            try:
                found = distribution(requirement.name).version
            except PackageNotFoundError:
                missing.append(requirement.name)
                continue
            if not requirement.specifier.contains(found, prereleases=True):
                missing.append(f"{requirement.name} {found} (needs {requirement.specifier})")
            elif requirement.extras:
                missing += _unmet(requirement.name, frozenset(requirement.extras), seen)
    return list(dict.fromkeys(missing))


def _extras_report() -> list[str]:
    """A line per extra the installed occubench declares: usable, or what it lacks and the command to add it."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        declared = metadata(DISTRIBUTION).get_all("Provides-Extra") or []
    except PackageNotFoundError:
        return ["unknown: occubench is imported from a source folder, not installed (pip install -e .)"]
    lines = []
    for extra in declared:
        missing = _unmet(DISTRIBUTION, frozenset({extra}))
        lines.append(f"{extra}: yes" if not missing else
                     f"{extra}: no, lacks {', '.join(missing)}: pip install 'occubench[{extra}]'")
    return lines


def _doctor(args: argparse.Namespace) -> int:
    from occubench.sandbox import INSTALL_HINT, detect

    detection = detect()
    sandbox = (detection.provider.describe() if detection.provider is not None else
               f"none ({detection.reason}): worlds from outside occubench are refused unless --trust-world-code; "
               f"to sandbox them, {INSTALL_HINT}")
    print(f"occubench {__version__} on Python {sys.version.split()[0]} ({sys.platform})")
    print(f"sandbox: {sandbox}")
    print("extras:")
    for line in _extras_report():
        print(f"  {line}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    doctor = sub.add_parser("doctor", help="what this machine offers occubench: the sandbox for outside worlds, "
                            "each optional extra and what to install for one that is not usable")
    doctor.set_defaults(func=_doctor)
