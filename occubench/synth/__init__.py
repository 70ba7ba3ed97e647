"""Making worlds: LLM-simulated worlds and tasks calibrated for solvability, and executable worlds whose every stage
is executed and corrected — one engine (:mod:`occubench.synth.engine`), two tracks."""

from occubench.synth.engine import Check, Engine, Stage, StageFailed, StageStats

__all__ = ["Check", "Engine", "Stage", "StageFailed", "StageStats"]
