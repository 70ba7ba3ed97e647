"""A run's identity: the hash of every setting that changes what is run or scored, the default folder name made
from it, and the check that a run directory holds only this identity's results."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from occubench.config import CLEAN_LEVEL
from occubench.core.suite import TaskSet
from occubench.errors import ConfigError
from occubench.hub.refs import parse
from occubench.store import ResultStore
from occubench.util.text import markup


def default_run_name(agent: str, world: str, level: str, fault_count: int, fault_duration: int,
                     harness_seed: int | None = None) -> str:
    faulted = level != CLEAN_LEVEL
    name = f"{agent}__{world}__{level}" + (f"__fc{fault_count}_fd{fault_duration}" if faulted else "")
    if faulted and harness_seed is not None:
        name += f"__harness_s{harness_seed}"
    return safe_name(name)

def safe_name(name: str) -> str:
    # Model names such as meta-llama/Llama-3-70b or llama3:8b must not create folders or odd file names.
    return "".join(c if c.isascii() and (c.isalnum() or c in "._+-") else "_" for c in name)

def config_hash(config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]

def check_same_config(store: ResultStore, config: dict[str, Any], digest: str, force: bool,
                      task_set: TaskSet | None, console: Console) -> dict[str, Any]:
    """Stop (exit 2, naming what differs) before any request when the directory holds results of another
    configuration, unless ``force``; the ``args.json`` fields saying which results belong to the directory from now
    on: the configuration hashes they may carry and the ids of the task set."""
    ids = sorted(task_set.ids, key=str) if task_set else None
    identity = task_set.identity if task_set else {}
    belongs: dict[str, Any] = {"config_hashes": [digest], **({"task_ids": ids} if ids is not None else {})}
    previous = store.previous_args()
    if not store.load():
        return belongs
    earlier = [h for h in previous.get("config_hashes") or [previous.get("config_hash")] if isinstance(h, str)]
    old = recorded_config(previous)
    refuse_moved_worlds(store.run_dir, previous, config.get("worlds_digest"))
    # A directory written before runs had an identity has no task-set fields: it matches on everything else.
    changed = ", ".join(f"{_named(key)} {old.get(key)!r} → {config.get(key)!r}"
                        for key in sorted(set(old) | set(config))
                        if old.get(key) != config.get(key) and not (key in identity and key not in old))
    if previous.get("config_hash") not in (None, digest) and changed:
        if not force:
            raise ConfigError(f"{store.run_dir} holds results made with a different configuration ({changed}); "
                              "choose another --run-name, or pass --force to add to them anyway")
        console.print(f"[yellow]warning: --force: adding results made with a different configuration "
                      f"({markup(changed)})[/yellow]")  # the old values are a run folder's
    old_ids = previous.get("task_ids")
    if ids is not None and isinstance(old_ids, list):  # what --force added to keeps belonging
        belongs["task_ids"] = sorted({*ids, *(i for i in old_ids if isinstance(i, (str, int)))}, key=str)
    belongs["config_hashes"] = sorted({*earlier, digest})
    return belongs


def recorded_config(previous: dict[str, Any]) -> dict[str, Any]:
    """The settings of a run's identity its ``args.json`` (read as ``previous``) keeps."""
    return previous["config"] if isinstance(previous.get("config"), dict) else {}


def refuse_moved_worlds(run_dir: Path, previous: dict[str, Any], digest: str | None) -> None:
    """Stop a run into ``run_dir`` (holding results; its ``args.json`` read as ``previous``) that ran another world
    package than ``digest``, the one its ``--worlds`` names now: the version's tag was moved. Even with --force: a
    run is of one package. The error says how to resume: the package it ran, pinned by its digest."""
    was = recorded_config(previous).get("worlds_digest")
    if not was or was == digest:
        return
    reference = previous.get("worlds")
    pinned = str(parse(reference).at(was)) if isinstance(reference, str) else f"...@{was}"
    raise ConfigError(f"{run_dir} holds results of the world package {was}, and --worlds {reference} now names "
                      f"{digest} (its version was moved); resume it with the package it ran, pinned: --worlds "
                      f"{pinned} --run-name {run_dir.name}; or choose another --run-name")


#: How a user names the settings of a run's identity that are not a flag of their own name.
_NAMES = {"task_content": "the tasks' content (data files, world configs or folders, days)", "workplace_seed": "--seed",
          "workplace_days": "--days", "agent_model": "--agent-model (or --agent)", "world_model": "--world-model",
          "seed": "--seed", "rescore_of": "the rescored run", "fault_mode": "--fault-mode",
          "npc_model": "--npc-model",
          "worlds_digest": "the digest of the --worlds package (its reference now names another package)"}



def _named(key: str) -> str:
    """A setting of a run's identity as the user gives it: its flag, or what it stands for."""
    return _NAMES.get(key, "--" + key.replace("_", "-"))
