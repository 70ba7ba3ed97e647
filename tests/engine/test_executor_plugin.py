"""An executor that lives outside the package, registered under the occubench.executors entry-point group by an
installed distribution's metadata, runs a run's episodes through `occubench run --executor NAME`; what it declares
about itself (``in_process``), not its name, decides which runs it can take."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from occubench.store import read_results

EXECUTOR = '''
import json
from pathlib import Path

from occubench.engine.executor import AsyncExecutor


class Recording(AsyncExecutor):
    """The local executor, leaving a note of the episodes it was given beside the run directories."""

    def __init__(self, config):
        super().__init__(config)
        self.marker = Path(config.output_dir) / "recording.json"

    def run(self, job, todo, store, *, on_result=None, may_start=None):
        self.marker.write_text(json.dumps(sorted([task.task_id, trial] for task, trial in todo)))
        return super().run(job, todo, store, on_result=on_result, may_start=may_start)


class Elsewhere(Recording):
    in_process = False
'''


@pytest.fixture
def plugin(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "acme_executor.py").write_text(EXECUTOR)
    (site / "acme_gone.py").write_text("import acme_not_installed_anywhere\n")
    info = site / "acme-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme\nVersion: 0.1\nProvides-Extra: gone\n")
    (info / "entry_points.txt").write_text("[occubench.executors]\nrecording = acme_executor:Recording\n"
                                           "elsewhere = acme_executor:Elsewhere\ngone = acme_gone:Gone\n")
    return {**os.environ, "PYTHONPATH": str(site)}


def occubench(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "occubench", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_a_registered_executor_runs_the_episodes(plugin: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = occubench(plugin, "run", "--suite", "executable", "--agent", "reference", "--limit", "2", "--executor",
                     "recording", "--output-dir", str(out), "--run-name", "r")
    assert done.returncode == 0, done.stderr
    records = read_results(out / "r" / "results.jsonl")
    ran = json.loads((out / "recording.json").read_text())
    assert sorted([r["task_id"], r["trial"]] for r in records) == ran and len(ran) == 2
    assert all(r["is_correct"] for r in records)
    listed = occubench(plugin, "run", "--help")
    assert "elsewhere, gone, local, ray, recording" in " ".join(listed.stdout.split())


def test_an_executor_name_not_registered_is_refused(plugin: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = occubench(plugin, "run", "--suite", "executable", "--agent", "reference", "--limit", "1", "--executor",
                     "nowhere", "--output-dir", str(out))
    assert done.returncode == 2
    assert "--executor: unknown executor 'nowhere'" in done.stderr and "recording" in done.stderr
    assert "Traceback" not in done.stderr and not out.exists()


@pytest.mark.parametrize(("executor", "said"), [
    ("elsewhere", "drop --executor elsewhere"),  # declares its episodes run in other processes
    ("gone", "pip install 'acme[gone]'"),  # its module needs a package not installed: its extra is named
    # named by module and class, it must be one
    ("acme_executor:Nothing", "has no attribute 'Nothing'"),
    ("acme_executor:json", "is a module, not a class"),
    ("acme_nowhere:Recording", "cannot import 'acme_nowhere'"),
])
def test_an_executor_that_cannot_take_the_run_is_refused_before_it_starts(
        plugin: dict[str, str], tmp_path: Path, executor: str, said: str) -> None:
    out = tmp_path / "out"
    done = occubench(plugin, "run", "--suite", "executable", "--agent", "mcp", "--limit", "1", "--executor",
                     executor, "--output-dir", str(out))
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not out.exists()


def test_an_executor_named_by_module_and_class_runs_the_episodes_without_registering(
        plugin: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = occubench(plugin, "run", "--suite", "executable", "--agent", "reference", "--limit", "2", "--executor",
                     "acme_executor:Recording", "--output-dir", str(out), "--run-name", "r")
    assert done.returncode == 0, done.stderr
    assert len(json.loads((out / "recording.json").read_text())) == 2
    assert all(r["is_correct"] for r in read_results(out / "r" / "results.jsonl"))
