"""Running code we did not write: worker processes confined by the operating system.

A world that is not shipped in the package (synthesized, from ``--worlds-dir``, installed from anywhere) is loaded
and executed only in a worker (:mod:`occubench.sandbox.worker`) started by a provider (:mod:`occubench.sandbox.
provider`: bubblewrap on Linux), spoken to over a pipe (:mod:`occubench.sandbox.protocol`) with a deadline on every
request, from warm pools (:mod:`occubench.sandbox.pool`).
"""

from occubench.sandbox.pool import Pool, Worker, WorkerFailed, pool
from occubench.sandbox.provider import (
    INSTALL_HINT,
    TRUST_FLAG,
    Bubblewrap,
    Detection,
    Limits,
    Provider,
    Unconfined,
    detect,
    provider_for,
)

__all__ = ["INSTALL_HINT", "TRUST_FLAG", "Bubblewrap", "Detection", "Limits", "Pool", "Provider", "Unconfined",
           "Worker", "WorkerFailed", "detect", "pool", "provider_for"]
