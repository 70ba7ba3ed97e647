"""What an agent leaves in its Trainee-Bench workspace cannot make its day unscored nor cost the harness without
bound: a day whose agent leaves 1,200 levels of folders is scored as the same day without them (and its folders are
removed), a Data Completion file of 16 MB of newlines scores 0 for the checks that read it with the harness's memory
bounded. The agents are the project's mock server, scripted; their commands run in the sandbox."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from occubench import load_results
from occubench.cli import main
from occubench.core.results import Result
from occubench.sandbox import Provider
from occubench.sandbox.workspace import MAX_DEPTH, remove
from occubench.testing import MockLLMServer
from occubench.traineebench.families._common import find
from occubench.traineebench.families.data_completion import MANUAL as COMPLETION_MANUAL
from occubench.workplace.report import workplace_figures
from tests.sandbox.test_workspace import chain
from tests.traineebench.test_run import CALLS, reference_folder, scripted, write_config

DEEP = "(for i in $(seq 1200); do mkdir d && cd d || exit 1; done) && echo deep"
TRANSACTIONS = {"name": "Transaction Data Review", "deadline": "2025-10-01T20:00:00",
                "arguments": {"num_normal_transactions": 3, "num_abnormal_transactions": 2}}


def run_day(tmp_path: Path, name: str, calls: list[tuple[str, dict]], tasks: list[dict]) -> Result:
    (tmp_path / name).mkdir()
    config = write_config(tmp_path / name, [tasks])
    with MockLLMServer(scripted(calls)) as server:
        assert main(["run", "--suite", "traineebench", "--traineebench-config", str(config), "--reference-dir",
                     str(reference_folder(tmp_path / name)), "--agent-model", "intern", "--base-url",
                     server.base_url, "--api-key", "k", "--output-dir", str(tmp_path / name / "out"), "--run-name",
                     "r", "--seed", "3"]) == 0
    [result] = load_results(tmp_path / name / "out" / "r" / "results.jsonl")
    return result


@pytest.mark.slow  # two runs, 1,200 folders made in the sandbox
def test_a_day_that_leaves_folders_1200_deep_is_scored_as_the_same_day_without_them(
        tmp_path: Path, sandbox: Provider, monkeypatch: pytest.MonkeyPatch) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # where the episodes' folders are made
    made: list[Path] = []
    mkdtemp = tempfile.mkdtemp

    def recorded(*args: Any, **kwargs: Any) -> str:
        made.append(Path(mkdtemp(*args, **kwargs)))
        return str(made[-1])

    monkeypatch.setattr(tempfile, "mkdtemp", recorded)
    control = run_day(tmp_path, "control", CALLS, [TRANSACTIONS])
    deep = run_day(tmp_path, "deep", [*CALLS[:-1], ("execute_command", {"command": DEEP}), CALLS[-1]],
                   [TRANSACTIONS])
    assert deep.tool_calls[3].observation["output"] == "deep\n"
    assert f"more than {MAX_DEPTH} levels" in deep.tool_calls[3].observation["workspace_not_kept"]
    assert deep.ok and control.ok and deep.error is None
    assert deep.verdict_details["task_scores"] == control.verdict_details["task_scores"]
    assert deep.is_correct == control.is_correct
    # The same figures but for the deep day's one more tool call.
    figures, control_figures = workplace_figures([deep]), workplace_figures([control])
    assert figures["overall"]["tool_calls"] == control_figures["overall"]["tool_calls"] + 1
    for figured in (figures, control_figures):
        del figured["overall"]["tool_calls"], figured["overall"]["steps"], figured["by_tasks_per_day"]
    assert figures == control_figures and (figures["overall"]["days"], figures["overall"]["tasks"]) == (1, 1)
    episodes = [folder for folder in made if folder.name.startswith("occubench-day-")]
    assert len(episodes) == 2 and all(folder.parent == temp for folder in episodes)
    assert not list(temp.glob("occubench-day-*"))  # each episode's folders removed, the deep ones too


def test_a_walk_for_an_answer_finds_it_beside_1200_levels_and_scores_0_past_them(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    chain(workspace, 1_200, "a")
    (workspace / "answer.json").write_text("{}")
    assert find(workspace, "answer.json") == workspace / "answer.json"  # the top folder first
    (workspace / "z").mkdir()
    (workspace / "z" / "later.json").write_text("{}")
    assert find(workspace, "later.json") is None  # after the chain, past the walk's limits: 0 for the check
    remove(workspace)  # pytest's own clean-up of old temporary folders recurses


#: The harness's peak RSS in KiB: VmHWM, its own address space's (ru_maxrss would keep the peak of the pytest
#: worker it was forked from, which execve does not reset).
MEMORY_PROBE = """
import sys
from occubench.cli import main
code = main(sys.argv[1:])
print(next(line for line in open("/proc/self/status") if line.startswith("VmHWM")).split()[1], file=sys.stderr)
sys.exit(code)
"""


def test_a_data_completion_file_of_16_mb_of_newlines_scores_0_for_its_checks_in_bounded_memory(
        tmp_path: Path, sandbox: Provider) -> None:
    output = "data_completion_sales_quarter_from_months.csv"
    calls = [("download_file", {"file_path": f"data_completion/{COMPLETION_MANUAL}", "target_path":
                                COMPLETION_MANUAL}),
             ("execute_command", {"command": f"head -c 16777216 /dev/zero | tr '\\\\0' '\\\\n' > {output} && "
                                             f"wc -c < {output}"}),
             ("done", {})]
    task = {"name": "Data Completion", "deadline": "2025-10-01T20:00:00",
            "arguments": {"domain": "sales", "task_type": "quarter_from_months"}}
    config = write_config(tmp_path, [[task]])
    with MockLLMServer(scripted(calls)) as server:
        process = subprocess.Popen(
            [sys.executable, "-c", MEMORY_PROBE, "run", "--suite", "traineebench", "--traineebench-config",
             str(config), "--reference-dir", str(reference_folder(tmp_path)), "--agent-model", "intern",
             "--base-url", server.base_url, "--api-key", "k", "--output-dir", str(tmp_path / "out"), "--run-name",
             "r", "--seed", "3"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
        _, errors = process.communicate(timeout=600)
    assert process.returncode == 0, errors[-2000:]
    peak_kib = int(errors.strip().splitlines()[-1])
    print(f"harness peak RSS: {peak_kib / 1024:.0f} MB")
    assert peak_kib < 300 * 1024  # before: 1.28 GB for the list of rows alone
    [result] = load_results(tmp_path / "out" / "r" / "results.jsonl")
    assert result.ok and result.tool_calls[1].observation["output"].strip() == "16777216"
    [score] = result.verdict_details["task_scores"]
    # The handbook and no colleague to ask earn theirs; the two checks that read the file score 0.
    assert (score["points"], score["full"]) == (2.133333, 4.0)
    assert any("cannot be scored" in note for note in score["notes"])
