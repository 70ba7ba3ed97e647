"""Images in observations: a tool returns one, the built-in agent sends it to a model that takes images as image
content (the mock server checks the request as OpenAI does) and its text to one that does not; what is recorded
holds no image data and says how each image was delivered."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from occubench.cli import main as cli
from occubench.core.agent import ScriptedAgent, ToolCallingAgent
from occubench.core.environment import Environment, JSONObject
from occubench.core.images import KEY, MAX_IMAGE_BYTES, Image, deliver
from occubench.core.suite import Suite, SuiteDefinition, SuitePlan
from occubench.core.task import Task
from occubench.core.tools import ToolSpec
from occubench.core.trajectory import Trajectory
from occubench.core.verifier import Verdict
from occubench.llm import LLMClient, Model
from occubench.store import read_results
from occubench.testing import MockLLMServer
from tests.conftest import agent_requests, run_folder

#: A 1×1 PNG.
PNG_TEXT = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
PNG = base64.b64decode(PNG_TEXT)
SHOWS = "Sales by month: January 3, February 7."
#: What each tool returns: an image, one nested in a result, bytes that claim to be a PNG, one over the size limit.
RESULTS: dict[str, Any] = {
    "chart": Image("image/png", PNG, SHOWS),
    "report": {"title": "Q1", "figures": [Image("image/png", PNG, SHOWS)]},
    "scan": Image("image/png", b"%PDF-1.7 not an image", "A scanned invoice for 120 EUR."),
    "photo": Image("image/jpeg", b"\xff\xd8\xff" + bytes(MAX_IMAGE_BYTES), "A photo of the warehouse."),
}
TASK = Task(task_id="q1", instruction="Read the Q1 sales chart.", scenario="Sales", category="Biz", domain="Sales",
            difficulty=1, env_name="charts")


class Charts(Environment):
    def __init__(self, *names: str) -> None:
        self.names = names or ("chart", "scan")

    def tools(self) -> list[ToolSpec]:
        return [ToolSpec(name, f"Show the {name}.", {"type": "object", "properties": {}}, False)
                for name in self.names]

    def _call(self, name: str, arguments: JSONObject) -> Any:
        return RESULTS[name]


class ChartSuite(Suite):
    def tasks(self) -> list[Task]:
        return [TASK]

    def world(self, task: Task) -> Environment:
        return Charts()

    def verify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        return Verdict(is_correct=bool(trajectory.final_answer), feedback="answered")


SUITE = SuiteDefinition(name="charts", description="a world whose tools show images", plan=lambda config, console:
                        SuitePlan(ChartSuite().tasks(), {}, lambda models, rules: ChartSuite(), world_label=None,
                                  simulated=False))


def record(delivered_as: str, data: bytes = PNG, **more: Any) -> dict[str, Any]:
    return {KEY: {"delivered_as": delivered_as, "media_type": "image/png", "bytes": len(data),
                  "sha256": hashlib.sha256(data).hexdigest(), **more}}


def play(turns: list[Any], *names: str, **options: Any) -> tuple[Trajectory, MockLLMServer]:
    """``turns`` played by the built-in agent against :class:`Charts`: each a list of tools to call, or the answer."""
    def responder(request: dict, index: int) -> Any:
        turn = turns[sum(m["role"] == "assistant" for m in request["messages"])]
        return turn if isinstance(turn, str) else {"content": None,
                                                    "tool_calls": [{"name": n, "arguments": {}} for n in turn]}

    trajectory = Trajectory()
    with MockLLMServer(responder) as server:
        model = Model(LLMClient("k", server.base_url), "agent-model", {}, role="agent")
        ToolCallingAgent(model, date="2026-01-15", **options).run(TASK, Charts(*names), trajectory)
    return trajectory, server


def test_a_tool_returns_an_image_in_the_reserved_shape_that_delivery_turns_into_a_record() -> None:
    wire = Charts("chart").call("chart", {})
    assert wire == {"result": {KEY: {"media_type": "image/png", "bytes": len(PNG),
                                     "sha256": hashlib.sha256(PNG).hexdigest(), "text": SHOWS, "data": PNG_TEXT}}}
    assert deliver(wire, True) == ({"result": record("image")}, [Image("image/png", PNG, SHOWS)])
    assert deliver(wire, False) == ({"result": record("text", text=SHOWS)}, [])
    nested = Charts("report").call("report", {})
    assert deliver(nested, True)[0] == {"title": "Q1", "figures": [record("image")]}


def test_the_model_that_takes_images_gets_image_content_after_the_tool_results() -> None:
    trajectory, server = play([["chart", "report"], "January 3, February 7."], "chart", "report", images=True)
    sent = server.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert json.loads(sent[3]["content"]) == {"result": record("image")}
    assert json.loads(sent[4]["content"]) == {"title": "Q1", "figures": [record("image")]}
    first, second = (call["id"] for call in sent[2]["tool_calls"])
    assert sent[5]["content"] == [
        {"type": "text", "text": f"The image chart returned (call {first}):"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_TEXT}"}},
        {"type": "text", "text": f"The image report returned (call {second}):"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_TEXT}"}}]
    # The recorded conversation and steps name the image by its digest; they hold no image data.
    assert trajectory.messages[3]["content"][1] == {
        "type": "image_url", "image_url": {"url": f"sha256:{hashlib.sha256(PNG).hexdigest()}"}}
    assert PNG_TEXT not in json.dumps([trajectory.messages, trajectory.to_steps_json(), trajectory.render()])
    assert [call.observation for call in trajectory.tool_calls] == [
        {"result": record("image")}, {"title": "Q1", "figures": [record("image")]}]


def test_a_model_that_takes_no_images_gets_their_text_in_the_observation() -> None:
    trajectory, server = play([["chart"], "January 3, February 7."])
    sent = server.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert json.loads(sent[3]["content"]) == {"result": record("text", text=SHOWS)}
    assert all(isinstance(m["content"], str) for m in sent) and PNG_TEXT not in json.dumps(sent)
    assert trajectory.tool_calls[0].observation == {"result": record("text", text=SHOWS)}


@pytest.mark.parametrize("images", [True, False])
def test_bytes_that_are_not_their_image_type_and_a_huge_image_are_delivered_as_their_text(images: bool) -> None:
    trajectory, server = play([["scan", "photo"], "done"], "scan", "photo", images=images)
    scan, photo = (call.observation["result"][KEY] for call in trajectory.tool_calls)
    assert scan["delivered_as"] == photo["delivered_as"] == "text"
    assert scan["text"] == "A scanned invoice for 120 EUR." and "not of type image/png" in scan["note"]
    assert photo["bytes"] == MAX_IMAGE_BYTES + 3 and photo["sha256"] == hashlib.sha256(
        RESULTS["photo"].data).hexdigest()
    assert f"over the limit of {MAX_IMAGE_BYTES:,}" in photo["note"]
    assert [m["role"] for m in server.requests[-1]["messages"]] == ["system", "user", "assistant", "tool", "tool"]
    assert trajectory.stop_reason == "answer"


@pytest.mark.parametrize("entry, note", [
    ({"media_type": "image/png", "data": "not base64!", "text": "t"}, "not base64"),
    ({"media_type": "image/svg+xml", "data": base64.b64encode(b"<svg/>").decode(), "text": "t"}, "image type"),
    ({"media_type": "image/gif", "data": PNG_TEXT, "text": "t"}, "not of type image/gif"),
    ({"media_type": "image/png", "data": 7, "text": ["t"]}, "no data"),
    ({"media_type": "image/png", "data": "A" * (MAX_IMAGE_BYTES * 2), "text": "t"}, "larger than any image"),
    ({"media_type": None, "bytes": True, "sha256": "../x"}, "no data"),
])
def test_a_worlds_forged_image_shape_is_delivered_as_its_text_with_a_note(entry: dict[str, Any], note: str) -> None:
    # What a simulator or a sandbox worker sends is JSON from outside: checked again where it is delivered.
    observation, images = deliver({"rows": [{KEY: entry}]}, True)
    (shown,) = observation["rows"]
    assert images == [] and shown[KEY]["delivered_as"] == "text" and note in shown[KEY]["note"]
    assert "data" not in shown[KEY] and set(shown[KEY]) <= {"delivered_as", "media_type", "bytes", "sha256", "text",
                                                             "note"}


def test_a_tool_that_returns_a_broken_image_gets_a_tool_failure_not_a_crash() -> None:
    class Broken(Charts):
        def _call(self, name: str, arguments: JSONObject) -> Any:
            return Image("image/png", "not bytes", SHOWS)  # type: ignore[arg-type]

    observation = Broken("chart").call("chart", {})
    assert observation["error"] == "tool_failed" and "TypeError" in observation["message"]


def test_the_history_window_keeps_each_turns_images_with_it() -> None:
    _, server = play([["chart"], ["report"], "done"], "chart", "report", images=True, history_window=1)
    sent = server.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "user"]
    assert sent[4]["content"][0]["text"].startswith("The image report returned")


def test_a_scripted_agent_records_the_text_of_images() -> None:
    trajectory = Trajectory()
    ScriptedAgent(lambda task: ([("chart", {})], "done")).run(TASK, Charts("chart"), trajectory)
    assert trajectory.tool_calls[0].observation == {"result": record("text", text=SHOWS)}


def test_a_run_with_agent_images_records_the_delivery_and_keeps_its_own_identity(tmp_path: Path) -> None:
    hashes = []
    for flag in ([], ["--agent-images"]):
        with MockLLMServer() as server:
            assert cli(["run", "--suite", "tests.core.test_images:SUITE", "--agent-model", "a", "--base-url",
                        server.base_url, "--api-key", "k", "--output-dir", str(tmp_path / str(flag)), *flag]) == 0
            requests = agent_requests(server)
        folder = run_folder(tmp_path / str(flag), "a__charts__E0")
        text = (folder / "results.jsonl").read_text()
        assert PNG_TEXT not in text
        (result,) = read_results(folder / "results.jsonl")
        chart, scan = (call["observation"]["result"][KEY] for step in result["steps"] for call in step["tool_calls"])
        assert chart["delivered_as"] == ("image" if flag else "text") and scan["delivered_as"] == "text"
        parts = [part for request in requests for m in request["messages"] if isinstance(m["content"], list)
                 for part in m["content"] if part["type"] == "image_url"]
        # Sent from the turn after the call on, with the rest of the conversation.
        assert len(requests) == 3 and parts == (
            [{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_TEXT}"}}] * 2 if flag else [])
        assert json.loads((folder / "args.json").read_text()).get("agent_images", False) == bool(flag)
        hashes.append(result["config_hash"])
    assert hashes[0] != hashes[1]
