"""The module Inspect's entry point (``inspect_ai`` group) loads: importing the tasks registers them as
``occubench/occubench``, ``occubench/executable`` and ``occubench/workplace``."""

from occubench.inspect.tasks import executable, occubench, workplace

__all__ = ["executable", "occubench", "workplace"]
