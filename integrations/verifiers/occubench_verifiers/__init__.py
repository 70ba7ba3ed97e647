"""occubench's worlds as a verifiers environment: `vf-eval occubench-verifiers`, or :func:`load_environment`.

Each rollout plays one episode of an `occubench serve --protocol openenv` run (started by the environment, or one
already serving), and its reward is occubench's verdict on it. See docs/guides/verifiers.md in occubench's
repository.
"""

from __future__ import annotations

from typing import Any

import verifiers.v1 as vf

from occubench_verifiers.harness import OccubenchHarness, OccubenchHarnessConfig
from occubench_verifiers.taskset import (
    TASKSET_ID,
    OccubenchConfig,
    OccubenchData,
    OccubenchEnv,
    OccubenchEnvConfig,
    OccubenchTask,
    OccubenchTaskset,
)


def load_environment(suite: str | None = None, **options: Any) -> vf.Env:
    """The occubench environment of ``suite``; ``options`` are the taskset's other settings (see
    :class:`OccubenchConfig`: ``select``, ``run``, ``url``, ``command``), e.g.
    ``load_environment("executable", select=["--limit", "5"], run=["--trials", "4"])``."""
    taskset = {"id": TASKSET_ID, "suite": suite, **options}
    return vf.load_environment(OccubenchEnvConfig(taskset=taskset))


# verifiers finds the taskset, its environment and its default harness by their base classes among these.
__all__ = [
    "OccubenchConfig",
    "OccubenchData",
    "OccubenchEnv",
    "OccubenchEnvConfig",
    "OccubenchHarness",
    "OccubenchHarnessConfig",
    "OccubenchTask",
    "OccubenchTaskset",
    "load_environment",
]
