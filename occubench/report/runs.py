"""Run directories as reports see them: a name and the latest record of every (task, trial)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from occubench.errors import ConfigError
from occubench.results import Result
from occubench.robustness import load_runs


@dataclass
class Run:
    name: str
    path: Path
    results: list[Result]


def load_run(path: Path, name: str | None = None) -> Run:
    if not path.is_dir():
        raise ConfigError(f"run directory not found: {path}")
    run = Run(name or path.name, path, load_runs([path]))
    hashes = {result.config_hash for result in run.results if result.config_hash}
    if len(hashes) > 1:
        print(f"warning: {path} holds results of {len(hashes)} different configurations (config_hash "
              f"{', '.join(sorted(hashes))}): they are reported together", file=sys.stderr)
    return run


def load_run_dirs(paths: Iterable[Path | str]) -> list[Run]:
    """One Run per directory, named after it (the whole path when two directories share a name)."""
    dirs = [Path(p) for p in paths]
    names = [d.name for d in dirs]
    return [load_run(d, d.name if names.count(d.name) == 1 else str(d)) for d in dirs]
