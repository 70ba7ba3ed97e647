"""Executable SQLite worlds from a scenario: every stage's output executed, its errors fed back (the Agent World Model
pipeline), generated code sandboxed.

    from occubench.synth.executable import ExecutableSynthConfig, synthesize
    report = synthesize(ExecutableSynthConfig(scenario=["Insurance claims adjudication"], out="worlds",
                                              synth_model="gpt-5"))
"""

from occubench.synth.executable.config import ExecutableSynthConfig
from occubench.synth.executable.pipeline import synthesize
from occubench.synth.executable.report import SynthesisReport

__all__ = ["ExecutableSynthConfig", "SynthesisReport", "synthesize"]
