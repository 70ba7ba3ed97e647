"""Server profiles: found out from the endpoint, applied where the run sets nothing, documented from themselves;
and the README's llama.cpp recipe, as printed, against the mock server behaving as llama-cpp-python's."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from occubench.cli import main as cli
from occubench.llm.servers import PROFILES, detect, profile_table
from occubench.store import ARGS_FILE, RESULTS_FILE, read_results
from occubench.testing import MockLLMServer
from tests.conftest import BUILTIN_TASKS
from tests.llm.rawserver import closed_port

README = Path(__file__).resolve().parents[2] / "docs" / "guides" / "endpoints.md"


def _block(name: str) -> str:
    text = README.read_text(encoding="utf-8")
    return text.split(f"<!-- {name}")[1].split("-->", 1)[1].split(f"<!-- /{name} -->")[0].strip()


def test_the_readme_table_is_generated_from_the_profiles() -> None:
    assert _block("server-profiles") == profile_table()
    assert all(f"| `{name}` |" in profile_table() for name in PROFILES)


def test_servers_are_told_apart_by_what_they_say_of_themselves() -> None:
    with MockLLMServer(llama_cpp=True) as llama, MockLLMServer() as other:
        found = detect(llama.base_url, None)
        assert (found.name, found.slots, found.agent_max_tokens) == ("llama.cpp", 1, 2048)
        assert detect(other.base_url, None).name == "generic"
    assert detect(None, "k").name == "openai"
    # Nothing listening: of no known kind, and the run goes on.
    assert detect(f"http://127.0.0.1:{closed_port()}/v1", None).name == "generic"


def test_the_readme_llama_cpp_recipe_scores_every_task(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    server_line, run_line = _block("llama-cpp-recipe").removeprefix("```bash").removesuffix("```").strip().splitlines()
    assert "--chat_format chatml-function-calling" in server_line
    monkeypatch.chdir(tmp_path)  # ./results is the test's own
    with MockLLMServer(llama_cpp=True) as server:
        argv = shlex.split(run_line.replace("http://localhost:8000/v1", server.base_url))
        assert argv[0] == "occubench"
        assert cli(argv[1:]) == 0
    err = capsys.readouterr().err
    assert "Server profile llama.cpp" in err and "--max-concurrency 1" in err
    [run_dir] = (tmp_path / "results").iterdir()
    records = read_results(run_dir / RESULTS_FILE)
    assert len(records) == BUILTIN_TASKS and {r["status"] for r in records} == {"ok"}
    assert server.stats.max_in_flight == 1  # one slot, one request at a time: nothing queued against a task's time
    assert re.search(r'"max_concurrency": 1\b', (run_dir / ARGS_FILE).read_text())


def test_a_flag_given_wins_over_the_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with MockLLMServer(llama_cpp=True) as server:
        assert cli(["run", "--suite", "executable", "--agent-model", "local", "--base-url", server.base_url,
                    "--max-tokens", "300", "--output-dir", str(tmp_path), "--task-ids",
                    "clinic_scheduling/book_urgent_cardiology"]) == 0
    err = capsys.readouterr().err
    assert "--max-concurrency 1" in err and "--max-tokens 2048" not in err
    assert {r["max_tokens"] for r in server.requests if r.get("tools") and len(r["messages"]) > 1} == {300}


@pytest.mark.slow
def test_a_server_refusing_tools_fails_the_named_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # tool_choice "auto" refused (the run's own way of asking): the check says which and what to pass.
    with MockLLMServer(llama_cpp=True) as server:
        assert cli(["run", "--suite", "executable", "--agent-model", "local", "--base-url", server.base_url,
                    "--agent-params", '{"tool_choice": "required"}', "--output-dir", str(tmp_path)]) == 2
    [error] = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert "tool-call check" in error and "tool_choice 'required'" in error and "HTTP 500" in error
    assert "--skip-preflight" in error and not list(tmp_path.iterdir())
