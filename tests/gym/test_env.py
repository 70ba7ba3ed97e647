"""The Gymnasium interface: every suite passes Gymnasium's checker; the reference solution played through it earns
reward 1 and doing nothing 0; calls follow the agent loop's tool contract; faults, step limits, judge and world
failures and hostile actions behave as documented."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import extra_reason

gymnasium = pytest.importorskip("gymnasium", reason=extra_reason("gym"))

from gymnasium.error import ResetNeeded  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402

import occubench.gym  # noqa: E402
from occubench import RunConfig, run  # noqa: E402
from occubench.core.agent import NOOP, system_prompt  # noqa: E402
from occubench.core.episode import Episodes  # noqa: E402
from occubench.core.faults import fault_schedule  # noqa: E402
from occubench.engine.models import build_models  # noqa: E402
from occubench.engine.registry import installed_suites  # noqa: E402
from occubench.errors import ConfigError  # noqa: E402
from occubench.executable.validate import REFERENCE  # noqa: E402
from occubench.gym import OccuBenchEnv  # noqa: E402
from occubench.testing import MockLLMServer, make_scripted_responder  # noqa: E402
from occubench.workplace.generate import generate_day  # noqa: E402
from occubench.workplace.schedule import reference_schedule  # noqa: E402
from tests.conftest import write_small_data  # noqa: E402
from tests.core.test_images import PNG_TEXT, SHOWS, record  # noqa: E402

TASK = "clinic_scheduling/book_urgent_cardiology"
DAY = "s0-d001"
#: The reference's calls for that day, and its last words.
CALLS = [(call["tool"], call["arguments"]) for call in reference_schedule(generate_day(0, 1))[0]]
ERRORS = {"HTTP 500 Internal Server Error", "Upstream request timed out after 30 s",
          "Connection refused by the upstream service", "Service temporarily unavailable; retry later"}


def _checked(env: Any) -> None:
    """Gymnasium's checker passes with no warning of its own."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught if "gymnasium" in w.filename] == []


def _play(env: OccuBenchEnv, calls: list[tuple[str, dict]], answer: str | None,
          ) -> list[tuple[str, float, bool, bool, dict]]:
    steps = [env.step({"name": name, "arguments": arguments}) for name, arguments in calls]
    return steps + ([env.step({"answer": answer})] if answer is not None else [])


@pytest.fixture
def simulated_data(tmp_path: Path) -> Path:
    """The small dataset with a rubric the mock judge applies: it passes exactly the trajectories that call
    get_prescription."""
    data = write_small_data(tmp_path / "data")
    tasks = [json.loads(line) for line in (data / "eval_benchmark_solvable.jsonl").read_text().splitlines()]
    tasks[0]["verification_plan"] = "The agent must call `get_prescription` and report 2 refills left."
    (data / "eval_benchmark_solvable.jsonl").write_text("".join(json.dumps(task) + "\n" for task in tasks))
    return data


@pytest.fixture
def executable() -> Iterator[OccuBenchEnv]:
    env = OccuBenchEnv("executable", TASK, malformed_penalty=0.25)
    yield env
    env.close()


# -- registration and the checker ---------------------------------------------------------------------------------

def test_every_installed_suite_has_an_id_and_make_builds_it() -> None:
    assert {occubench.gym.env_id(name) for name in installed_suites()} <= set(gymnasium.registry)
    env = occubench.gym.make("executable", TASK)
    assert env.spec is not None and env.spec.id == "occubench/executable-v0"
    assert isinstance(env.unwrapped, OccuBenchEnv) and env.unwrapped.task.task_id == TASK
    # Gymnasium's own syntax imports the package that registers the id.
    again = gymnasium.make("occubench.gym:occubench/workplace-v0", task_id=DAY, days=1)
    assert again.unwrapped.task.task_id == DAY
    env.close()
    again.close()


def test_check_env_passes_for_an_executable_task() -> None:
    _checked(gymnasium.make("occubench/executable-v0", task_id=TASK))


def test_check_env_passes_for_a_workplace_day() -> None:
    _checked(gymnasium.make("occubench/workplace-v0", task_id=DAY, days=1))


