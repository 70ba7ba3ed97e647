"""The one place that decides how occubench's rich consoles lay out what they print."""

from __future__ import annotations

import os

from rich.console import Console


def rich_console(*, stderr: bool = False, quiet: bool = False) -> Console:
    """A console on stdout (or ``stderr``), printing nothing when ``quiet``. On a terminal, lines wrap at its width.
    Elsewhere (a pipe, a file, a CI log) a line is never broken, so a digest, a path or a URL stays whole for grep,
    and tables are laid out at ``$COLUMNS``, else 80 columns, never at the width of a terminal that another stream
    of the process happens to be."""
    out = Console(stderr=stderr, quiet=quiet, highlight=False)
    if not out.is_terminal:
        columns = os.environ.get("COLUMNS", "")
        out.width = int(columns) if columns.isdigit() and int(columns) > 0 else 80
        out.soft_wrap = True
    return out
