"""The reference agent loop against a code world, with the model played by a loopback server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from occubench.cli import main as cli
from occubench.core.agent import ToolCallingAgent
from occubench.core.environment import Environment, JSONObject
from occubench.core.task import Task
from occubench.core.tools import ToolSpec
from occubench.core.trajectory import Trajectory
from occubench.llm import LLMClient, Model
from occubench.llm.ledger import open_ledger
from occubench.store import read_results
from occubench.testing import MockLLMServer
from tests.conftest import agent_requests, run_folder

TASK = Task(task_id=7, instruction="Move 3 units from A to B.", scenario="Stock Transfer", category="Biz",
            domain="Inventory", difficulty=1, env_name="stock", solution_plan="Read A, then move.")


def _tool(name: str, writes: bool, **props: str) -> ToolSpec:
    parameters = {"type": "object", "properties": {p: {"type": t} for p, t in props.items()}, "required": list(props)}
    return ToolSpec(name, f"The {name} tool.", parameters, writes)


TOOLS = [_tool("read_bin", False, bin="string"),
         _tool("transfer", True, source="string", target="string", qty="integer")]


class Stock(Environment):
    """A tiny code world: two bins and a transfer tool."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, JSONObject]] = []
        self.reset()

    def reset(self) -> None:
        self.bins = {"A": 5, "B": 0}

    def tools(self) -> list[ToolSpec]:
        return TOOLS

    def _call(self, name: str, arguments: JSONObject) -> JSONObject:
        self.calls.append((name, arguments))
        if name == "read_bin":
            return {"bin": arguments["bin"], "qty": self.bins[arguments["bin"]]}
        self.bins[arguments["source"]] -= arguments["qty"]
        self.bins[arguments["target"]] += arguments["qty"]
        return {"ok": True}


def scripted(*turns: Any) -> MockLLMServer:
    """A server whose n-th agent request gets ``turns[n]`` (a str answer, or a list of (name, arguments))."""
    def responder(request: dict, index: int) -> Any:
        turn = turns[sum(m["role"] == "assistant" for m in request["messages"])]
        if isinstance(turn, str):
            return turn
        return {"content": None, "tool_calls": [{"name": n, "arguments": a} for n, a in turn]}
    return MockLLMServer(responder)


def play(server: MockLLMServer, env: Environment, **options: Any) -> Trajectory:
    trajectory = Trajectory()
    model = Model(LLMClient("k", server.base_url), "agent-model", {"temperature": 0.0}, role="agent")
    ToolCallingAgent(model, date="2026-01-15", **options).run(TASK, env, trajectory)
    return trajectory


def test_tool_calls_of_one_turn_run_in_order_and_the_answer_ends_the_episode() -> None:
    env = Stock()
    with scripted([("read_bin", {"bin": "A"}), ("transfer", {"source": "A", "target": "B", "qty": 3})],
                  "Moved 3 units.") as server:
        with open_ledger() as ledger:
            trajectory = play(server, env)
    assert env.calls == [("read_bin", {"bin": "A"}), ("transfer", {"source": "A", "target": "B", "qty": 3})]
    assert env.bins == {"A": 2, "B": 3}
    assert trajectory.final_answer == "Moved 3 units." and trajectory.stop_reason == "answer"
    assert trajectory.step_count == 2
    assert [c.call_index for c in trajectory.tool_calls] == [0, 1]
    assert ledger.by_role["agent"].calls == 2 and set(ledger.by_role) == {"agent"}
    last = server.requests[-1]
    assert [m["role"] for m in last["messages"]] == ["system", "user", "assistant", "tool", "tool"]
    assert json.loads(last["messages"][3]["content"]) == {"bin": "A", "qty": 5}
    assert last["messages"][3]["tool_call_id"] == last["messages"][2]["tool_calls"][0]["id"]
    assert last["temperature"] == 0.0 and last["tools"] == [spec.schema() for spec in TOOLS]
    assert "[Agent Action]: Call tool `read_bin`" in trajectory.render()


def test_system_prompt_has_scenario_date_and_plan_only_when_asked() -> None:
    with scripted("done") as server:
        play(server, Stock())
        play(server, Stock(), with_plan=True)
    plain, planned = (r["messages"][0]["content"] for r in server.requests)
    assert '"Stock Transfer"' in plain and "2026-01-15" in plain and "Read A, then move." not in plain
    assert "Read A, then move." in planned
    assert server.requests[0]["messages"][1] == {"role": "user", "content": TASK.instruction}


def test_bad_arguments_and_unknown_tools_get_structured_errors_without_touching_the_world() -> None:
    env = Stock()
    with scripted([("read_bin", "{bin: A"), ("read_bin", "[1]"), ("teleport", {"x": 1}), ("read_bin", '{"bin": NaN}'),
                   ("read_bin", {"bin": 7}), ("read_bin", {"bin": "B"})], "gave up") as server:
        trajectory = play(server, env)
    text, array, unknown, nan, wrong_type, good = trajectory.tool_calls
    assert text.observation["error"] == "invalid_arguments" and "not valid JSON" in text.observation["message"]
    assert array.observation["error"] == "invalid_arguments" and "not a JSON object" in array.observation["message"]
    assert unknown.observation["error"] == "unknown_tool" and "read_bin, transfer" in unknown.observation["message"]
    assert nan.observation["error"] == "invalid_arguments"
    # Rejected by the agent loop: never reached the environment, so no call index (fault windows count env calls).
    assert [c.call_index for c in (text, array, unknown, nan)] == [None] * 4
    # Rejected by the environment's contract: a call it received, though the world never ran it.
    assert wrong_type.observation == {"error": "invalid_arguments", "message": "bin: 7 is not of type 'string'"}
    assert (wrong_type.call_index, good.call_index) == (0, 1)
    assert env.calls == [("read_bin", {"bin": "B"})]
    assert all(set(c.observation) == {"error", "message"} for c in trajectory.tool_calls[:-1])
    tool_messages = [m for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert json.loads(tool_messages[2]["content"])["error"] == "unknown_tool"


def test_max_steps_stops_a_looping_agent() -> None:
    with scripted(*[[("read_bin", {"bin": "A"})]] * 5) as server:
        trajectory = play(server, Stock(), max_steps=3)
    assert trajectory.stop_reason == "max_steps" and trajectory.step_count == 3
    assert server.stats.requests == 3


def test_history_window_sends_only_the_last_turns_and_changes_the_config_hash(small_data: Path, tmp_path: Path
                                                                              ) -> None:
    hashes = []
    for window in ([], ["--history-window", "1"]):
        with MockLLMServer() as server:
            assert cli(["run", "--agent-model", "a", "--world-model", "w", "--base-url", server.base_url,
                        "--api-key", "k", "--data-dir", str(small_data), "--output-dir", str(tmp_path / str(window)),
                        "--task-ids", "1", *window]) == 0
            requests = agent_requests(server)
        assisted = [sum(m["role"] == "assistant" for m in r["messages"]) for r in requests]
        assert max(assisted) == (1 if window else len(requests) - 1) and len(requests) >= 3
        assert all(r["messages"][1]["role"] == "user" for r in requests)  # the task is always there
        (record,) = read_results(run_folder(tmp_path / str(window), "a__w__E0") / "results.jsonl")
        assert record["step_count"] == len(requests)  # the recorded conversation is whole
        hashes.append(record["config_hash"])
    assert hashes[0] != hashes[1]
