"""A twin run measures what the simulator gets wrong: with a perfect simulator every call agrees, with one that
corrupts a share of its answers the measured agreement is one minus that share, within the binomial interval."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from occubench.cli import main
from occubench.core.results import Result
from occubench.store import ResultStore
from occubench.testing import MockLLMServer
from occubench.testing.responders import make_scripted_responder
from occubench.twin.agreement import normalized
from occubench.twin.fidelity import fidelity
from tests.conftest import BUILTIN_TASKS, BUILTIN_WORLDS


def twin_run(tmp_path: Path, share: float, *args: str) -> tuple[int, list[Result]]:
    with MockLLMServer(make_scripted_responder(twin=share)) as server:
        code = main(["run", "--suite", "twin", "--world-model", "simulator", "--verifier-model", "judge",
                     "--base-url", server.base_url, "--output-dir", str(tmp_path), "--run-name", "twin",
                     "--max-concurrency", "8", *args])
    return code, ResultStore(tmp_path / "twin").load()


@pytest.mark.parametrize("share", [0.0, 0.2])
@pytest.mark.slow
def test_call_agreement_over_every_built_in_worlds_reference_trajectories(
        share: float, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, results = twin_run(tmp_path, share, "--agent", "reference")
    assert code == 0 and len(results) == BUILTIN_TASKS and all(result.ok for result in results)
    calls = [call for result in results for call in result.env_info["twin_calls"]]
    decided = [call for call in calls if call["agree"] is not None]
    assert len(decided) == len(calls) > 60
    # Every call the simulator answered wrongly is found, and only those.
    assert all(call["agree"] == (normalized(call["simulated"]) == normalized(call["real"])) for call in calls)
    rate = sum(call["agree"] for call in decided) / len(decided)
    if share == 0:
        assert rate == 1.0 and {call["by"] for call in calls} == {"equal"}
    else:
        assert abs(rate - (1 - share)) <= 1.96 * math.sqrt(share * (1 - share) / len(decided))
        assert {call["kind"] for call in calls if not call["agree"]} >= {"wrong_values", "wrong_error"}
        assert any(call["by"] == "judge" for call in calls)  # the cheap checks left some to the judge
    # The real world was kept in step: the reference solution passes its code checks on it, whatever the simulator
    # said; each verdict flip is counted against that executable verdict of the same trajectory.
    for result in results:
        executable = result.verdict_details["executable"]["is_correct"]
        assert executable is True and result.verdict_details["flipped"] == (result.is_correct != executable)
    figures = fidelity(results)
    assert figures.calls.decided == len(decided) and figures.calls.rate == pytest.approx(rate)
    assert len(figures.by_world) == len(BUILTIN_WORLDS)
    assert main(["report", str(tmp_path / "twin")]) == 0
    assert "agreement" in capsys.readouterr().out.lower()


def test_a_wrong_trajectory_flips_no_verdict_the_simulator_did_not_cause(tmp_path: Path) -> None:
    # The do-nothing agent makes no call: nothing to disagree on, and both worlds fail it.
    code, results = twin_run(tmp_path, 0.2, "--agent", "noop", "--limit", "4")
    assert code == 0 and len(results) == 4
    assert all(result.env_info["twin_calls"] == [] and result.verdict_details["executable"]["is_correct"] is False
               for result in results)


class SilentReference:
    """The reference solution's calls, then an empty answer: a simulated world's rubric judge (the mock's reads the
    calls) may pass it where the executable checks of the answer fail it — a verdict the simulation flips."""

    def run(self, task, env, trajectory) -> None:  # type: ignore[no-untyped-def]
        from occubench.executable.validate import REFERENCE

        REFERENCE.run(task, env, trajectory)
        trajectory.final_answer = ""


def test_verdict_flips_are_counted_against_the_executable_verdict_with_an_interval(tmp_path: Path) -> None:
    code, results = twin_run(tmp_path, 0.0, "--agent", f"{__file__}:SilentReference")
    assert code == 0 and len(results) == BUILTIN_TASKS
    flipped = [r for r in results if r.verdict_details["flipped"]]
    assert flipped and all(r.is_correct and not r.verdict_details["executable"]["is_correct"] for r in flipped)
    flips = fidelity(results).flips
    assert flips.flipped == len(flipped) and flips.episodes == BUILTIN_TASKS
    assert flips.all_agreed == len(flipped)  # a perfect simulator: the judges differ, not the worlds' answers
    assert flips.low is not None and flips.high is not None and flips.low <= flips.rate <= flips.high
