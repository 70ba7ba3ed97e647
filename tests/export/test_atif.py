"""ATIF export (``occubench export --format atif``) and read-back (``occubench view`` of the files): runs made
against the mock server exported and validated by Harbor's own schema (``harbor.models.trajectories`` in the harbor
peer, see .ci/peers/harbor.sh), read back into the same steps, and hostile values exported as strict JSON."""

from __future__ import annotations

import http.client
import json
import subprocess
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from occubench.cli import main
from occubench.core.results import Result
from occubench.core.trajectory import Step, ToolCall
from occubench.engine.summary import Price
from occubench.errors import ConfigError
from occubench.export.atif import SUFFIX, from_atif, load_atif, to_atif
from occubench.llm.types import Usage
from occubench.report.live import view_server
from occubench.store import RESULTS_FILE, read_context, read_results
from occubench.testing import MockLLMServer
from tests.conftest import peer

TASKS = ["--task-ids", "clinic_scheduling/book_urgent_cardiology", "insurance_claims/pay_water_claim"]
#: Validates each trajectory file named on its command line with Harbor's models; prints what they hold.
VALIDATE = """
import json, sys
from harbor.models.trajectories import Trajectory
for path in sys.argv[1:]:
    t = Trajectory.model_validate_json(open(path, encoding="utf-8").read())
    print(json.dumps({"id": t.trajectory_id, "sources": [s.source for s in t.steps],
                      "calls": [c.function_name for s in t.steps for c in s.tool_calls or []],
                      "reward": (t.extra or {}).get("reward"), "total_steps": t.final_metrics.total_steps,
                      "cost": t.final_metrics.total_cost_usd,
                      "completion_ids": [s.metrics.completion_token_ids for s in t.steps if s.metrics],
                      "logprobs": [s.metrics.logprobs for s in t.steps if s.metrics]}))
"""


def _run(server: MockLLMServer, out: Path, name: str, *flags: str) -> Path:
    assert main(["run", "--suite", "executable", *flags, "--verifier-model", "judge", "--base-url",
                 server.base_url, "--api-key", "k", *TASKS, "--output-dir", str(out), "--run-name", name]) == 0
    return out / name


def _results(run: Path) -> dict[str, Result]:
    return {f"{r['task_id']}/trial-{r['trial']}": Result.from_dict(r) for r in read_results(run / RESULTS_FILE)}


def _harbor(files: list[Path]) -> dict[str, dict[str, Any]]:
    """What Harbor's schema read in each file, by trajectory id; fails unless every file validates."""
    python = peer("harbor") / "bin" / "python"
    done = subprocess.run([str(python), "-c", VALIDATE, *map(str, files)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return {entry["id"]: entry for entry in map(json.loads, done.stdout.splitlines())}


def _export(run: Path, out: Path, *flags: str) -> None:
    assert main(["export", str(run), "--format", "atif", "--out", str(out), *flags]) == 0


def test_a_run_exports_as_trajectories_harbor_validates(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"mock": {"input": 2.0, "output": 8.0}}), encoding="utf-8")
    with MockLLMServer() as server:
        model = _run(server, tmp_path / "runs", "model", "--agent-model", "mock", "--record-tokens")
        scripted = _run(server, tmp_path / "runs", "scripted", "--agent", "reference")
    _export(model, tmp_path / "model", "--prices", str(prices))
    _export(scripted, tmp_path / "scripted")
    rewards = set()
    for run, folder in ((model, tmp_path / "model"), (scripted, tmp_path / "scripted")):
        files = sorted(folder.iterdir())
        assert len(files) == 2 and all(file.name.endswith(SUFFIX) for file in files)
        read = _harbor(files)
        for trajectory_id, result in _results(run).items():
            got = read[trajectory_id]
            # A scripted agent has no system prompt, and its final answer is one more agent step.
            opening = ["system", "user"] if run == model else ["user"]
            answer = result.steps[-1].content != result.final_answer
            assert got["sources"] == opening + ["agent"] * (len(result.steps) + answer)
            assert got["total_steps"] == len(got["sources"])
            assert got["calls"] == [call.name for call in result.tool_calls] and got["calls"]
            assert got["reward"] == (1.0 if result.is_correct else 0.0)
            rewards.add(got["reward"])
            if run == model:  # the tokens --record-tokens kept, and the agent's cost at the given prices
                assert got["completion_ids"] == [step.tokens["completion_ids"] for step in result.steps]
                assert got["logprobs"] == [step.tokens["logprobs"] for step in result.steps]
                assert got["cost"] == pytest.approx(Price(2.0, 8.0).cost(result.usage["agent"]))
            else:
                assert got["completion_ids"] == [] and got["cost"] is None
    assert rewards == {0.0, 1.0}  # the reference solutions pass, the mock agent fails


