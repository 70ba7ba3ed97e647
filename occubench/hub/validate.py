"""Whether a package's worlds work, each kind checked as its suite's own ``occubench validate`` checks it, before
the package is installed. A package comes from anyone: its code (executable worlds, AWM applications and verifiers)
runs only in a sandboxed worker, never in this process, and only where the machine has a sandbox (no trust flag:
installing is not running, and the store is shared by every later run)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from occubench.config import validated
from occubench.errors import ConfigError, OccuBenchError
from occubench.hub.package import Manifest
from occubench.sandbox.provider import INSTALL_HINT, Provider, detect
from occubench.util.text import terminal
from occubench.util.untrusted import read_file

#: The kinds whose files are code, run only in the sandbox.
CODE_KINDS = ("awm", "executable")
SETTINGS = "settings.json"
_MAX_PROBLEM = 500  # characters of one problem: a world's exception text may be long


class WorkplaceSettings(BaseModel):
    """The generation settings of a workplace package (``workplace/settings.json``): the days of a run made from
    the seed, as ``--days`` and ``--seed`` give them."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    days: int = Field(ge=1)
    seed: int


def workplace_settings(folder: Path) -> WorkplaceSettings:
    """The settings of the workplace folder ``folder`` of a package; a :class:`ConfigError` naming the file."""
    where = f"workplace/{SETTINGS}"
    if not (folder / SETTINGS).is_file():
        raise ConfigError(f"{where}: missing; a workplace package holds its days and seed there")
    try:
        value = json.loads(read_file(folder / SETTINGS))
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, an integer past Python's digits
        raise ConfigError(f"{where}: not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: not a JSON object of days and seed")
    return validated(WorkplaceSettings, value, where)


def sandbox(kinds: tuple[str, ...]) -> Provider | None:
    """The sandbox that runs the code of a package of ``kinds``: None when it holds no code; a
    :class:`ConfigError` when it does and the machine has no sandbox."""
    code = [kind for kind in kinds if kind in CODE_KINDS]
    if not code:
        return None
    detection = detect()
    if detection.provider is None:
        raise ConfigError(f"the package holds {' and '.join(code)} worlds, whose code runs only in a sandbox, and this "
                          f"machine has none: {detection.reason}; {INSTALL_HINT}")
    return detection.provider


def validate_package(folder: Path, manifest: Manifest) -> list[str]:
    """What keeps the package folder ``folder`` (verified: its files are ``manifest``'s) from working, one line per
    problem naming its world or file (empty: valid). A package with code and no sandbox here is a
    :class:`ConfigError`."""
    provider = sandbox(manifest.kinds)
    checks: dict[str, Callable[[Path], list[str]]] = {
        "executable": lambda kind_folder: _executable(kind_folder, provider),
        "awm": lambda kind_folder: _awm(kind_folder, provider),
        "occubench": _occubench, "workplace": _workplace}
    problems: list[str] = []
    for kind in manifest.kinds:
        try:
            problems += checks[kind](folder / kind)
        except OccuBenchError as exc:
            problems.append(f"{kind}/: {exc}")
    return [_line(problem, folder) for problem in problems]


def _line(problem: str, folder: Path) -> str:
    """One line, files named within the package (not the staging folder), escapes shown, not acted on."""
    for root in {str(folder.resolve()), str(folder)}:
        problem = problem.replace(root + os.sep, "").replace(root, ".")
    problem = terminal(problem, newlines=False)
    return problem if len(problem) <= _MAX_PROBLEM else problem[:_MAX_PROBLEM] + "..."


