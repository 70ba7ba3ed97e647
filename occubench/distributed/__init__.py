"""Ray: runs on a cluster (``occubench run --executor ray``, :func:`run_on_ray`) and a pool of worlds for RL
rollouts (:class:`RolloutPool`).

Ray is the engine; nothing here schedules. Names load on first use and ``ray`` is imported only by the modules
that use it, so ``occubench`` works without the ``ray`` extra (``pip install 'occubench[ray]'``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.util.lazy import lazy_exports

_EXPORTS = {"run_on_ray": "occubench.distributed.executor", "Rollout": "occubench.distributed.pool",
            "RolloutPool": "occubench.distributed.pool"}

__all__ = ["Rollout", "RolloutPool", "run_on_ray"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from occubench.distributed.executor import run_on_ray
    from occubench.distributed.pool import Rollout, RolloutPool
