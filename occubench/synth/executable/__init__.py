"""Executable SQLite worlds from a scenario: every stage's output executed, its errors fed back (the Agent World Model
pipeline), generated code sandboxed.

    from occubench.synth.executable import ExecutableSynthConfig, synthesize
    report = synthesize(ExecutableSynthConfig(scenario=["Insurance claims adjudication"], out="worlds",
                                              synth_model="gpt-5"))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.util.lazy import lazy_exports

#: Names load on first use, so importing the package does not load the pipeline.
_EXPORTS = {"ExecutableSynthConfig": "occubench.synth.executable.config",
            "SynthesisReport": "occubench.synth.executable.report", "synthesize": "occubench.synth.executable.pipeline"}

__all__ = ["ExecutableSynthConfig", "SynthesisReport", "synthesize"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from occubench.synth.executable.config import ExecutableSynthConfig
    from occubench.synth.executable.pipeline import synthesize
    from occubench.synth.executable.report import SynthesisReport
