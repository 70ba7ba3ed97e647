"""LLM-simulated worlds and tasks from a scenario, calibrated for solvability (the OccuBench pipeline):
``synthesize(LWMSynthConfig(...))`` is ``occubench synth lwm`` as a library call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.util.lazy import lazy_exports

#: Names load on first use, so importing the package does not load the pipeline.
_EXPORTS = {"LWMSynthConfig": "occubench.synth.lwm.config", "SynthesisReport": "occubench.synth.lwm.output",
            "synthesize": "occubench.synth.lwm.pipeline"}

__all__ = ["LWMSynthConfig", "SynthesisReport", "synthesize"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from occubench.synth.lwm.config import LWMSynthConfig
    from occubench.synth.lwm.output import SynthesisReport
    from occubench.synth.lwm.pipeline import synthesize
