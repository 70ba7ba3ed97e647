"""LLM-simulated worlds and tasks from a scenario, calibrated for solvability (the OccuBench pipeline):
``synthesize(SimulatedSynthConfig(...))`` is ``occubench synth simulated`` as a library call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.util.lazy import lazy_exports

#: Names load on first use, so importing the package does not load the pipeline.
_EXPORTS = {"SimulatedSynthConfig": "occubench.synth.simulated.config",
            "SynthesisReport": "occubench.synth.simulated.output", "synthesize": "occubench.synth.simulated.pipeline"}

__all__ = ["SimulatedSynthConfig", "SynthesisReport", "synthesize"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from occubench.synth.simulated.config import SimulatedSynthConfig
    from occubench.synth.simulated.output import SynthesisReport
    from occubench.synth.simulated.pipeline import synthesize
