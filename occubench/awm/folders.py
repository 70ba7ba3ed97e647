"""A scenario's parts written as a folder a worker reads (read-only, in the sandbox): the application as
``app.py``, the schema, seed rows and verifier code (by mode and task index) as JSON. Written from data, never run
here."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

from occubench.awm.data import Scenario


def write_scenario(scenario: Scenario, folder: Path) -> Path:
    """``scenario``'s runnable parts under ``folder``; a ValueError when it is not runnable."""
    if not scenario.runnable or scenario.app is None:
        raise ValueError(f"{scenario.name}: not runnable ({'; '.join(scenario.defects())})")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "app.py").write_text(scenario.app)
    (folder / "schema.json").write_text(json.dumps(scenario.schema))
    if scenario.seed is not None:
        (folder / "seed.json").write_text(json.dumps(scenario.seed))
    verifiers = {mode: {str(index): code for index, code in codes.items()}
                 for mode, codes in (("code_augmented", scenario.verifiers), ("pure", scenario.pure_verifiers))}
    (folder / "verifiers.json").write_text(json.dumps(verifiers))
    return folder


def publish_scenario(scenario: Scenario, folder: Path) -> Path:
    """``scenario`` written as ``folder``, unless it already is: written beside it, then renamed into place whole, so
    that processes writing it at once (a run's Ray workers, two runs of one set) never see a folder half written."""
    if folder.is_dir():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = folder.parent / f".{folder.name}.{uuid.uuid4().hex}"
    try:
        write_scenario(scenario, staging)
        staging.rename(folder)
    except OSError:
        if not folder.is_dir():  # not another process's copy (the same content, since the path is its digest)
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder
