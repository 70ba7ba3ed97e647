"""The ``openai`` SDK is an extra: with it unimportable (a package of that name that raises ImportError, first on
the child's path), a run through our own endpoints works as before, and an endpoint that needs the SDK (its URL
carries credentials) stops before the run with a line naming the extra to install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from occubench.store import RESULTS_FILE, read_results
from tests.llm.rawserver import closed_port


def _without_openai(tmp_path: Path) -> dict[str, str]:
    """The environment of a child process in which ``import openai`` raises ImportError."""
    shadow = tmp_path / "no-openai" / "openai"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ImportError("the openai SDK is unimportable in this test")\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OCCUBENCH_"))}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(shadow.parent), os.environ.get("PYTHONPATH")) if p)
    return env


@pytest.mark.slow
def test_the_demo_runs_without_the_sdk(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "occubench", "demo"], cwd=tmp_path, env=_without_openai(tmp_path),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    folders = sorted(p for p in (tmp_path / "results").iterdir() if p.is_dir())
    simulated = read_results(folders[0] / RESULTS_FILE)  # the mock endpoint's run: every role through our client
    assert folders[0].name.startswith("mock-agent__mock-world__") and len(simulated) == 3
    assert all(r["status"] == "ok" and r["usage"]["agent"]["calls"] > 0 for r in simulated)


def test_an_endpoint_that_needs_the_sdk_names_the_extra(tmp_path: Path, small_data: Path) -> None:
    url = f"http://someone:hunter22@127.0.0.1:{closed_port()}/v1"
    done = subprocess.run([sys.executable, "-m", "occubench", "run", "--agent-model", "m", "--world-model", "m",
                           "--base-url", url, "--data-dir", str(small_data), "--output-dir", str(tmp_path / "out")],
                          env=_without_openai(tmp_path), capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and "hunter22" not in done.stdout + done.stderr
    assert 'needs the openai SDK, which is not installed: pip install "occubench[openai]"' in done.stderr
    assert not (tmp_path / "out").exists()
