"""Repeated self-evolution (`--self-evolution N`, the paper's Figure 4 beside human guidance): a scenario's first day
played again N times, each time after a reflection on the time before, told every reflection so far; through the
real CLI against the mock server, whose reflection role answers from the day's record."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from occubench import load_results
from occubench.cli import main
from occubench.sandbox import Provider
from occubench.testing import MockLLMServer
from tests.conftest import agent_requests
from tests.traineebench.test_run import CALLS, reference_folder, scripted, write_config

TASK = {"name": "Transaction Data Review", "deadline": "2025-10-01T20:00:00",
        "arguments": {"num_normal_transactions": 3, "num_abnormal_transactions": 2}}
#: The agent's day: the first two steps of the review, then done (so every day misses the report).
PARTIAL = scripted([*CALLS[:2], ("done", {})], "stopped early.")


def reflecting() -> Callable[[dict, int], str | dict]:
    """The agent, and a reflection whose notes say how many reflections came before (the times run one after
    another: each waits for the reflection on the one before)."""
    made: list[str] = []

    def reply(request: dict, index: int) -> str | dict:
        if "<notes>" not in request["messages"][0]["content"]:
            return PARTIAL(request, index)
        made.append(f"Lesson {len(made) + 1}: write the review report before calling done.")
        return f"<notes>{made[-1]}</notes>"
    return reply


def test_each_time_is_told_every_reflection_before_it(tmp_path: Path, sandbox: Provider) -> None:
    config = write_config(tmp_path, [[TASK]])
    with MockLLMServer(reflecting()) as server:
        assert main(["run", "--suite", "traineebench", "--traineebench-config", str(config), "--reference-dir",
                     str(reference_folder(tmp_path)), "--agent-model", "intern", "--base-url", server.base_url,
                     "--api-key", "k", "--output-dir", str(tmp_path / "out"), "--run-name", "r",
                     "--self-evolution", "2"]) == 0
    results = {str(r.task_id): r for r in load_results(tmp_path / "out" / "r" / "results.jsonl")}
    first, second, third = "scenario_a/day_1", "scenario_a/day_1/evolution_1", "scenario_a/day_1/evolution_2"
    assert set(results) == {first, second, third}
    notes = {task_id: results[task_id].verdict_details.get("reflection_notes") for task_id in (first, second)}
    assert all(note and note.startswith("Lesson") for note in notes.values())
    assert results[third].verdict_details.get("reflection_notes") is None  # nothing comes after the last time
    assert [results[t].verdict_details["day_one"] for t in (second, third)] == [first, second]
    assert all(results[t].verdict_details["arm"] == "reflection" for t in (second, third))
    # What each time's agent was told: nothing, then the first reflection, then both in order.
    instructions = [r["messages"][1]["content"] for r in agent_requests(server) if len(r["messages"]) == 2]
    told = [text.count("Your notes after reflecting on a day:") for text in instructions]
    assert sorted(told) == [0, 1, 2]
    both = next(text for text in instructions if text.count("Your notes after reflecting on a day:") == 2)
    assert both.index(notes[first]) < both.index(notes[second])


@pytest.mark.parametrize("flags", [["--self-evolution", "1", "--learning"], ["--self-evolution", "1",
                                                                            "--mentor-feedback"]])
def test_self_evolution_does_not_combine_with_other_days_after(flags: list[str], tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path, [[TASK]])
    assert main(["run", "--suite", "traineebench", "--traineebench-config", str(config), "--reference-dir",
                 str(reference_folder(tmp_path)), "--agent-model", "m", "--output-dir", str(tmp_path / "out"),
                 *flags]) == 2
    assert "choose one" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
