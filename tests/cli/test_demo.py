"""`occubench demo`: the quick start's real evaluation, offline and without a key, as a newcomer runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from occubench.store import RESULTS_FILE, read_results
from tests.conftest import BUILTIN_TASKS


@pytest.mark.slow
def test_the_demo_evaluates_both_kinds_of_world_offline_and_writes_the_report(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OCCUBENCH_"))}
    done = subprocess.run([sys.executable, "-m", "occubench", "demo"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    folders = sorted(p for p in (tmp_path / "results").iterdir() if p.is_dir())
    assert [p.name.rsplit("__", 1)[0] for p in folders] == ["mock-agent__mock-world__E0", "reference__executable__E0"]
    records = {p.name: read_results(p / RESULTS_FILE) for p in folders}
    assert [len(r) for r in records.values()] == [3, BUILTIN_TASKS]
    assert all(r["status"] == "ok" for rs in records.values() for r in rs)
    assert all(r["is_correct"] for r in records[folders[1].name])  # the reference solutions pass every check
    assert "Leaderboard" in done.stdout and all(p.name in done.stdout for p in folders)
    html = (tmp_path / "results" / "demo-report.html").read_text()
    assert all(p.name in html for p in folders)
    # Run again, it resumes: nothing is evaluated twice.
    again = subprocess.run([sys.executable, "-m", "occubench", "demo"], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=600)
    assert again.returncode == 0 and again.stderr.count("0 to run") == 2
