"""Making worlds: LLM-simulated worlds and tasks calibrated for solvability, and executable worlds whose every stage
is executed and corrected — one engine (:mod:`occubench.synth.engine`), two tracks (``lwm``, ``executable``)."""

from occubench.synth.config import SynthConfig
from occubench.synth.engine import Check, Engine, Stage, StageFailed, StageStats
from occubench.synth.session import Session, open_session

__all__ = ["Check", "Engine", "Session", "Stage", "StageFailed", "StageStats", "SynthConfig", "open_session"]
