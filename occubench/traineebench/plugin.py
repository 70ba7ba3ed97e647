"""Trainee-Bench as a plugin (``--suite traineebench --traineebench-config FILE``): the config's days generated
from ``--seed`` (the families' data drawn from it; the reference's own files read from ``--reference-dir``, else
from the copy ``occubench data download traineebench`` made), an episode per day, the agent's shell commands run only
in the sandbox."""

from __future__ import annotations

import tempfile
from pathlib import Path

from rich.console import Console

from occubench.config import RunConfig
from occubench.core.options import SuiteOptions
from occubench.core.suite import Suite, SuiteDefinition, SuitePlan, select_tasks, task_set
from occubench.errors import ConfigError
from occubench.llm import Model
from occubench.sandbox.provider import provider_for
from occubench.traineebench.config import load_config
from occubench.traineebench.day import build_day
from occubench.traineebench.reference import reference_folder
from occubench.traineebench.scoring import reference_tables
from occubench.traineebench.suite import PlannedDay, TraineeBenchSuite
from occubench.util.jsonl import json_digest
from occubench.util.untrusted import read_file

NAME = "traineebench"


class TraineeBenchOptions(SuiteOptions):
    #: The benchmark config (the reference's ``traineebench_config.json`` format).
    traineebench_config: str | None = None
    #: The reference's own files (manuals, templates, résumés, articles); None: the copy `occubench data download
    #: traineebench` made.
    reference_dir: str | None = None
    #: When there is no such copy, download it.
    download: bool = False
    #: Where no sandbox is available, run the agent's shell commands as plain processes all the same.
    trust_world_code: bool = False


def plan(config: RunConfig, console: Console) -> SuitePlan:
    options = TraineeBenchOptions.of(config)
    if options.traineebench_config is None:
        raise ConfigError("--suite traineebench needs --traineebench-config FILE: a benchmark config in the "
                          "reference's format (traineebench_config.json)")
    path = Path(options.traineebench_config)
    reference = Path(options.reference_dir) if options.reference_dir else reference_folder(download=options.download)
    bench = load_config(path)
    provider = provider_for(options.trust_world_code, "--suite traineebench (the agent's shell commands)")
    root = Path(tempfile.mkdtemp(prefix="traineebench-"))
    days = [PlannedDay(scenario.name, entry.name,
                       build_day(root / f"{s}" / f"{d}", scenario.name, entry, seed=config.seed, reference=reference,
                                 where=f"{path}: scenarios[{s}].days[{d}]."))
            for s, scenario in enumerate(bench.scenarios) for d, entry in enumerate(scenario.days)]
    every = TraineeBenchSuite(days, provider).tasks()
    tasks = select_tasks(every, config, console)

    def make(models: dict[str, Model], fault_rules: str | None) -> Suite:
        return TraineeBenchSuite(days, provider)
    return SuitePlan(tasks, {}, make, world_label=None, simulated=False,
                     settings={"sandbox": provider.describe(), "traineebench_config": str(path),
                               "reference_dir": str(reference)},
                     task_set=task_set(every, {"task_content": json_digest([read_file(path).decode("utf-8", "replace"),
                                                                           config.seed])}))


suite = SuiteDefinition(
    name=NAME, plan=plan, report_tables=reference_tables,
    description="Trainee-Bench as its authors run it: their benchmark configs and task families, scored in their "
                "points (needs --traineebench-config, and `occubench data download traineebench` or --reference-dir)")
