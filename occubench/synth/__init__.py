"""Making worlds: LLM-simulated worlds and tasks calibrated for solvability, and executable worlds whose every stage
is executed and corrected — one engine (:mod:`occubench.synth.engine`), two tracks (``simulated``, ``executable``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.util.lazy import lazy_exports

#: Names load on first use: a synthesis worker imports occubench.synth.executable.probe and what it needs only.
_EXPORTS = {"SynthConfig": "occubench.synth.config", "Check": "occubench.synth.engine",
            "Engine": "occubench.synth.engine", "Stage": "occubench.synth.engine",
            "StageFailed": "occubench.synth.engine", "StageStats": "occubench.synth.engine",
            "Session": "occubench.synth.session", "open_session": "occubench.synth.session"}

__all__ = ["Check", "Engine", "Session", "Stage", "StageFailed", "StageStats", "SynthConfig", "open_session"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from occubench.synth.config import SynthConfig
    from occubench.synth.engine import Check, Engine, Stage, StageFailed, StageStats
    from occubench.synth.session import Session, open_session