def _executable(folder: Path, provider: Provider | None) -> list[str]:
    """Each world folder loaded by a worker (the allow-list, then its code under the OS sandbox and the load
    deadline), then checked as ``occubench validate --worlds-dir`` checks it: sizes, and each task's reference
    solution passing, doing nothing and the wrong solution failing (its verifiers run in the worker)."""
    from occubench.executable.isolated import SERVICE, IsolatedWorld, load_isolated
    from occubench.executable.validate import validate
    from occubench.sandbox.pool import WorkerFailed, pool

    assert provider is not None  # sandbox() gives one for a package of executable worlds
    problems: list[str] = []
    worlds: list[IsolatedWorld] = []
    try:
        for entry in sorted(folder.iterdir()):
            if not (entry / "__init__.py").is_file():
                problems.append(f"executable/{entry.name}: not a world folder (schema.sql, seed.sql, __init__.py)")
                continue
            try:
                worlds += load_isolated(folder, [entry], provider)  # one at a time: every world's problem is told
            except OccuBenchError as exc:
                problems.append(f"executable/{entry.name}: {exc}")
        for world in worlds:
            try:
                sizes, tasks = validate([world])
            except (OccuBenchError, WorkerFailed) as exc:
                problems.append(f"executable/{world.name}: {exc}")
                continue
            problems += [f"executable/{world.name}: {problem}" for problem in sizes.get(world.name, [])]
            for task in tasks:
                failed = [what for what, bad in (("the reference solution fails", not task.reference),
                                                  ("doing nothing passes", task.noop),
                                                  ("the wrong solution passes", task.wrong)) if bad]
                if failed or task.problems:
                    problems.append(f"executable/{world.name}: task {task.task.task_id}: "
                                    + "; ".join(failed + task.problems))
    finally:
        pool(provider, SERVICE, [folder]).close()  # the folder moves into the store or goes: no worker keeps it
    return problems


def _awm(folder: Path, provider: Provider | None) -> list[str]:
    """What ``occubench validate --suite awm`` fails on: a runnable scenario whose application does not load in its
    worker (its tools listed, its verifiers run on the initial database there); and a set with nothing to run."""
    from occubench.awm.data import load_set
    from occubench.awm.plugin import checked_in_worker, runnable_worlds
    from occubench.errors import WorldError
    from occubench.util.console import rich_console

    assert provider is not None  # sandbox() gives one for a package of AWM worlds
    awm = load_set(folder)
    worlds = runnable_worlds(awm, provider, rich_console(quiet=True))
    problems = [] if worlds else ["awm/: no runnable scenario (an application, a schema and tasks)"]
    for world in worlds:
        try:
            checked_in_worker(world)
        except WorldError as exc:
            problems.append(f"awm/{world.name}: does not load: {exc}")
    return problems


def _occubench(folder: Path) -> list[str]:
    """The OccuBench-format folder read as a run of the ``occubench`` suite reads it: its tasks, their scenarios, and
    the world-model config of every environment they name (data only: nothing in it runs)."""
    from occubench.simulated.config import WorldModelRegistry
    from occubench.simulated.data import resolve_data_paths, verify_data
    from occubench.simulated.tasks import load_tasks

    paths = resolve_data_paths(data_dir=folder)
    missing = [path.name for path in (paths.eval_data, paths.scenario_pool, paths.config_dir) if not path.exists()]
    if missing:
        return [f"occubench/: no {', '.join(missing)} (an OccuBench-format folder holds {paths.eval_data.name}, "
                f"{paths.scenario_pool.name} and {paths.config_dir.name}/)"]
    if (folder / "data_manifest.json").is_file():  # as `occubench synth` writes one: its checksums hold
        verify_data(folder)
    tasks = load_tasks(paths.eval_data, paths.scenario_pool)
    if not tasks:
        return [f"occubench/{paths.eval_data.name}: no task"]
    registry = WorldModelRegistry(paths.config_dir)
    problems = []
    for env in sorted({task.env_name for task in tasks}):
        try:
            registry.get(env)
        except ConfigError as exc:
            problems.append(str(exc))
    return problems


def _workplace(folder: Path) -> list[str]:
    workplace_settings(folder)
    return []
