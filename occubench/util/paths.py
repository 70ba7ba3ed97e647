"""Where occubench keeps what it downloads or derives for the user: one cache folder for every kind of world."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_dir() -> Path:
    """`$OCCUBENCH_CACHE_DIR`, else `$XDG_CACHE_HOME/occubench`, else `~/.cache/occubench`."""
    if override := os.environ.get("OCCUBENCH_CACHE_DIR"):
        return Path(override).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    # The XDG spec says to ignore relative values.
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "occubench"
