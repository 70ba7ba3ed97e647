"""An AWM task through the integrations, Gymnasium and Inspect: the same factory, world, tools and verdict as a
run's episode."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from occubench.testing import MockLLMServer
from tests.conftest import extra_reason

pytest.importorskip("gymnasium", reason=extra_reason("gym"))

from occubench.gym import OccuBenchEnv


def test_an_awm_task_steps_through_gymnasium_and_is_judged(data: Path) -> None:
    with MockLLMServer() as judge:
        env = OccuBenchEnv("awm", "content_platform_1/0", data_dir=str(data), verifier_model="judge",
                           base_url=judge.base_url, api_key="k")
        try:
            instruction, info = env.reset()
            assert instruction and "subscribe_to_channel" in {tool["function"]["name"] for tool in info["tools"]}
            observation, reward, terminated, _, _ = env.step({"name": "subscribe_to_channel",
                                                              "arguments": {"channel_id": 1}})
            assert "error" not in json.loads(observation) and (reward, terminated) == (0.0, False)
            listed = json.loads(env.step({"name": "list_user_subscriptions", "arguments": {}})[0])
            assert 1 in {item["channel_id"] for item in listed["subscriptions"]}
            _, reward, terminated, _, info = env.step({"answer": "Subscribed."})
            assert terminated and info["verdict_details"]["verification_mode"] == "judge"
            assert reward == float(info["is_correct"])
        finally:
            env.close()


def test_an_awm_task_in_inspect_gives_occubench_run_s_verdict(data: Path, tmp_path: Path) -> None:
    """The same task through Inspect's own eval and through occubench run, against one scripted server."""
    pytest.importorskip("inspect_ai", reason=extra_reason("inspect"))
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from occubench import RunConfig, run
    from occubench.inspect import awm, read_log

    with MockLLMServer() as server:
        def model(name: str) -> Any:
            return get_model(f"openai/{name}", base_url=server.base_url, api_key="k", memoize=False)
        [log] = inspect_eval(awm(data_dir=str(data), task_ids="content_platform_1/0", date="2026-03-02"),
                             model=model("gpt-4o"), model_roles={"grader": model("gpt-4o-mini")},
                             log_dir=str(tmp_path / "logs"), display="none")
        ours = run(RunConfig.create({"suite": "awm", "data_dir": str(data), "task_ids": ["content_platform_1/0"],
                                     "agent_model": "gpt-4o", "verifier_model": "gpt-4o-mini", "date": "2026-03-02",
                                     "base_url": server.base_url, "api_key": "k",
                                     "output_dir": str(tmp_path / "runs")}))
    assert log.status == "success", log.error
    [theirs] = read_log(Path(log.location))
    [native] = ours.results
    assert (theirs.is_correct, theirs.verdict_details["verification_mode"], theirs.final_answer) == \
        (native.is_correct, native.verdict_details["verification_mode"], native.final_answer)


@pytest.mark.slow
def test_an_outside_program_plays_awm_tasks_over_mcp_as_the_native_loop_does(
        data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--agent command:...``: the example MCP agent, on the same scripted model, makes the native loop's calls on
    the AWM instance and gets its verdicts."""
    from occubench import load_results
    from occubench.cli import main
    from tests.mcp.test_command import command
    from tests.mcp.test_episodes import EXAMPLE

    # (content_platform_1: code_hosting_2 stamps the user it makes on first sight with the clock, so the judge's
    # prompts, and the mock judge's verdicts, would differ between any two runs.)
    tasks = ["--task-ids", "content_platform_1/0", "content_platform_1/3"]
    with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)  # the program's own model: the same mock
        monkeypatch.setenv("OPENAI_API_KEY", "k")

        def run(name: str, *agent: str) -> dict[str, Any]:
            assert main(["run", "--suite", "awm", "--data-dir", str(data), "--agent-model", "scripted",
                         "--verifier-model", "judge", "--base-url", server.base_url, "--api-key", "k",
                         "--output-dir", str(tmp_path), "--run-name", name, *tasks, *agent]) == 0
            return {r.task_id: r for r in load_results(tmp_path / name / "results.jsonl")}

        native = run("native")
        outside = run("command", "--agent", command(sys.executable, str(EXAMPLE), "{mcp_url}", "{instruction_file}",
                                                    "--model", "{model}"))
    assert outside.keys() == native.keys() == {"content_platform_1/0", "content_platform_1/3"}
    for task_id, result in outside.items():
        assert result.ok and result.agent_model == "command:scripted"
        assert [(c.name, c.arguments, c.observation) for c in result.tool_calls] == \
            [(c.name, c.arguments, c.observation) for c in native[task_id].tool_calls]
        assert result.tool_calls and result.is_correct == native[task_id].is_correct
        assert result.verdict_details["verification_mode"] == "judge"