def test_check_env_passes_for_a_simulated_task(server: MockLLMServer, small_data: Path) -> None:
    config = RunConfig.create({"data_dir": str(small_data), "world_model": "w", "base_url": server.base_url,
                               "api_key": "k"})
    _checked(gymnasium.make("occubench/occubench-v0", task_id=1, config=config))


# -- reset and the reference solution ------------------------------------------------------------------------------

def test_reset_gives_the_instruction_tools_and_system_prompt() -> None:
    env = OccuBenchEnv("executable", TASK, date="2025-11-10", with_plan=True)
    instruction, info = env.reset(seed=0)
    assert instruction == env.task.instruction and info["task_id"] == TASK and info["max_steps"] == 50
    assert info["system_prompt"] == system_prompt(env.task, "2025-11-10", True) == env.trajectory.system_prompt
    assert info["tools"] == [spec.schema() for spec in env.suite.world(env.task).tools()]
    env.close()


def test_the_reference_earns_1_and_doing_nothing_0_on_every_executable_task(executable: OccuBenchEnv) -> None:
    for task in executable.tasks:
        executable.reset(options={"task_id": task.task_id})
        calls, answer = REFERENCE.script(task)
        *turns, (observation, reward, terminated, truncated, info) = _play(executable, calls, answer)
        assert (reward, terminated, truncated, info["is_correct"]) == (1.0, True, False, True), task.task_id
        assert all(turn[1:4] == (0.0, False, False) for turn in turns)
        assert observation == "" and info["stop_reason"] == "answer"
        assert all(check["passed"] for check in info["verdict_details"]["checks"])

        executable.reset()
        _, reward, terminated, truncated, info = executable.step(json.dumps({"answer": NOOP.script(task)[1]}))
        assert (reward, terminated, truncated, info["is_correct"]) == (0.0, True, False, False), task.task_id


def test_the_trajectory_is_the_one_the_harness_records(executable: OccuBenchEnv) -> None:
    executable.reset()
    calls, answer = REFERENCE.script(executable.task)
    steps = _play(executable, calls, answer)
    harness = Episodes(executable.suite, REFERENCE, {}).evaluate(executable.task)
    assert executable.trajectory.tool_calls == harness.tool_calls
    assert executable.trajectory.final_answer == harness.final_answer
    assert [json.loads(step[0]) for step in steps[:-1]] == [call.observation for call in harness.tool_calls]


def test_a_workplace_day_scores_its_checkpoints() -> None:
    env = OccuBenchEnv("workplace", DAY, days=1)
    env.reset()
    *_, (_, reward, terminated, _, info) = _play(env, CALLS, "All tasks are done for today.")
    assert (reward, terminated, info["verdict_details"]["day_score"]) == (1.0, True, 1.0)
    env.reset()
    _, reward, terminated, _, info = env.step({"answer": "Nothing done."})
    assert (reward, terminated, info["is_correct"]) == (0.0, True, False)
    env.close()


# -- the step limit, malformed calls, the end of an episode ---------------------------------------------------------

def test_the_step_limit_truncates_and_the_verifier_judges_what_was_done() -> None:
    # A workplace day is scored on what was done, answer or not: its reference, cut at its last call, still earns 1.
    calls = CALLS
    env = OccuBenchEnv("workplace", DAY, days=1, max_steps=len(calls))
    env.reset()
    *turns, (_, reward, terminated, truncated, info) = _play(env, calls, None)
    assert not any(turn[2] or turn[3] for turn in turns)
    assert (reward, terminated, truncated, info["stop_reason"]) == (1.0, False, True, "max_steps")
    assert env.trajectory.stop_reason == "max_steps" and env.trajectory.step_count == len(calls)
    with pytest.raises(ResetNeeded):
        env.step({"answer": "late"})
    env.close()

    short = OccuBenchEnv("executable", TASK, max_steps=2)
    short.reset()
    assert short.step({"name": "list_referrals", "arguments": {}})[2:4] == (False, False)
    _, reward, terminated, truncated, info = short.step({"name": "list_referrals", "arguments": {}})
    assert (reward, terminated, truncated, info["is_correct"]) == (0.0, False, True, False)


