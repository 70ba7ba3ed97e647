"""``--agent command:...``: a program of the user's own plays each episode over MCP, and is judged as the built-in
loop is."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from occubench.cli import main as cli_main
from occubench.core.results import Result
from occubench.store import ResultStore
from occubench.testing import MockLLMServer
from tests.mcp.test_episodes import EXAMPLE

#: A program that makes one call over MCP, complains and exits 3 without an answer.
CRASHES = """
import asyncio, sys
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

async def main():
    async with Client(streamable_http_client(sys.argv[1])) as client:
        tool = (await client.list_tools()).tools[0]
        await client.call_tool(tool.name, {})
    print("boom: out of ideas", file=sys.stderr)
    sys.exit(3)

asyncio.run(main())
"""


def command(*argv: str) -> str:
    return "command:" + shlex.join(argv)


def run(tmp_path: Path, server: MockLLMServer, name: str, *args: str,
        key: str | None = "k") -> tuple[int, dict[tuple[object, int], Result]]:
    keys = ["--api-key", key] if key else []  # without one, the run's key is $OPENAI_API_KEY
    code = cli_main(["run", "--suite", "executable", "--base-url", server.base_url, *keys,
                     "--output-dir", str(tmp_path), "--run-name", name, *args])
    return code, {result.key: result for result in ResultStore(tmp_path / name).load()}


@pytest.mark.slow
def test_the_example_agent_as_a_command_reaches_the_native_loops_verdicts(
        tmp_path: Path, server: MockLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)  # the program's own model: the same mock
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    flags = ["--agent-model", "scripted", "--with-plan", "--max-concurrency", "4"]
    example = command(sys.executable, str(EXAMPLE), "{mcp_url}", "{instruction_file}", "--model", "{model}")
    native_code, native = run(tmp_path, server, "native", *flags)
    code, outside = run(tmp_path, server, "command", *flags, "--agent", example)

    assert code == native_code == 0 and outside.keys() == native.keys() and len(outside) >= 20
    for key, result in outside.items():
        twin = native[key]
        assert result.ok and result.agent_model == "command:scripted"
        assert (result.is_correct, result.verdict_details.get("checks")) == \
            (twin.is_correct, twin.verdict_details.get("checks"))
        assert [(c.name, c.arguments, c.observation) for c in result.tool_calls] == \
            [(c.name, c.arguments, c.observation) for c in twin.tool_calls]
        assert result.agent_output["exit_code"] == 0 and "{" not in result.agent_output["command"]
    assert any(r.tool_calls for r in outside.values())


def test_a_program_that_exits_without_an_answer_is_an_agent_error_with_its_output_kept(
        tmp_path: Path, server: MockLLMServer) -> None:
    (tmp_path / "crashes.py").write_text(CRASHES)
    code, results = run(tmp_path, server, "crash", "--limit", "1",
                        "--agent", command(sys.executable, str(tmp_path / "crashes.py"), "{mcp_url}"))
    [result] = results.values()
    assert code == 1 and result.status == "error" and result.error is not None and result.error.kind == "agent"
    assert result.is_correct is None and len(result.tool_calls) == 1
    assert result.agent_output["exit_code"] == 3 and "boom: out of ideas" in result.agent_output["stderr"]
    assert "boom" in result.error.message


def test_a_program_that_prints_its_answer_or_runs_out_of_time_is_judged_on_what_it_did(
        tmp_path: Path, server: MockLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-outside-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)  # the run's key, which the program inherits and prints
    monkeypatch.setenv("OCCUBENCH_SERVE_TOKEN", "a-token-for-remote-clients")  # not asked of a local program
    prints = "import os, sys; print(open(sys.argv[1]).read()[:20]); print(os.environ['OPENAI_API_KEY'], " \
        "file=sys.stderr)"
    code, printed = run(tmp_path, server, "printed", "--limit", "1", "--agent",
                        command(sys.executable, "-c", prints, "{instruction_file}"), key=None)
    [result] = printed.values()
    assert code == 0 and result.ok and result.stop_reason == "answer" and result.final_answer
    assert result.final_answer == result.agent_output["stdout"].strip()
    assert result.agent_output["stderr"].strip() and secret not in (tmp_path / "printed" / "results.jsonl").read_text()

    code, slow = run(tmp_path, server, "slow", "--limit", "1", "--max-seconds-per-task", "0.5",
                     "--agent", command(sys.executable, "-c", "import time; time.sleep(600)"))
    [result] = slow.values()
    assert code == 0 and result.ok and result.stop_reason == "max_seconds_per_task"
    assert result.agent_output["exit_code"] == -9  # stopped, and its whole process group with it


@pytest.mark.parametrize(("agent", "message"), [
    ("command:", "no program given"),
    ("command:python {url}", "unknown placeholder {url}"),
    ("command:'unclosed", "cannot split"),
    ("command:/no/such/program {mcp_url}", "no program '/no/such/program'"),
])
def test_a_bad_command_stops_the_run_before_it_starts(agent: str, message: str, tmp_path: Path,
                                                      server: MockLLMServer,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, results = run(tmp_path, server, "bad", "--limit", "1", "--agent", agent)
    assert code == 2 and not results and not (tmp_path / "bad").exists()
    assert message in capsys.readouterr().err
