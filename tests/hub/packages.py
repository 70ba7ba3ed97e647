"""Packages the hub's tests make: built-in executable worlds in a package folder."""

from __future__ import annotations

import shutil
from pathlib import Path

from occubench.hub.package import Manifest, describe

WORLDS = Path(__file__).resolve().parents[2] / "occubench" / "executable" / "worlds"


def package_folder(root: Path, world: str = "insurance_claims") -> Path:
    """``root``, a package folder holding the built-in world ``world`` under executable/."""
    shutil.copytree(WORLDS / world, root / "executable" / world, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def make_package(folder: Path, world: str = "insurance_claims", version: str = "1.0") -> Manifest:
    """A package of one built-in executable world in ``folder``; its manifest."""
    return describe(package_folder(folder, world), name="acme/claims", version=version)


def files_of(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*"))
            if path.is_file()}
