"""Exceptions raised by occubench. Each names what went wrong and where, so a user can act on it."""

from __future__ import annotations


class OccuBenchError(Exception):
    """Base class: an error the CLI reports as one clear line (exit code 2)."""


class ConfigError(OccuBenchError):
    """Bad user input: a missing or garbled file, line or argument."""


class DataNotFoundError(ConfigError):
    """The benchmark data is not where the run looks for it."""
