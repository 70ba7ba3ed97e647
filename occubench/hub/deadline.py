"""One deadline over everything a pull asks of a registry: resolving its version, listing versions, downloading.

Clients bound each read (a registry that stops answering), never the whole: a registry that sends a byte a minute
holds a pull for ever. So an operation runs under a :class:`Deadline`: each backend gives its clients no more than
the time left (git's subprocess timeout, each request's timeouts), hands it every socket it opens, and when the time
is up the deadline shuts those sockets down, which ends any read blocked on them at once. Whatever failure follows
is then reported as the deadline's, naming the reference and the limit.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar

from occubench.errors import ConfigError

#: The variable that sets the limit, in seconds: long enough for a 1 GB package over a slow line.
ENV = "OCCUBENCH_HUB_TIMEOUT"
DEFAULT_SECONDS = 3600.0


class Deadline:
    """The end of one registry operation on ``where`` (a reference), ``seconds`` from now."""

    def __init__(self, where: str, seconds: float) -> None:
        self.where, self.seconds = where, seconds
        self.end = time.monotonic() + seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def left(self) -> float:
        """The seconds left; the deadline's :class:`ConfigError` once there are none."""
        left = self.end - time.monotonic()
        if left <= 0 or self.expired:
            raise self.error()
        return left

    def error(self) -> ConfigError:
        return ConfigError(f"{self.where}: the registry did not finish within {self.seconds:g} s, the limit on one "
                           f"pull, resolve or listing ({ENV} sets it); nothing was installed")

    def watch(self, sock: socket.socket) -> None:
        """Shut ``sock`` down when the time is up (at once if it is)."""
        with self._lock:
            if not self.expired:
                self._sockets.append(sock)
                return
        _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # closed meanwhile
        sock.shutdown(socket.SHUT_RDWR)


_current: ContextVar[Deadline | None] = ContextVar("occubench_hub_deadline", default=None)


def current() -> Deadline | None:
    """The deadline of the registry operation running in this context, if any."""
    return _current.get()


def limit() -> float:
    """The seconds one operation may take: :data:`ENV`, else :data:`DEFAULT_SECONDS`."""
    text = os.environ.get(ENV, "").strip()
    if not text:
        return DEFAULT_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise ConfigError(f"{ENV}={text!r}: the limit on one registry operation is a number of seconds above 0")
    return seconds


@contextlib.contextmanager
def deadline(where: str) -> Iterator[Deadline]:
    """The deadline of an operation on ``where``: the one this context runs under already (a pull's resolve is part
    of the pull), else a new one of :func:`limit` seconds. A failure after the time is up is the deadline's."""
    if (outer := _current.get()) is not None:
        yield outer
        return
    ends = Deadline(where, limit())
    token = _current.set(ends)
    ends._timer.start()
    try:
        yield ends
    except Exception as exc:
        if time.monotonic() < ends.end and not ends.expired:
            raise
        raise ends.error() from exc
    finally:
        ends._timer.cancel()
        _current.reset(token)