def test_malformed_calls_get_the_penalty_and_never_reach_the_world(executable: OccuBenchEnv) -> None:
    executable.reset()
    good = executable.step({"name": "list_referrals", "arguments": "{}"})
    assert good[1] == 0.0 and not good[4]["malformed"] and "referrals" in json.loads(good[0])
    cases = [({"name": "no_such_tool", "arguments": {}}, "unknown_tool", None),
             ({"name": "find_patient", "arguments": "{not json"}, "invalid_arguments", None),
             ({"name": "find_patient", "arguments": "[1, 2]"}, "invalid_arguments", None),
             # Arguments that are JSON but do not match the schema reach the contract, as in the agent loop.
             ({"name": "find_patient", "arguments": {"no_such_argument": 1}}, "invalid_arguments", 1)]
    for action, kind, call_index in cases:
        observation, reward, terminated, truncated, info = executable.step(action)
        assert json.loads(observation)["error"] == kind and reward == -0.25 and info["malformed"], action
        assert not terminated and not truncated
        assert executable.trajectory.tool_calls[-1].call_index == call_index
    assert [call.call_index for call in executable.trajectory.tool_calls] == [0, None, None, None, 1]


def test_stepping_before_reset_after_the_end_or_after_close_raises(executable: OccuBenchEnv) -> None:
    with pytest.raises(ResetNeeded):
        executable.step({"answer": "x"})
    executable.reset()
    executable.step({"answer": "x"})
    with pytest.raises(ResetNeeded, match="reset"):
        executable.step({"answer": "x"})
    executable.reset()
    executable.close()
    executable.close()
    with pytest.raises(ResetNeeded):
        executable.step({"answer": "x"})


HOSTILE: dict[str, object] = {
    "a number": 5, "null": None, "a list": [], "bytes": b"bytes", "a number for a name": {"name": 3},
    "a list of arguments": {"name": "find_patient", "arguments": [1, 2]}, "a number for an answer": {"answer": 5},
    "a call and an answer": {"name": "find_patient", "answer": "both"}, "an empty object": {},
    "text": "not json", "a JSON string": '"a JSON string"', "JSON nested too deep": "[" * 100_000,
    "megabytes of text": "x" * 3_000_000, "a megabyte name": {"name": "x" * 3_000_000, "arguments": {}},
    "a set of arguments": {"name": "find_patient", "arguments": {1, 2}},
    "NaN": {"name": "find_patient", "arguments": {"name": float("nan")}},
    "a huge integer": {"name": "find_patient", "arguments": {"name": 10**5000}},
    "a lone surrogate name": {"name": "\ud800", "arguments": {}},
    "a lone surrogate argument": {"name": "find_patient", "arguments": {"name": "\udfff"}},
    "an escaped lone surrogate": '{"name": "find_patient", "arguments": {"name": "\\ud800"}}',
    "lone surrogate arguments text": {"name": "find_patient", "arguments": "\ud800"},
}


@pytest.mark.parametrize("action", list(HOSTILE.values()), ids=list(HOSTILE))
def test_hostile_actions_are_malformed_calls(executable: OccuBenchEnv, action: object) -> None:
    executable.reset()
    observation, reward, terminated, truncated, info = executable.step(action)
    assert json.loads(observation)["error"] in ("invalid_arguments", "unknown_tool")
    assert (reward, terminated, truncated, info["malformed"]) == (-0.25, False, False, True)
    executable.render_mode = "ansi"
    assert "[Agent Action]" in str(executable.render())
    _, reward, terminated, _, _ = executable.step({"answer": "\ud800 done"})  # the episode goes on, and ends
    assert terminated and reward == 0.0


# -- faults -------------------------------------------------------------------------------------------------------

