"""The verifiers guide's offline run, as it prints it, in the verifiers peer: vf-eval against the mock, then its
reading of the rewards; the run folder it leaves reads as an occubench run."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from occubench.cli import main as cli_main
from occubench.testing import MockLLMServer
from tests.conftest import peer

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "guides" / "verifiers.md"
MARKER = "<!-- tests/integrations/verifiers/test_guide.py runs this block with vf-eval from the verifiers peer -->"
#: Where the guide's reader runs the mock.
GUIDE_URL = "http://127.0.0.1:8100/v1"

pytestmark = pytest.mark.slow  # vf-eval and occubench serve start in seconds, not less


def test_the_guides_offline_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    venv = peer("verifiers")
    block = re.search(re.escape(MARKER) + r"\n```bash\n(.*?)\n```", GUIDE.read_text(encoding="utf-8"), re.S)
    assert block is not None and GUIDE_URL in block[1], "the guide's offline run is not where the marker says"
    # The reader's shell: verifiers' virtualenv first on the PATH, occubench found through $OCCUBENCH_COMMAND.
    environment = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path),
                   "OCCUBENCH_COMMAND": shlex.join([sys.executable, "-m", "occubench"]),
                   "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    with MockLLMServer() as mock:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", block[1].replace(GUIDE_URL, mock.base_url)],
                              cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=600,
                              check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    # vf-eval's dashboard comes first on stdout, then the script's lines: task, trial, reward, feedback.
    printed = re.findall(r"^(\S+/\S+) (\d+) (\d\.\d+) (.*)$", done.stdout, re.M)
    assert len(printed) == 8 and {reward for _, _, reward, _ in printed} == {"0.0"}
    assert sorted(trial for _, trial, _, _ in printed) == ["0"] * 4 + ["1"] * 4
    assert all(feedback.strip() for _, _, _, feedback in printed)
    results = [json.loads(line) for line in (tmp_path / "results" / "vf-demo" / "results.jsonl").read_text()
               .splitlines()]
    assert sorted((r["task_id"], str(r["trial"])) for r in results) == sorted((t, i) for t, i, _, _ in printed)
    monkeypatch.chdir(tmp_path)  # the guide's `occubench report results/vf-demo`, from where the reader is
    assert cli_main(["report", "results/vf-demo"]) == 0
