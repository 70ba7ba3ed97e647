"""Matrix runs: several agent models × several fault levels as one command.

Each combination is an ordinary run (its own directory under the usual name, its own lock, resume and error
retry); they run at once in one process as a :class:`RunGroup`, so every endpoint's connection limit and
adaptive back-off hold across the whole matrix.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

from occubench.config import RunConfig
from occubench.engine.models import RunGroup
from occubench.engine.run import RunSummary, run
from occubench.errors import ConfigError, OccuBenchError
from occubench.util.console import rich_console

#: The settings that may take several values; every combination is run, agents outermost.
MATRIX_KEYS = ("agent_model", "env_mode", "guidance")


def expand(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The settings of each run: ``agent_model``, ``env_mode`` and ``guidance`` may be lists (duplicates
    dropped)."""
    axes = [[(key, v) for v in dict.fromkeys(value)] if isinstance(value := values[key], list) else [(key, value)]
            for key in MATRIX_KEYS if key in values]
    runs = [{**values, **dict(combination)} for combination in itertools.product(*axes)]
    if len(runs) > 1 and values.get("run_name"):
        raise ConfigError("--run-name names one run directory; a run over several --agent-model, --env-mode or "
                          "--guidance values writes one directory per combination under its default name")
    return runs


@dataclass
class MatrixOutcome:
    """The summaries of the runs that finished, and why the others stopped (bad input, a failed preflight)."""

    runs: list[RunSummary] = field(default_factory=list)
    #: "<agent model> <fault level>[ guidance <tier>]" → the error message.
    failures: dict[str, str] = field(default_factory=dict)


def run_matrix(configs: Sequence[RunConfig], *, console: Console | None = None) -> MatrixOutcome:
    """Run every config at once, sharing endpoints and caches. A run that stops on bad input or a failed
    preflight does not stop the others: its error is in the outcome."""
    console = console or rich_console(stderr=True)
    group = RunGroup()
    outcome = MatrixOutcome()
    try:
        with ThreadPoolExecutor(max_workers=len(configs), thread_name_prefix="run") as pool:
            futures = [pool.submit(run, config, console=console, group=group) for config in configs]
            for config, future in zip(configs, futures):
                try:
                    outcome.runs.append(future.result())
                except OccuBenchError as exc:
                    label = f"{config.agent_model or config.agent} {config.env_mode}"
                    outcome.failures[label + (f" guidance {config.guidance}" if config.guidance else "")] = str(exc)
    finally:
        group.close()
    return outcome
