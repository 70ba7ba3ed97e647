"""Token-exact rollouts (``--record-tokens``): each agent turn keeps the token ids and logprobs the endpoint sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from occubench import Result, RunConfig, Step, run
from occubench.cli import main
from occubench.engine.rollouts import rollout_rows
from occubench.llm import LLMClient
from occubench.llm.types import Tokens
from occubench.store import ResultStore
from occubench.testing import MockLLMServer
from occubench.testing.chat import prompt_token_ids, token_ids, token_logprobs
from tests.conftest import extra_reason

QUIET = Console(quiet=True)


def _agent_requests(server: MockLLMServer) -> list[dict]:
    return [r for r in server.requests if r.get("tools")]


def test_each_agent_turn_keeps_the_tokens_the_server_sent(small_data: Path, tmp_path: Path) -> None:
    with MockLLMServer() as server:
        summary = run(RunConfig(agent_model="agent-m", world_model="world-m", base_url=server.base_url,
                                data_dir=str(small_data), output_dir=str(tmp_path), record_tokens=True,
                                skip_preflight=True, max_concurrency=1), console=QUIET)
        asked = _agent_requests(server)
    steps = [step for result in summary.results for step in result.steps]
    assert steps and len(steps) == len(asked)
    for request, step in zip(asked, steps):  # one episode at a time: turns in the order they were asked
        assert step.tokens is not None
        assert step.tokens["prompt_ids"] == prompt_token_ids(request["messages"])
        turn = " ".join([step.content or "", *(f"{c.name} {c.arguments}" for c in step.tool_calls)])
        assert step.tokens["completion_ids"] == token_ids(turn)
        assert step.tokens["logprobs"] == token_logprobs(turn)
        assert step.tokens["params"]["logprobs"] is True and request["return_token_ids"] is True
    # and as the results file holds them
    saved = [json.loads(line) for path in tmp_path.glob("*/results.jsonl") for line in path.read_text().splitlines()]
    assert [s["tokens"] for r in saved for s in r["steps"]] == [step.tokens for step in steps]


def test_without_the_flag_nothing_is_asked_or_kept(small_data: Path, tmp_path: Path) -> None:
    with MockLLMServer() as server:
        summary = run(RunConfig(agent_model="agent-m", world_model="world-m", base_url=server.base_url,
                                data_dir=str(small_data), output_dir=str(tmp_path), skip_preflight=True), console=QUIET)
        asked = _agent_requests(server)
    assert not any("logprobs" in r or "return_token_ids" in r for r in asked)
    assert all(step.tokens is None for result in summary.results for step in result.steps)


def test_an_endpoint_that_refuses_token_ids_is_asked_for_logprobs_alone() -> None:
    with MockLLMServer(lambda request, index: "ok", refuse_token_ids=True) as server:
        client = LLMClient("k", server.base_url)
        reply = client.chat("m", [{"role": "user", "content": "hi"}],
                            params={"logprobs": True, "return_token_ids": True}).replies[0]
    assert reply.tokens == Tokens(None, None, tuple(token_logprobs("ok")))


def test_hostile_token_lists_are_left_out_not_kept_half_right() -> None:
    assert Tokens.read({"prompt_ids": [1, -2], "completion_ids": [3, True], "logprobs": [0.5, float("nan")]}) is None
    assert Tokens.read({"prompt_ids": [1, 2], "logprobs": "x"}) == Tokens((1, 2), None, None)
    assert Tokens.read("not a dict") is None


def test_the_exported_dataset_masks_exactly_the_models_own_tokens(small_data: Path, tmp_path: Path) -> None:
    with MockLLMServer() as server:
        summary = run(RunConfig(agent_model="agent-m", world_model="world-m", base_url=server.base_url,
                                data_dir=str(small_data), output_dir=str(tmp_path / "runs"), record_tokens=True,
                                skip_preflight=True), console=QUIET)
    out = tmp_path / "rollouts.jsonl"
    assert main(["export", str(summary.run_dir), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    by_episode = {(r.task_id, r.trial): r for r in summary.results}
    assert len(rows) == len(by_episode) and all(row["turn"] is None for row in rows)  # the prompts extend: a row each
    for row in rows:
        result = by_episode[(row["task_id"], row["trial"])]
        turns = [step.tokens for step in result.steps if step.tokens]
        own = [token for turn in turns for token in turn["completion_ids"]]
        assert [token for token, mask in zip(row["input_ids"], row["mask"]) if mask] == own
        assert row["input_ids"][:len(turns[-1]["prompt_ids"])] == turns[-1]["prompt_ids"]  # the last prompt, whole
        assert len(row["input_ids"]) == len(turns[-1]["prompt_ids"]) + len(turns[-1]["completion_ids"])
        assert [lp for lp, mask in zip(row["logprobs"], row["mask"]) if mask] == \
            [lp for turn in turns for lp in turn["logprobs"]]
        assert all(lp is None for lp, mask in zip(row["logprobs"], row["mask"]) if not mask)
        assert row["reward"] == (1.0 if result.is_correct else 0.0)


def test_turns_whose_prompts_do_not_extend_are_rows_of_their_own() -> None:
    first = {"prompt_ids": [1, 2], "completion_ids": [3], "logprobs": [-0.5]}
    rewritten = {"prompt_ids": [1, 9, 3, 4], "completion_ids": [5, 6], "logprobs": None}  # an earlier token changed
    result = Result(task_id="t", trial=0, is_correct=True, steps=[Step("a", tokens=first), Step("b", tokens=rewritten)])
    rows = list(rollout_rows(result))
    assert [(r["turn"], r["input_ids"], r["mask"]) for r in rows] == [(0, [1, 2, 3], [0, 0, 1]),
                                                                     (1, [1, 9, 3, 4, 5, 6], [0, 0, 0, 0, 1, 1])]
    assert rows[1]["logprobs"] == [None] * 6  # none returned: none made up


def test_exporting_a_folder_that_is_not_a_run_is_bad_input(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(tmp_path), "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "not a run directory" in capsys.readouterr().err and not (tmp_path / "x.jsonl").exists()


def test_the_dataset_as_a_parquet_table_holds_the_same_rows(tmp_path: Path) -> None:
    pyarrow_parquet = pytest.importorskip("pyarrow.parquet", reason=extra_reason("parquet"))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    steps = [Step("a", tokens={"prompt_ids": [1, 2], "completion_ids": [3], "logprobs": [-0.5]})]
    ResultStore(run_dir).append(Result(task_id=7, trial=0, is_correct=True, steps=steps))
    assert main(["export", str(run_dir), "--out", str(tmp_path / "r.jsonl")]) == 0
    assert main(["export", str(run_dir), "--out", str(tmp_path / "r.parquet")]) == 0
    rows = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    table = pyarrow_parquet.read_table(tmp_path / "r.parquet").to_pylist()
    assert table == [{**row, "task_id": str(row["task_id"])} for row in rows]
    assert table[0]["input_ids"] == [1, 2, 3] and table[0]["mask"] == [0, 0, 1] and table[0]["reward"] == 1.0