def _get(url: str, path: str) -> Any:
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    connection.request("GET", path)
    response = connection.getresponse()
    assert response.status == 200
    return json.loads(response.read())


def test_the_viewer_reads_an_exported_folder_and_file_back_into_the_same_steps(tmp_path: Path) -> None:
    with MockLLMServer() as server:
        run = _run(server, tmp_path / "runs", "model", "--agent-model", "mock", "--record-tokens")
    _export(run, tmp_path / "atif")
    originals = _results(run)
    back, context = load_atif(tmp_path / "atif")
    assert len(back) == len(originals) == 2
    for result in back:
        original = originals[f"{result.task_id}/trial-{result.trial}"]
        assert [asdict(step) for step in result.steps] == [asdict(step) for step in original.steps]
        assert (result.final_answer, result.is_correct, result.usage, result.verdict_details, result.trajectory) == (
            original.final_answer, original.is_correct, original.usage, original.verdict_details,
            original.trajectory)
        shown = read_context(run)
        assert {kind: context[key] for kind, key in result.context.items()} == {
            kind: shown[original.context[kind]] for kind in ("system_prompt", "instruction", "tools")}
    one = next((tmp_path / "atif").iterdir())
    server = view_server([tmp_path / "atif", one])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        state = _get(server.url, "/api/state")
        assert [(r["results"], r["error"]) for r in state["runs"]] == [(2, None), (1, None)]
        for index, task_id in ((0, back[0].task_id), (1, json.loads(one.read_text())["extra"]["occubench"]["task_id"])):
            shown = _get(server.url, f"/api/result?run={index}&task={quote(str(task_id))}&trial=0")
            assert shown["steps"] == [asdict(step) for step in originals[f"{task_id}/trial-0"].steps]
            assert set(shown["context"]) == {"system_prompt", "instruction", "tools"}
            assert shown["context"]["tools"][0]["type"] == "function"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _hostile() -> Result:
    """An episode holding what models and tools hand back: lone surrogates, megabytes of text, NaN and infinities,
    arguments that are not JSON (or not an object), tokens with NaN logprobs, nesting past any limit."""
    deep: Any = "bottom"
    for _ in range(300):
        deep = [deep]
    huge = "x" * 3_000_000
    observation = {"out": huge, "nan": float("nan"), "\udfff": [float("inf")]}
    calls = [ToolCall("look\ud800up", '{"q": "\\ud800"}', observation, 0), ToolCall("bad", "[1, 2", {}, None),
             ToolCall("list", "[1]", {}, 1)]
    return Result(task_id="t/\udc80", agent_model="m\ud800", is_correct=True, duration_s=float("nan"),
                  final_answer="done \ud800" + huge, verdict_details={"deep": deep},
                  steps=[Step("thinking \ud800", calls,
                              tokens={"prompt_ids": [1, 2], "completion_ids": [3], "logprobs": [float("nan")],
                                      "params": {"temperature": float("inf")}})],
                  usage={"agent": Usage(prompt_tokens=10, completion_tokens=5)})


def test_hostile_values_export_as_strict_json_and_read_back(tmp_path: Path) -> None:
    context = {"system_prompt": "\ud800", "instruction": ["not", "text"], "tools": [{"n": float("nan")}, "no"]}
    trajectory = to_atif(_hostile(), context, prices={"m\ud800": Price(1.0, 1.0)})
    text = json.dumps(trajectory, ensure_ascii=False, allow_nan=False)  # strict JSON, encodable as UTF-8
    (tmp_path / f"hostile{SUFFIX}").write_bytes(text.encode("utf-8"))
    assert trajectory["extra"]["reward"] == 1.0  # the verdict is unchanged
    agent = trajectory["steps"][2]
    assert [call["arguments"] for call in agent["tool_calls"]] == [{"q": "\ufffd"}, {}, {}]
    assert [call["extra"].get("arguments_text") for call in agent["tool_calls"]] == [
        '{"q": "\\ud800"}', "[1, 2", "[1]"]
    assert "logprobs" not in agent["metrics"] and agent["metrics"]["completion_token_ids"] == [3]
    assert len(trajectory["steps"]) == 4  # the final answer is not the last turn's text
    back, _ = load_atif(tmp_path)
    assert [call.name for call in back[0].tool_calls] == ["look\ufffdup", "bad", "list"]
    assert [call.arguments for call in back[0].tool_calls] == ['{"q": "\\ud800"}', "[1, 2", "[1]"]
    assert back[0].passed and len(back[0].steps) == 1


def test_a_hostile_trajectory_is_valid_atif(tmp_path: Path) -> None:
    path = tmp_path / f"hostile{SUFFIX}"
    path.write_text(json.dumps(to_atif(_hostile(), prices={"m\ud800": Price(1.0, 1.0)}), ensure_ascii=False,
                               allow_nan=False), encoding="utf-8")
    assert _harbor([path])["t/\ufffd/trial-0"]["calls"] == ["look\ufffdup", "bad", "list"]