def test_harness_faults_follow_the_schedule_of_the_episode_seed() -> None:
    env = OccuBenchEnv("executable", TASK, env_mode="E1", fault_count=1, fault_duration=1, seed=3)
    calls, answer = REFERENCE.script(env.task)
    windows = {seed: fault_schedule("E1", 1, 1, seed, TASK)[0].first_call for seed in (3, 4)}
    assert windows[3] != windows[4]
    # The config's seed until reset is given one; then that one, until another.
    for given, used in ((None, 3), (4, 4), (None, 4)):
        env.reset(seed=given)
        steps = _play(env, calls, answer)
        faulted = [index for index, step in enumerate(steps[:-1]) if json.loads(step[0]).get("error") in ERRORS]
        assert faulted == [windows[used]]
        assert [event["call_index"] for event in steps[-1][4]["fault_events"]] == [windows[used]]
    env.close()
    with pytest.raises(ConfigError, match="harness"):
        OccuBenchEnv("executable", TASK, env_mode="E1", fault_mode="prompt")


@pytest.mark.slow
def test_a_gymnasium_episode_records_the_fault_windows_of_the_native_run(tmp_path: Path) -> None:
    faults: dict[str, Any] = {"env_mode": "E2", "fault_count": 2, "fault_duration": 1, "seed": 7}
    summary = run(RunConfig(suite="executable", agent="reference", task_ids=[TASK], output_dir=str(tmp_path),
                            **faults))
    native = summary.results[0]
    env = OccuBenchEnv("executable", TASK, **faults)
    env.reset()
    *_, (_, _, terminated, _, info) = _play(env, *REFERENCE.script(env.task))
    env.close()
    assert terminated and native.fault_windows and [window.fired for window in native.fault_windows] == [1, 1]
    assert info["fault_windows"] == [vars(window) for window in native.fault_windows]
    assert info["fault_events"] == [vars(event) for event in native.fault_events]


# -- LLM-simulated worlds through the mock server -----------------------------------------------------------------

def test_a_simulated_episode_is_answered_by_the_world_model_and_judged(server: MockLLMServer,
                                                                       simulated_data: Path) -> None:
    config = RunConfig.create({"data_dir": str(simulated_data), "world_model": "w", "base_url": server.base_url,
                               "api_key": "k", "num_votes": 3})
    models = build_models(config, [config.model_role("world", "w"), config.model_role("verifier", "w")])
    env = OccuBenchEnv("occubench", 1, config=config, models=models)
    env.reset()
    observation, reward, *_ = env.step({"name": "get_prescription", "arguments": {"rx_id": "RX-100"}})
    assert json.loads(observation)["tool"] == "get_prescription" and json.loads(observation)["status"] == "ok"
    _, reward, terminated, _, info = env.step({"answer": "2 refills left."})
    assert (reward, terminated, info["is_correct"], len(info["votes"])) == (1.0, True, True, 3)

    env.reset()
    _, reward, terminated, _, info = env.step({"answer": "2 refills left."})  # never called the tool
    assert (reward, terminated, info["is_correct"]) == (0.0, True, False)
    env.close()
    with pytest.raises(ConfigError, match="world model"):
        OccuBenchEnv("occubench", 1, data_dir=str(simulated_data))


def test_a_response_cache_replays_a_simulated_episode(server: MockLLMServer, simulated_data: Path,
                                                      tmp_path: Path) -> None:
    settings: dict[str, Any] = {"data_dir": str(simulated_data), "world_model": "w", "base_url": server.base_url,
                                "api_key": "k", "cache": str(tmp_path / "cache.sqlite")}

    def episode(replay: bool) -> list[tuple[str, float, bool, bool, dict]]:
        env = OccuBenchEnv("occubench", 1, **settings, replay=replay)
        env.reset()
        steps = _play(env, [("get_prescription", {"rx_id": "RX-100"})], "2 refills left.")
        env.close()
        return steps

    recorded = episode(replay=False)
    sent = server.stats.requests
    assert episode(replay=True) == recorded and server.stats.requests == sent


