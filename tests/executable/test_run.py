"""Executable worlds through the same harness: scripted agents, an LLM agent over a loopback server, harness-mode
faults, the label judge, and MCP serving."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from occubench.cli import run as evaluate
from occubench.core.faults import fault_schedule
from occubench.store import read_results
from occubench.testing import MockLLMServer


def run(tmp_path: Path, *args: str) -> list[dict]:
    assert evaluate.main(["--suite", "executable", "--output-dir", str(tmp_path), "--run-name", "r", *args]) in (0, 1)
    return read_results(tmp_path / "r" / "results.jsonl")


def test_reference_passes_and_noop_fails_everything(tmp_path: Path) -> None:
    reference = run(tmp_path / "a", "--agent", "reference")
    noop = run(tmp_path / "b", "--agent", "noop")
    assert reference and all(r["is_correct"] and r["status"] == "ok" for r in reference)
    assert len(noop) == len(reference) and not any(r["is_correct"] for r in noop)
    record = reference[0]
    assert record["world_model"] is None and record["agent_model"] == "reference" and record["suite"] == "executable"
    details = record["verdict_details"]
    assert details["checks"] and all(c["passed"] for c in details["checks"]) and details["state_diff"]


def test_llm_agent_and_label_judge_over_a_loopback_server(tmp_path: Path) -> None:
    def responder(request: dict, index: int) -> str | dict:
        if request.get("tools"):
            done = sum(m["role"] == "tool" for m in request["messages"])
            if done == 0:
                return {"content": None, "tool_calls": [{"name": "get_claim", "arguments": {"claim_id": "CLM-1004"}}]}
            return "I checked the claim."
        return '<label>{"feedback": "nothing was paid", "label": "incomplete"}</label>'
    with MockLLMServer(responder) as server:
        records = run(tmp_path, "--agent-model", "m", "--verifier-model", "judge", "--base-url", server.base_url,
                      "--task-ids", "insurance_claims/pay_water_claim")
    [record] = records
    assert record["is_correct"] is False and record["verdict_details"]["judge_label"] == "incomplete"
    assert record["steps"][0]["tool_calls"][0]["observation"]["claim_id"] == "CLM-1004"
    assert record["usage"]["verifier"]["calls"] == 1 and record["verifier_model"] == "judge"
    judged = [r["messages"][1]["content"] for r in server.requests if "<label>" in r["messages"][0]["content"]]
    assert judged and "## Code checks on the final database\nFAIL CLM-1004 paid" in judged[0]


def test_a_judge_that_gives_no_label_leaves_the_code_checks_verdict(tmp_path: Path) -> None:
    with MockLLMServer(lambda request, index: "I would rather not label this.") as server:
        records = run(tmp_path, "--agent", "reference", "--verifier-model", "judge", "--base-url", server.base_url,
                      "--task-ids", "insurance_claims/pay_water_claim")
    [record] = records
    assert record["status"] == "ok" and record["is_correct"] is True  # the code checks decide
    details = record["verdict_details"]
    assert "no readable label" in details["judge_error"] and "judge_label" not in details and details["checks"]
    assert record["usage"]["verifier"]["calls"] >= 1  # what the judge cost is still counted


def test_faults_default_to_the_harness_and_prompt_mode_is_refused(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    task = "insurance_claims/review_open_thefts"  # its reference approves at call 3 and denies at call 6
    seed = next(s for s in range(100) if {w.first_call for w in fault_schedule("E1", 3, 1, s, task)} & {3, 6})
    records = run(tmp_path, "--agent", "reference", "--env-mode", "E1", "--fault-count", "3", "--fault-duration", "1",
                  "--seed", str(seed), "--task-ids", task)
    [record] = records
    assert record["fault_mode"] == "harness" and len(record["fault_events"]) == 3
    assert {"approve_claim", "deny_claim"} & {event["tool"] for event in record["fault_events"]}
    assert record["is_correct"] is False  # the failed decision never reached the database; the script moved on
    assert evaluate.main(["--suite", "executable", "--agent", "reference", "--env-mode", "E2", "--fault-mode",
                          "prompt", "--output-dir", str(tmp_path)]) == 2
    assert "--fault-mode prompt needs a simulated world" in capsys.readouterr().err


def test_serve_over_mcp_with_the_sdk_client() -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def session() -> tuple[list[str], dict, dict]:
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "occubench", "serve", "--env", "insurance_claims"])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            tools = (await client.list_tools()).tools
            approved = await client.call_tool("approve_claim", {"claim_id": "CLM-1004", "amount": 7850,
                                                                "reason": "covered"})
            claim = await client.call_tool("get_claim", {"claim_id": "CLM-1004"})
            schema = next(t for t in tools if t.name == "approve_claim").input_schema
            return [t.name for t in tools], json.loads(approved.content[0].text), \
                {"claim": json.loads(claim.content[0].text), "schema": schema}
    names, approved, seen = anyio.run(session)
    assert "get_claim" in names and len(names) == 8
    assert approved["status"] == "approved" and seen["claim"]["status"] == "approved"  # same instance
    assert seen["schema"]["required"] == ["claim_id", "amount", "reason"]
