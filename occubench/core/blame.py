"""Who is to blame when a world's call fails: the one rule every kind of world applies.

A world that runs out of a resource of its own (disk, memory, processes or threads, open files) could not do what
it was asked, whatever the agent asked: the call is an environment error (:class:`~occubench.errors.WorldError`,
not scored, retried by the next run), never an observation the agent is judged on. The other side of the rule is
:class:`~occubench.errors.AgentOutputError`: what the agent left that scoring cannot take is the agent's failure.
"""

from __future__ import annotations

import errno
import sqlite3

#: What each errno says a world ran out of.
_ERRNOS = {errno.ENOSPC: "disk space", errno.EDQUOT: "disk quota", errno.EFBIG: "its file size limit",
           errno.ENOMEM: "memory", errno.EAGAIN: "processes or threads", errno.EMFILE: "open files",
           errno.ENFILE: "open files"}
#: SQLite's primary result codes for a full disk, memory, and a failed read or write (SQLITE_FULL, SQLITE_NOMEM,
#: SQLITE_IOERR), and their messages where Python does not give the code (3.10).
_SQLITE = {13: "disk space", 7: "memory", 10: "its disk"}
_SQLITE_MESSAGES = {"database or disk is full": "disk space", "out of memory": "memory", "disk I/O error": "its disk"}


def exhausted(exc: BaseException) -> str | None:
    """The resource ``exc``, or an exception it was raised from or during, says its world ran out of; None when
    it says nothing of the kind (a bug of the world's or an argument of the agent's)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if (found := _resource(current)) is not None:
            return found
        # An exception group (an application's task group) holds the exceptions that ended it.
        inner = getattr(current, "exceptions", ())
        if isinstance(inner, tuple) and (found := next(filter(None, map(exhausted, inner)), None)) is not None:
            return found
        current = current.__cause__ or current.__context__
    return None


def _resource(exc: BaseException) -> str | None:
    if isinstance(exc, MemoryError):
        return "memory"
    if isinstance(exc, OSError) and exc.errno in _ERRNOS:
        return _ERRNOS[exc.errno]
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        return _SQLITE.get(code & 0xFF) if isinstance(code, int) else _SQLITE_MESSAGES.get(str(exc))
    if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
        return "threads"
    # A library's wrapper of a database error (SQLAlchemy's, say) keeps the driver's exception as ``orig``.
    original = getattr(exc, "orig", None)
    return _resource(original) if isinstance(original, BaseException) and original is not exc else None