def test_world_and_judge_failures_end_the_episode_as_errors(simulated_data: Path) -> None:
    call = {"name": "get_prescription", "arguments": {"rx_id": "RX-100"}}
    with MockLLMServer(make_scripted_responder(malformed_rate=1.0)) as garbling:
        env = OccuBenchEnv("occubench", 1, data_dir=str(simulated_data), world_model="w", base_url=garbling.base_url,
                           api_key="k")
        env.reset()
        _, reward, terminated, truncated, info = env.step(call)
        assert (reward, terminated, truncated, info["error"]["kind"]) == (0.0, False, True, "environment")
        assert info["stop_reason"] == "error" and env.trajectory.stop_reason == "error"
        with pytest.raises(ResetNeeded):
            env.step({"answer": "x"})

        env.reset()
        _, reward, terminated, truncated, info = env.step({"answer": "x"})
        assert (reward, terminated, truncated, info["error"]["kind"]) == (0.0, False, True, "verifier")
        env.close()

    # A server that echoes the key it refuses: the key never reaches the trainer's logs.
    with MockLLMServer(api_key="the-right-key") as refusing:
        env = OccuBenchEnv("occubench", 1, data_dir=str(simulated_data), world_model="w", base_url=refusing.base_url,
                           config=RunConfig.create({"api_key": "secret-key-123"}))
        env.reset()
        _, reward, _, truncated, info = env.step(call)
        assert (reward, truncated, info["error"]["kind"]) == (0.0, True, "request_rejected")
        assert "Incorrect API key" in info["error"]["message"] and "secret-key-123" not in json.dumps(info)
        env.close()


# -- the policy's tokens ------------------------------------------------------------------------------------------

def _tokens(turn: int) -> dict[str, Any]:
    return {"prompt_ids": list(range(turn + 3)), "completion_ids": [100 + turn, 7], "logprobs": [-0.5 * turn, 0.0]}


def test_the_tokens_an_action_carries_are_kept_on_its_turn(executable: OccuBenchEnv) -> None:
    executable.reset()
    calls, answer = REFERENCE.script(executable.task)
    actions: list[Any] = [{"name": name, "arguments": arguments, "tokens": _tokens(turn)}
                          for turn, (name, arguments) in enumerate(calls)]
    actions[0] = json.dumps(actions[0])  # as JSON text too
    actions.append({"answer": answer, "tokens": _tokens(len(calls))})
    *_, (_, reward, terminated, _, info) = [executable.step(action) for action in actions]
    assert (reward, terminated, info["is_correct"]) == (1.0, True, True)  # the trajectory judged holds them
    assert [step.tokens for step in executable.trajectory.steps] == [_tokens(turn) for turn in range(len(actions))]


HOSTILE_TOKENS: dict[str, object] = {
    "text": "tokens", "a list": [1, 2], "an empty object": {}, "negative ids": {"prompt_ids": [1, -2]},
    "booleans": {"completion_ids": [True, False]}, "text ids": {"completion_ids": ["1"]},
    "fractional ids": {"prompt_ids": [1.5]}, "NaN": {"logprobs": [float("nan")]},
    "an infinite logprob": {"logprobs": [-float("inf")]},
    "a million ids and one text": {"prompt_ids": [0] * 10**6 + ["x"]},
    "objects": {"prompt_ids": {"a": 1}, "completion_ids": [[1]], "logprobs": [{"x": 1}]},
}


@pytest.mark.parametrize("tokens", list(HOSTILE_TOKENS.values()), ids=list(HOSTILE_TOKENS))
@pytest.mark.slow
def test_malformed_tokens_are_left_out_and_change_no_reward(executable: OccuBenchEnv, tokens: object) -> None:
    calls, answer = REFERENCE.script(executable.task)

    def play(carried: dict[str, object]) -> list[tuple]:
        """A malformed call, then the reference solution."""
        executable.reset()
        actions = [{"name": "no_such_tool", "arguments": {}}, *({"name": name, "arguments": arguments}
                                                                 for name, arguments in calls), {"answer": answer}]
        return [executable.step({**action, **carried})[:4] for action in actions]

    plain = play({})
    assert plain[0][1] == -0.25 and plain[-1][1:3] == (1.0, True)
    assert play({"tokens": tokens}) == plain
    assert all(step.tokens is None for step in executable.trajectory.steps)


def test_an_image_in_an_observation_is_given_as_its_text() -> None:
    # The observation space is text: a trainer's policy gets what a model that takes no images gets.
    env = OccuBenchEnv("tests.core.test_images:SUITE", agent_images=True)
    env.reset()
    observation, *_ = env.step({"name": "chart", "arguments": {}})
    env.close()
    assert json.loads(observation) == {"result": record("text", text=SHOWS)} and PNG_TEXT not in observation
