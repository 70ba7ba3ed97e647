"""Robustness: completion under E1/E2/E3 faults relative to the clean run, from run directories.

The score is OccuBench's worst-case retention, ``R = min(CR_E1, CR_E2, CR_E3) / CR_E0``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from occubench.errors import ConfigError
from occubench.faults import FAULT_MODES
from occubench.results import Result
from occubench.store import RESULTS_FILE, latest_by_task, load_results


def robustness_score(e0: float | None, e1: float | None, e2: float | None, e3: float | None) -> float | None:
    """Worst faulted completion rate over the clean one; None unless all four are known and E0 > 0."""
    if None in (e0, e1, e2, e3) or not e0:
        return None
    return min(e1, e2, e3) / e0  # type: ignore[type-var, operator]


@dataclass
class RobustnessRow:
    agent_model: str
    world_model: str
    #: Completion rate (0–1) per mode, over the tasks evaluated in that mode.
    rates: dict[str, float | None] = field(default_factory=dict)
    evaluated: dict[str, int] = field(default_factory=dict)

    @property
    def score(self) -> float | None:
        return robustness_score(*(self.rates.get(mode) for mode in FAULT_MODES))


def robustness_table(results: Iterable[Result]) -> list[RobustnessRow]:
    """One row per (agent model, world model) with the completion rate of each mode; errors are left out."""
    tallies: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for result in results:
        if not result.ok:
            continue
        tally = tallies[(str(result.agent_model), result.world_model or "-")][result.env_mode]
        tally[0] += result.passed
        tally[1] += 1
    rows = []
    for (agent, world), modes in sorted(tallies.items()):
        rows.append(RobustnessRow(agent, world,
                                  rates={m: modes[m][0] / modes[m][1] if modes[m][1] else None for m in FAULT_MODES},
                                  evaluated={m: modes[m][1] for m in FAULT_MODES}))
    return rows


def load_runs(run_dirs: Iterable[Path]) -> list[Result]:
    """The latest result of every task in each run directory."""
    results: list[Result] = []
    for run_dir in run_dirs:
        path = Path(run_dir) / RESULTS_FILE
        if not path.is_file():
            raise ConfigError(f"no {RESULTS_FILE} in {run_dir}: is it a run directory?")
        results += latest_by_task(load_results(path)).values()
    return results
