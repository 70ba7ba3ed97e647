"""The researcher's workflow: a matrix of agents × modes in one command, rescoring saved episodes, sampling and
listing tasks, per-task and run-wide limits, and results that carry what the agent saw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from occubench.cli import main as cli
from occubench.store import RESULTS_FILE, read_context, read_results
from occubench.testing import MockLLMServer
from tests.conftest import run_folder, write_small_data

JUDGE_SYSTEM = "You are a strict reviewer"


def _run(server: MockLLMServer, data: Path, out: Path, *extra: str) -> int:
    return cli(["run", "--world-model", "world-m", "--base-url", server.base_url, "--api-key", "k",
                "--data-dir", str(data), "--output-dir", str(out), *extra])


def _records(run_dir: Path) -> list[dict]:
    return read_results(run_dir / RESULTS_FILE)


def test_one_command_runs_agents_by_modes_and_prints_leaderboard_and_robustness(
        small_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    matrix = ["--agent-model", "a1", "a2", "--env-mode", "E0", "E1", "E2", "E3", "--max-connections", "2",
              "--fixed-concurrency"]
    # The endpoint refuses (429) a third request in flight: eight runs at once stay within two only if they
    # share one limiter.
    with MockLLMServer(max_concurrent=2, latency_s=0.01) as server:
        assert _run(server, small_data, out, *matrix) == 0
        assert server.stats.max_in_flight <= 2 and 429 not in server.stats.responses_by_status
        names = {f"{a}__world-m__{m}" + ("" if m == "E0" else "__fc2_fd2") for a in ("a1", "a2")
                 for m in ("E0", "E1", "E2", "E3")}
        assert {p.name.rsplit("__", 1)[0] for p in out.iterdir()} == names
        assert all(len(_records(run_folder(out, name))) == 3 for name in names)
        printed = capsys.readouterr().out
        assert "Leaderboard" in printed and "R = min(E1, E2, E3) / E0" in printed and "McNemar" in printed
        assert all(name.split("__")[0] in printed for name in names)
        sent = server.stats.requests
        assert _run(server, small_data, out, *matrix) == 0
        assert server.stats.requests == sent  # every run resumed with nothing to do: not even a preflight


def test_a_matrix_from_a_config_file_and_a_run_name_refused(small_data: Path, server: MockLLMServer,
                                                            tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "matrix.toml"
    config.write_text('agent_model = ["a1", "a2"]\nenv_mode = "E0"\n')
    out = tmp_path / "results"
    assert _run(server, small_data, out, "--config", str(config), "--task-ids", "1") == 0
    assert {p.name.rsplit("__", 1)[0] for p in out.iterdir()} == {"a1__world-m__E0", "a2__world-m__E0"}
    assert _run(server, small_data, out, "--config", str(config), "--run-name", "x") == 2
    assert "--run-name names one run directory" in capsys.readouterr().err


def test_results_carry_instruction_system_prompt_tools_messages_and_judge_prompt(
        small_data: Path, server: MockLLMServer, tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert _run(server, small_data, out, "--agent-model", "a", "--task-ids", "1", "2") == 0
    run_dir = run_folder(out, "a__world-m__E0")
    context = read_context(run_dir)
    records = _records(run_dir)
    for record in records:
        refs = record["context"]
        assert set(refs) == {"instruction", "system_prompt", "tools", "judge_prompt"}
        assert context[refs["system_prompt"]].startswith("You are a professional agent")
        assert context[refs["judge_prompt"]][0]["content"].startswith(JUDGE_SYSTEM)
        assert {t["function"]["name"] for t in context[refs["tools"]]} == {"get_prescription", "record_refill"}
        roles = [m["role"] for m in record["messages"]]
        assert roles[0] == "assistant" and "tool" in roles and roles[-1] == "assistant"
        assert "system_prompt" not in record and JUDGE_SYSTEM not in json.dumps(record)
    # Tasks 1 and 2 share one world: its tool list is stored once, their instructions twice.
    assert records[0]["context"]["tools"] == records[1]["context"]["tools"]
    assert len((run_dir / "context.jsonl").read_text().splitlines()) == 1 + 2 + 1 + 2


def test_rescore_judges_saved_episodes_with_only_judge_requests(small_data: Path, server: MockLLMServer,
                                                                tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    assert _run(server, small_data, out, "--agent-model", "a") == 0
    source = run_folder(out, "a__world-m__E0")
    before = len(server.requests)
    assert cli(["rescore", str(source), "--verifier-model", "judge-2", "--base-url", server.base_url,
                "--api-key", "k", "--output-dir", str(out)]) == 0
    sent = server.requests[before:]
    assert sent and {r["model"] for r in sent} == {"judge-2"}
    assert all(r["messages"][0]["content"].startswith(JUDGE_SYSTEM) for r in sent if len(r["messages"]) > 1)
    new = _records(run_folder(out, f"{source.name}__rescored_judge-2"))
    old = {r["task_id"]: r for r in _records(source)}
    assert {r["task_id"] for r in new} == set(old)
    for record in new:
        assert record["verifier_model"] == "judge-2" and record["agent_model"] == "a"
        assert record["trajectory"] == old[record["task_id"]]["trajectory"]
        assert set(record["usage"]) == {"verifier"}
    capsys.readouterr()
    assert cli(["compare", str(source), str(run_folder(out, f"{source.name}__rescored_judge-2")),
                "--by", "verifier_model"]) == 0
    assert "Task verdicts agreeing" in capsys.readouterr().out


def test_rescore_of_an_executable_run_replays_the_calls_and_labels(server: MockLLMServer, tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert cli(["run", "--suite", "executable", "--agent", "reference", "--output-dir", str(out),
                "--task-ids", "clinic_scheduling/book_urgent_cardiology"]) == 0
    assert cli(["rescore", str(run_folder(out, "reference__executable__E0")), "--verifier-model", "judge", "--base-url",
                server.base_url, "--api-key", "k", "--output-dir", str(out), "--run-name", "labelled"]) == 0
    (record,) = _records(out / "labelled")
    assert record["is_correct"] is True  # the code checks read the state the replayed calls left
    assert record["verdict_details"]["judge_label"] in ("complete", "incomplete", "agent_error",
                                                        "environment_error")


def test_rescore_refuses_a_suite_judged_by_code_alone_and_a_missing_run(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    assert cli(["run", "--suite", "workplace", "--agent", "reference", "--days", "1", "--output-dir", str(out)]) == 0
    (run_dir,) = out.iterdir()
    assert cli(["rescore", str(run_dir), "--verifier-model", "j", "--base-url", "http://127.0.0.1:9/v1"]) == 2
    assert "--verifier-model is not an option of --suite workplace" in capsys.readouterr().err
    assert cli(["rescore", str(tmp_path / "nope"), "--verifier-model", "j"]) == 2
    assert "is not a run directory" in capsys.readouterr().err


def test_tasks_lists_and_samples_like_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_small_data(tmp_path / "data", copies=4)
    assert cli(["tasks", "--data-dir", str(data), "--json"]) == 0
    every = json.loads(capsys.readouterr().out)
    assert len(every) == 12 and set(every[0]) == {"task_id", "scenario", "category", "domain", "difficulty",
                                                  "environment"}
    assert cli(["tasks", "--data-dir", str(data), "--difficulty", "1,3", "--json"]) == 0
    assert {t["difficulty"] for t in json.loads(capsys.readouterr().out)} == {1, 3}
    picks = []
    for _ in range(2):
        assert cli(["tasks", "--data-dir", str(data), "--shuffle", "--seed", "5", "--limit", "4", "--json"]) == 0
        picks.append([t["task_id"] for t in json.loads(capsys.readouterr().out)])
    assert picks[0] == picks[1] and len(picks[0]) == 4 and picks[0] != [t["task_id"] for t in every[:4]]
    assert cli(["tasks", "--suite", "executable", "--limit", "2"]) == 0
    assert "executable: 2 task(s)" in capsys.readouterr().out
    assert cli(["tasks", "--data-dir", str(data), "--difficulty", "hard"]) == 2
    assert "--difficulty" in capsys.readouterr().err


def test_a_run_takes_the_sample_tasks_lists(server: MockLLMServer, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    data = write_small_data(tmp_path / "data4", copies=4)
    sample = ["--shuffle", "--seed", "2", "--limit", "3"]
    assert cli(["tasks", "--data-dir", str(data), *sample, "--json"]) == 0
    listed = [t["task_id"] for t in json.loads(capsys.readouterr().out)]
    assert _run(server, data, tmp_path / "out", "--agent-model", "a", *sample) == 0
    assert {r["task_id"] for r in _records(run_folder(tmp_path / "out", "a__world-m__E0"))} == set(listed)


def test_per_task_token_limit_stops_the_agent_and_is_the_stop_reason(small_data: Path, server: MockLLMServer,
                                                                     tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert _run(server, small_data, out, "--agent-model", "a", "--max-tokens-per-task", "1") == 0
    for record in _records(run_folder(out, "a__world-m__E0")):
        assert record["status"] == "ok" and record["stop_reason"] == "max_tokens_per_task"
        assert record["step_count"] == 1 and record["usage"]["agent"]["calls"] == 1
        assert record["is_correct"] is not None  # judged on what it did, not an error


def test_max_cost_stops_starting_tasks_and_a_higher_limit_goes_on(small_data: Path, server: MockLLMServer,
                                                                  tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({m: {"input": 1000.0, "output": 1000.0} for m in ("a", "world-m")}))
    out = tmp_path / "results"
    args = ["--agent-model", "a", "--prices", str(prices), "--max-workers", "1"]
    assert _run(server, small_data, out, *args, "--max-cost", "0.01") == 1
    assert "--max-cost 0.01 USD reached" in " ".join(capsys.readouterr().err.split())
    done = _records(run_folder(out, "a__world-m__E0"))
    assert 1 <= len(done) < 3
    assert _run(server, small_data, out, *args, "--max-cost", "1000") == 0
    assert len(_records(run_folder(out, "a__world-m__E0"))) == 3
    assert _run(server, small_data, out, "--agent-model", "a", "--max-cost", "1") == 2
    assert "--max-cost needs --prices" in capsys.readouterr().err


def test_fail_on_error_sets_the_share_of_errors_that_fails_the_run(small_data: Path, tmp_path: Path) -> None:
    with MockLLMServer(api_key="right") as refusing:
        args = ["--agent-model", "a", "--skip-preflight", "--retry-budget", "1"]
        assert cli(["run", "--world-model", "w", "--base-url", refusing.base_url, "--api-key", "wrong",
                    "--data-dir", str(small_data), "--output-dir", str(tmp_path), *args]) == 1
        assert cli(["run", "--world-model", "w", "--base-url", refusing.base_url, "--api-key", "wrong",
                    "--data-dir", str(small_data), "--output-dir", str(tmp_path), *args,
                    "--fail-on-error", "1"]) == 0
    assert cli(["run", "--agent-model", "a", "--fail-on-error", "2"]) == 2


def test_rescore_writes_beside_its_source_wherever_it_is_run(small_data: Path, server: MockLLMServer, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "runs"
    assert _run(server, small_data, out, "--agent-model", "a", "--task-ids", "1") == 0
    source = run_folder(out, "a__world-m__E0")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert cli(["rescore", str(source), "--verifier-model", "judge-2", "--base-url", server.base_url,
                "--api-key", "k"]) == 0
    assert not list(elsewhere.iterdir())  # no ./results where the command ran
    assert len(_records(run_folder(out, f"{source.name}__rescored_judge-2"))) == 1
