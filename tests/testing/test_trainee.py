"""The mock server plays Trainee-Bench's roles, so that a run of the reference's configs reaches each offline: the
intern (given a day's tools) asks an HR Manager for help, the colleague's model answers with its reply rules, and
the judge says yes to material and no to none."""

from __future__ import annotations

import json
from pathlib import Path

from occubench import load_results
from occubench.cli import main
from occubench.sandbox import Provider
from occubench.testing import MockLLMServer
from occubench.testing.trainee import QUESTION
from tests.traineebench.test_run import MONITOR, reference_folder, write_config


def test_a_trainee_bench_day_reaches_the_mock_s_intern_colleague_and_judge(tmp_path: Path, sandbox: Provider,
                                                                          server: MockLLMServer) -> None:
    config = write_config(tmp_path, [[MONITOR]])
    assert main(["run", "--suite", "traineebench", "--traineebench-config", str(config), "--reference-dir",
                 str(reference_folder(tmp_path)), "--agent-model", "mock", "--npc-model", "mock",
                 "--verifier-model", "mock", "--base-url", server.base_url, "--api-key", "k", "--output-dir",
                 str(tmp_path / "out"), "--run-name", "r"]) == 0
    [result] = load_results(tmp_path / "out" / "r" / "results.jsonl")
    assert [call.name for call in result.tool_calls] == ["list_users", "send_message", "done"]
    asked = json.loads(result.tool_calls[1].arguments)
    users = {u["name"]: u for u in result.tool_calls[0].observation["users"]}
    assert users[asked["to"]]["position"] == "HR Manager" and asked["text"] == QUESTION
    # The HR Manager's model answered with the rule the Website Monitor task gave HR (it names the engineer).
    [score] = result.verdict_details["task_scores"]
    engineer = next(name for name, u in users.items() if name in result.tool_calls[1].observation["reply"])
    assert users[engineer]["position"] == "Software Engineer"
    # The judge said yes to the HR chat, and was not asked about the report or chats that do not exist.
    assert (score["points"], score["full"]) == (1.0, 5.0)
    judged = [r for r in server.requests if "<material>" in json.dumps(r["messages"])]
    assert len(judged) == 1 and "In this chat with HR" in judged[0]["messages"][-1]["content"]
