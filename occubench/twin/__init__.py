"""Twin worlds: every executable world also as an LLM-simulated one, each call made on both and compared.

- :mod:`~occubench.twin.derive`: the twin's world-model config, derived from what the world is (no model): a world
  folder's, or an AWM scenario's (:mod:`~occubench.twin.awm`).
- :mod:`~occubench.twin.agreement`: whether two answers to one call agree (cheap checks, then a judge).
- :mod:`~occubench.twin.shadow`, :mod:`~occubench.twin.suite`, :mod:`~occubench.twin.plugin`: ``--suite twin``.
- :mod:`~occubench.twin.fidelity`: the fidelity figures of a twin run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.util.lazy import lazy_exports

_EXPORTS = {
    "Agreement": "occubench.twin.agreement", "TableFacts": "occubench.twin.derive",
    "WorldFacts": "occubench.twin.derive", "twin_config": "occubench.twin.derive",
    "write_dataset": "occubench.twin.derive", "Shadow": "occubench.twin.shadow", "TwinSuite": "occubench.twin.suite",
}

__all__ = ["Agreement", "Shadow", "TableFacts", "TwinSuite", "WorldFacts", "twin_config", "write_dataset"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from occubench.twin.agreement import Agreement
    from occubench.twin.derive import TableFacts, WorldFacts, twin_config, write_dataset
    from occubench.twin.shadow import Shadow
    from occubench.twin.suite import TwinSuite
