"""Debug logging: ``[AGENT]``, ``[LWM]`` and ``[VERIFIER]`` lines to the terminal and ``debug.log``, redacted."""

from __future__ import annotations

import logging
import os
import weakref
from contextvars import ContextVar
from dataclasses import dataclass
from io import TextIOWrapper
from pathlib import Path

from occubench.util.redact import Redactor
from occubench.util.runfiles import open_file
from occubench.util.text import terminal

#: The task the current thread works on; concurrent runs prefix debug lines with it.
current_task: ContextVar[object] = ContextVar("current_task", default=None)

_logger = logging.getLogger("occubench")


class _LogFile(logging.FileHandler):
    """``debug.log``, appended to without following a symbolic link planted in its place."""

    def _open(self) -> TextIOWrapper:
        fd = open_file(Path(self.baseFilename), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        return open(fd, "a", encoding=self.encoding, errors=self.errors)


class _Redacting(logging.Formatter):
    """Formats each line once per handler from the untouched record: redacted, and tagged with its task when
    several run at once (rewriting the shared record instead would tag it again for every handler)."""

    def __init__(self, redactor: Redactor, tag_tasks: bool) -> None:
        super().__init__("%(message)s")
        self.redactor = redactor
        self.tag_tasks = tag_tasks

    def format(self, record: logging.LogRecord) -> str:
        # A line may quote a model's answer or a world's string: shown inert on a terminal and in debug.log.
        message = terminal(self.redactor.text(super().format(record)))
        task = current_task.get()  # stream and file handlers format in the thread that logged the line
        return f"[task {task}] {message}" if self.tag_tasks and task is not None else message


@dataclass
class LogRoute:
    """Where one run's log lines go, and where they went before it (a synthesis around its calibration runs)."""

    handlers: list[logging.Handler]
    previous: list[logging.Handler]
    previous_level: int


#: Handlers of runs that are over: never routed to again.
_ended: weakref.WeakSet[logging.Handler] = weakref.WeakSet()


def setup_logging(run_dir: Path, *, debug: bool, redactor: Redactor, tag_tasks: bool) -> LogRoute:
    """Route the ``occubench`` logger: warnings to stderr always; with ``debug``, everything to stderr and
    ``debug.log`` in the run directory. :func:`end_logging` restores the route before it when the run is over."""
    route = LogRoute([logging.StreamHandler()], list(_logger.handlers), _logger.level)
    for handler in route.previous:
        _logger.removeHandler(handler)
    _logger.setLevel(logging.DEBUG if debug else logging.WARNING)
    _logger.propagate = False
    if debug:
        route.handlers.append(_LogFile(run_dir / "debug.log", encoding="utf-8"))
    for handler in route.handlers:
        handler.setFormatter(_Redacting(redactor, tag_tasks))
        _logger.addHandler(handler)
    return route


def end_logging(route: LogRoute) -> None:
    """Close a finished run's handlers, so what the process logs next goes neither to its ``debug.log`` nor to a
    stream it was given; when nothing else replaced them, the route before it (of a run still going) comes back."""
    ours = [handler for handler in route.handlers if handler in _logger.handlers]
    for handler in route.handlers:
        _logger.removeHandler(handler)
        handler.close()
        _ended.add(handler)
    if ours and not _logger.handlers:
        for handler in route.previous:
            if handler not in _ended:
                _logger.addHandler(handler)
        _logger.setLevel(route.previous_level if _logger.handlers else logging.WARNING)
