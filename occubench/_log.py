"""Debug logging: ``[AGENT]``, ``[LWM]`` and ``[VERIFIER]`` lines to the terminal and ``debug.log``, redacted."""

from __future__ import annotations

import logging
from contextvars import ContextVar
from pathlib import Path

from occubench._redact import Redactor

#: The task the current thread works on; concurrent runs prefix debug lines with it.
current_task: ContextVar[object] = ContextVar("current_task", default=None)

_logger = logging.getLogger("occubench")


class _Redacting(logging.Formatter):
    """Formats each line once per handler from the untouched record: redacted, and tagged with its task when
    several run at once (rewriting the shared record instead would tag it again for every handler)."""

    def __init__(self, redactor: Redactor, tag_tasks: bool) -> None:
        super().__init__("%(message)s")
        self.redactor = redactor
        self.tag_tasks = tag_tasks

    def format(self, record: logging.LogRecord) -> str:
        message = self.redactor.text(super().format(record))
        task = current_task.get()  # stream and file handlers format in the thread that logged the line
        return f"[task {task}] {message}" if self.tag_tasks and task is not None else message


def setup_logging(run_dir: Path, *, debug: bool, redactor: Redactor, tag_tasks: bool) -> list[logging.Handler]:
    """Route the ``occubench`` logger: warnings to stderr always; with ``debug``, everything to stderr and
    ``debug.log`` in the run directory. Returns the handlers, for :func:`end_logging` when the run is over."""
    for handler in list(_logger.handlers):
        _logger.removeHandler(handler)
        handler.close()
    _logger.setLevel(logging.DEBUG if debug else logging.WARNING)
    _logger.propagate = False
    handlers: list[logging.Handler] = [logging.StreamHandler()]
    if debug:
        handlers.append(logging.FileHandler(run_dir / "debug.log", encoding="utf-8"))
    for handler in handlers:
        handler.setFormatter(_Redacting(redactor, tag_tasks))
        _logger.addHandler(handler)
    return handlers


def end_logging(handlers: list[logging.Handler]) -> None:
    """Detach a finished run's handlers (those another run has not replaced), so what the process logs next goes
    neither to its ``debug.log`` nor to a stream it was given; back to warnings only once none is left."""
    for handler in handlers:
        if handler in _logger.handlers:
            _logger.removeHandler(handler)
            handler.close()
    if not _logger.handlers:
        _logger.setLevel(logging.WARNING)
