"""Run directories as reports see them: a name and the latest record of every (task, trial)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from occubench.core.results import Result, live_groups
from occubench.errors import ConfigError
from occubench.report.robustness import is_inspect_log, load_run_records, run_dirs_with_results, warn
from occubench.store import read_args


@dataclass
class Run:
    name: str
    path: Path
    results: list[Result]
    #: Lines of its results file left out as not the run's (another configuration's, or a task outside its set).
    left_out: int = 0
    #: The world package it ran (``--worlds``): the reference as given and the digest it resolved to.
    worlds: str = ""
    worlds_digest: str = ""


def load_run(path: Path, name: str | None = None, warnings: list[str] | None = None) -> Run:
    """One run directory (or Inspect log); an error if it is not one or holds no results file. A directory that mixes
    configurations is warned about on stderr (and in ``warnings``, when given)."""
    if not path.is_dir() and not is_inspect_log(path):
        raise ConfigError(f"run directory not found: {path}")
    records = load_run_records(path, warnings)
    run = Run(name or path.name, path, records.results, len(records.left_out), *worlds_of(path))
    hashes = {result.config_hash for result in run.results if result.config_hash}
    if len(hashes) > 1:
        warn(f"{path} holds results of {len(hashes)} different configurations (config_hash "
             f"{', '.join(sorted(hashes))}): they are reported together", warnings)
    return run


def apart(run: Run) -> list[Run]:
    """``run`` as every report shows it: its results whose agent got live hints (``--live-hints``) are a run of
    their own, named ``<name> + live hints`` and labelled so (:func:`occubench.core.results.live_groups`), beside
    the rest; a run without such results is itself. Its lines left out are counted once, on its first part."""
    groups = live_groups(run.results)
    if not any(suffix for suffix, _ in groups):
        return [run]
    return [replace(run, name=run.name + suffix, results=results, left_out=run.left_out if i == 0 else 0)
            for i, (suffix, results) in enumerate(groups)]


def worlds_of(path: Path) -> tuple[str, str]:
    """The reference and digest of the world package a run directory's ``args.json`` names; empty without one."""
    args = read_args(path) if path.is_dir() else {}
    reference, digest = args.get("worlds"), args.get("worlds_digest")
    return (reference, digest) if isinstance(reference, str) and isinstance(digest, str) else ("", "")


def load_run_dirs(paths: Iterable[Path | str], warnings: list[str] | None = None) -> list[Run]:
    """One Run per directory that holds results, named after it (the whole path when two directories share a name);
    its results with live hints a run of their own (:func:`apart`).

    A directory without a results file (an older version's failed preflight left only ``args.json``) is skipped
    with a warning on stderr; a path that does not exist, or a list in which no directory holds results, is a
    :class:`ConfigError`. Every warning is also appended to ``warnings`` when given, for the report to show.
    """
    dirs = run_dirs_with_results(paths, warnings)
    names = [d.name for d in dirs]
    return [part for d in dirs for part in apart(load_run(d, d.name if names.count(d.name) == 1 else str(d), warnings))]