#: Makes a trajectory with Harbor's models, as a Harbor agent writes one, into the file named by its argument.
HARBOR_MADE = """
import json, sys
from harbor.models.trajectories import Agent, Metrics, Observation, ObservationResult, Step, ToolCall, Trajectory
calls = [ToolCall(tool_call_id="c1", function_name="bash", arguments={"cmd": "ls"})]
seen = Observation(results=[ObservationResult(source_call_id="c1", content="a.txt\\nb.txt")])
trajectory = Trajectory(session_id="s1", agent=Agent(name="terminus", version="2", model_name="gpt-x"), steps=[
    Step(step_id=1, source="user", message="List the files."),
    Step(step_id=2, source="agent", message="Listing.", tool_calls=calls, observation=seen,
         metrics=Metrics(prompt_tokens=4, completion_tokens=3, completion_token_ids=[5, 6, 7],
                         logprobs=[-0.1, -0.2, -0.3])),
    Step(step_id=3, source="agent", message="Two files.")], extra={"reward": 1.0})
open(sys.argv[1], "w", encoding="utf-8").write(json.dumps(trajectory.to_json_dict()))
"""


def test_a_trajectory_harbor_made_is_read(tmp_path: Path) -> None:
    path = tmp_path / "trajectory.json"
    done = subprocess.run([str(peer("harbor") / "bin" / "python"), "-c", HARBOR_MADE, str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (result,), context = load_atif(path)
    assert (result.task_id, result.agent_model, result.passed, result.final_answer) == ("s1", "gpt-x", True,
                                                                                        "Two files.")
    assert [asdict(step) for step in result.steps] == [
        {"content": "Listing.", "tool_calls": [{"name": "bash", "arguments": '{"cmd": "ls"}',
                                                 "observation": {"content": "a.txt\nb.txt"}, "call_index": 0}],
         "tokens": {"prompt_ids": None, "completion_ids": [5, 6, 7], "logprobs": [-0.1, -0.2, -0.3]}},
        {"content": "Two files.", "tool_calls": [], "tokens": None}]
    assert context[result.context["instruction"]] == "List the files." and "system_prompt" not in result.context


def test_what_is_not_a_trajectory_is_refused_naming_the_file(tmp_path: Path) -> None:
    for value in ([], "text", {"steps": "none"}, {"agent": {}}):
        with pytest.raises(ValueError, match="not an ATIF trajectory"):
            from_atif(value)
    junk = {"steps": [1, {"source": "agent", "message": [{"type": "image", "source": 3}, 7],
                          "tool_calls": [{"tool_call_id": ["x"], "extra": {"call_index": "2"}}, 5],
                          "observation": {"results": [{"source_call_id": {}}, None]},
                          "metrics": {"prompt_token_ids": [True], "logprobs": ["x"], "extra": []}}],
            "extra": {"occubench": {"task_id": [1], "steps": 5, "is_correct": "yes"}}}
    result = from_atif(junk)
    assert (result.task_id, result.is_correct, len(result.steps)) == ("[1]", None, 1)
    assert result.steps[0].tool_calls[0].call_index is None and result.steps[0].content == "[image: None]"
    folder = tmp_path / "atif"
    folder.mkdir()
    (folder / f"a{SUFFIX}").write_text('{"steps": [], "extra": {}}', encoding="utf-8")
    (folder / f"b{SUFFIX}").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ConfigError, match=f"b{SUFFIX}: not an ATIF trajectory"):
        load_atif(folder)
    server = view_server([folder])
    try:  # the viewer shows the error as the run's, and stays up
        assert f"b{SUFFIX}" in server.view.state()["runs"][0]["error"]
    finally:
        server.server_close()


def test_every_episode_gets_a_file_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    run.mkdir()
    ids: list[Any] = ["a/b", "a_b", "A_B", 1, "1", "..", "x" * 300]
    records = [{"task_id": task_id, "is_correct": True, "final_answer": "done"} for task_id in ids]
    records.append({"task_id": "broken", "status": "error", "error": {"kind": "provider", "message": "down"}})
    (run / RESULTS_FILE).write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    _export(Path("run"), Path("empty"))  # an empty folder is filled
    files = sorted((tmp_path / "empty").iterdir())
    assert len({file.name.lower() for file in files}) == len(records)
    assert all(file.name.endswith(SUFFIX) and len(file.name) < 130 and not file.name.startswith(".")
               for file in files)
    read = _harbor(files)
    assert read["broken/trial-0"]["reward"] is None and read["broken/trial-0"]["sources"] == ["agent"]
    assert {entry["reward"] for key, entry in read.items() if key != "broken/trial-0"} == {1.0}
    assert sorted(map(str, (result.task_id for result in load_atif(tmp_path / "empty")[0]))) == sorted(
        map(str, [*ids, "broken"]))
