"""A worker lent to one world instance for its lifetime, as every kind of world run in the sandbox uses one: each
request's reply checked at the world's boundary before the harness uses it, every failure a
:class:`~occubench.errors.WorldError` naming the world, and the worker given back to its pool when closed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from occubench import telemetry
from occubench.errors import WorldError
from occubench.sandbox.boundary import SCHEMAS, Boundary
from occubench.sandbox.pool import Pool, Worker, WorkerFailed

#: Seconds to close an instance.
CLOSE_SECONDS = 60.0


class Lease:
    """A worker of ``pool`` for world ``name``, whose replies ``boundary`` checks (as the boundary's kind
    ``kinds.get(op, op)``; an op of no kind is answered None)."""

    def __init__(self, name: str, pool: Pool, boundary: Boundary, kinds: Mapping[str, str] | None = None) -> None:
        self.name, self.pool, self.boundary, self.kinds = name, pool, boundary, kinds or {}
        try:
            self._worker: Worker | None = pool.lease()
        except WorkerFailed as exc:
            raise WorldError(f"{name}: the worker did not start: {exc.kind}: {exc}") from None

    @property
    def worker(self) -> Worker:
        if self._worker is None:
            raise WorldError(f"{self.name}: the instance is closed")
        return self._worker

    def request(self, op: str, args: dict[str, Any], seconds: float | None, what: str) -> Any:
        """The worker's reply to ``op`` about ``what``, once the boundary accepted it (within the request's
        deadline). A reply the boundary refuses discards the worker, as one past its bounds does."""
        if self._worker is None:
            raise WorldError(f"{self.name}: {what}: the instance is closed")
        kind = self.kinds.get(op, op)
        try:
            with telemetry.span(f"sandbox {op}", {"occubench.world": self.name, "occubench.sandbox.op": op}):
                return self._worker.request(op, args, seconds, check=lambda reply: self.boundary.reply(
                    kind, reply, what) if kind in SCHEMAS else None)
        except WorkerFailed as exc:
            raise WorldError(f"{self.name}: {what}: {exc.kind}: {exc}") from None

    def close(self, args: dict[str, Any] | None) -> None:
        """Close the instance ``args`` name (None: none was opened) and give the worker back."""
        worker, self._worker = self._worker, None
        if worker is None:
            return
        try:
            if args is not None:
                worker.request("close", args, CLOSE_SECONDS)
        except WorkerFailed:
            pass  # a broken worker is not lent again
        finally:
            self.pool.release(worker)
