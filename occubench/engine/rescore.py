"""Rescoring: a run's saved episodes judged again, with another judge (``occubench rescore``).

The new run has the source run's settings (suite, data, tasks, modes, agent), so its results line up with the
source's task by task, and ``occubench compare SOURCE NEW --by verifier_model`` gives the two judges' agreement.
No agent or simulator request is made: the episodes are played back (see :class:`occubench.core.agent.ReplayAgent`).
It is a run like any other: it resumes, retries errors, and takes ``--cache`` and ``--replay``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from occubench.config import SUITE_SETTINGS, RunConfig, Settings
from occubench.core.agent import ReplayAgent
from occubench.core.suite import SuitePlan
from occubench.core.task import Task
from occubench.errors import ConfigError
from occubench.store import ARGS_FILE, latest_by_task, read_context, run_records
from occubench.util.jsonl import read_json
from occubench.util.text import markup

#: What the new run takes from the source's ``args.json``: what was evaluated, not how models are reached
#: (endpoints, keys, workers, caches are the rescore's own) nor where results go.
_OWN = {*Settings.model_fields, *(f"{role}_{part}" for role in RunConfig.roles for part in ("api_key", "base_url")),
        "verifier_model", "verifier_params", "num_votes", "output_dir", "run_name", "force", "rescore",
        "max_cost", "max_tokens_per_task", "max_seconds_per_task"}


def rescore_config(run_dir: str | Path, **settings: Any) -> RunConfig:
    """The config that judges ``run_dir``'s episodes again with ``settings`` (``verifier_model`` and how to reach
    it, at least)."""
    path = Path(run_dir)
    if not (path / ARGS_FILE).is_file():
        raise ConfigError(f"RUN_DIR: {path} is not a run directory (it has no {ARGS_FILE})")
    recorded = read_json(path / ARGS_FILE, "run settings")
    if not isinstance(recorded, dict):
        raise ConfigError(f"{path / ARGS_FILE}: expected a JSON object")
    kept = {key: value for key, value in recorded.items()
            if (key in RunConfig.model_fields or key in SUITE_SETTINGS) and key not in _OWN}
    # The new run goes beside its source unless told otherwise, wherever the command is run from.
    return RunConfig.create({**kept, "date": recorded.get("date"), "output_dir": str(path.parent), **settings,
                             "rescore": str(path)})


@dataclass
class SavedEpisodes:
    """The episodes of a run directory that were evaluated, played back by a :class:`ReplayAgent` so that another
    judge scores them (error records have nothing to judge)."""

    source: Path
    #: The source run's configuration hash; None when its results carry several.
    config_hash: str | None
    agent: ReplayAgent

    @classmethod
    def read(cls, source: Path, plan: SuitePlan, suite: str, console: Console, images: bool = False) -> SavedEpisodes:
        if "verifier" not in plan.roles:
            raise ConfigError(f"the {suite} suite judges its episodes without a model: there is nothing to rescore "
                              "(give --verifier-model for a suite whose judge is a model)")
        records = run_records(source)  # read only: the source directory is never changed
        if records.warning:
            console.print(f"[yellow]warning: {markup(records.warning)}[/yellow]")
        episodes = {key: result for key, result in latest_by_task(records.results).items() if result.ok}
        if not episodes:
            raise ConfigError(f"{source}: no evaluated episode to rescore (the results file is missing, empty or "
                              "holds only errors)")
        hashes = {result.config_hash for result in episodes.values()}
        return cls(source, hashes.pop() if len(hashes) == 1 else None,
                   ReplayAgent(episodes, read_context(source), call_env=not plan.simulated, images=images))

    def todo(self, todo: list[tuple[Task, int]]) -> list[tuple[Task, int]]:
        """Of ``todo``, the episodes the source run evaluated."""
        return [(task, trial) for task, trial in todo if (task.task_id, trial) in self.agent.episodes]
