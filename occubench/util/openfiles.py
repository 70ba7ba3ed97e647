"""The process's limit on open files, raised for thousands of connections.

Each connection is a file descriptor, and many systems start a process with a soft limit of 1,024: past it, requests
fail one by one with "Too many open files". A process may raise its soft limit up to its hard limit itself; past the
hard limit only the user can help. With the limit raised, descriptors are numbered past 1,023, which ``select()``
cannot watch: :func:`readable` waits with ``poll()`` instead.
"""

from __future__ import annotations

import select

from occubench.errors import ConfigError

#: Files a run holds beside its connections: results, logs, caches, sandbox workers' pipes.
RESERVE = 256


def raise_open_files(wanted: int) -> int:
    """Raise this process's soft limit on open files to its hard limit if it is below ``wanted`` (to ``wanted`` if
    the hard limit is unlimited: not every system takes that as a soft limit); returns the soft limit then. On
    systems without such limits (Windows), ``wanted``."""
    try:
        import resource
    except ImportError:
        return wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return wanted
    raised = wanted if hard == resource.RLIM_INFINITY else hard
    resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
    return raised


def ensure_open_files(connections: int, why: str) -> None:
    """Let this process hold ``connections`` connections and :data:`RESERVE` other files (see
    :func:`raise_open_files`); a :class:`ConfigError` naming ``why`` (the flags asking for them) if its hard limit
    is lower."""
    needed = connections + RESERVE
    if (limit := raise_open_files(needed)) < needed:
        raise ConfigError(f"{why}: up to {connections:,} connections and {RESERVE} other files need {needed:,} open "
                          f"files, and this process may open at most {limit:,} (its hard limit, `ulimit -Hn`): raise "
                          "that limit or ask for fewer connections")


def readable(fd: int, seconds: float | None) -> bool:
    """Whether ``fd`` has something to read (or its end) within ``seconds`` (None: however long it takes)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(None if seconds is None else max(0, int(seconds * 1000 + 0.999))))
