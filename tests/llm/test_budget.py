"""Context budgets: the judge's and the world model's prompts fit the model's context window (the mock answers a
clean 400 past it, as llama.cpp does), the middle of what is too long cut with a visible marker and recorded; a
re-ask after an unreadable reply stays within the window too."""

from __future__ import annotations

import json

from occubench.core.verifier import RubricVerifier
from occubench.llm import LLMClient, Model
from occubench.simulated.config import WorldModelConfig
from occubench.simulated.environment import SimulatedEnvironment
from occubench.testing import MockLLMServer

WINDOW = 8192
VERDICT = '<verdict>{"feedback": "fine", "is_correct": true}</verdict>'


def test_a_long_trajectory_is_cut_in_its_middle_to_fit_the_judge() -> None:
    trajectory = "".join(f"[Step {i}] observation {'x' * 7000}\n" for i in range(10)) + "[Agent Final Response]: done"

    def responder(request: dict, index: int) -> str:
        # The first answer of each vote is a long unreadable ramble; the re-ask must still fit the window.
        asked_again = any("could not be read" in str(m.get("content")) for m in request["messages"])
        return VERDICT if asked_again else "ramble " * 5000

    with MockLLMServer(responder, context_window=WINDOW) as server:
        judge = Model(LLMClient("k", server.base_url), "judge", {"max_tokens": 2048}, role="verifier")
        verdict = RubricVerifier(judge, num_votes=3, context=WINDOW).judge(
            [("Task given to the agent", "Refill RX-100."), ("Agent trajectory", trajectory)])
        assert 400 not in server.stats.responses_by_status
    assert verdict.is_correct is True and verdict.details["judge_prompt_cut"] > 40_000
    prompt = verdict.prompt[1]["content"]
    assert "characters left out here to fit the judge's context window" in prompt
    assert "[Step 0]" in prompt and "[Agent Final Response]: done" in prompt  # both ends kept


def test_without_a_window_nothing_is_cut() -> None:
    with MockLLMServer(lambda request, index: VERDICT) as server:
        judge = Model(LLMClient("k", server.base_url), "judge", {"max_tokens": 2048}, role="verifier")
        verdict = RubricVerifier(judge, num_votes=1).judge([("Agent trajectory", "y" * 100_000)])
    assert "judge_prompt_cut" not in verdict.details and "y" * 100_000 in verdict.prompt[1]["content"]


def test_the_world_model_sees_the_newest_calls_that_fit_and_is_told_of_the_rest() -> None:
    config = WorldModelConfig.from_dict({
        "environment_name": "env_big", "world_model_system_prompt": "You simulate a records system.",
        "action_set_definitions": [{"name": "dump", "description": "Dump a table.",
                                    "parameters": {"type": "object", "properties": {"n": {"type": "integer"}},
                                                   "required": ["n"]}}],
        "state_description": {}, "task_initial_state": {}}, "env_big.json")

    def responder(request: dict, index: int) -> str:
        return f'<predicted_observation>{json.dumps({"rows": "r" * 6000})}</predicted_observation>'

    with MockLLMServer(responder, context_window=WINDOW) as server:
        env = SimulatedEnvironment(config, LLMClient("k", server.base_url), "world", params={"max_tokens": 1024},
                             context=WINDOW)
        for n in range(12):
            assert "rows" in json.loads(env.simulate("dump", {"n": n}))
        assert 400 not in server.stats.responses_by_status
        last = server.requests[-1]["messages"]
    assert env.info()["world_calls_left_out"] > 0
    assert "left out here to fit the context window" in last[1]["content"]
    assert json.loads(last[-1]["content"]) == {"name": "dump", "arguments": {"n": 11}}
    assert json.loads(last[-3]["content"])["arguments"] == {"n": 10}  # the newest earlier call kept
