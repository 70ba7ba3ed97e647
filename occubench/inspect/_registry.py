"""The module Inspect's entry point (``inspect_ai`` group) loads: importing the tasks registers them as
``occubench/occubench``, ``occubench/executable``, ``occubench/awm`` and ``occubench/workplace``."""

from occubench.inspect.tasks import awm, executable, occubench, workplace

__all__ = ["awm", "executable", "occubench", "workplace"]
