"""``occubench synth executable`` end to end against the loopback server scripted to play every stage: a world
folder that ``occubench validate``, ``run`` and ``serve`` take, each scripted fault fed back to its stage and
corrected, hostile code refused or stopped, faults that are never corrected dropped with their reason, and a second
run that sends no request."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from rich.console import Console

from occubench.cli import main
from occubench.executable.registry import worlds_of
from occubench.executable.validate import validate
from occubench.synth.executable import ExecutableSynthConfig, SynthesisReport, synthesize
from occubench.testing import MockLLMServer
from occubench.testing.server import make_scripted_responder

QUIET = Console(quiet=True)
SCENARIO = "Insurance claims adjudication"
WORLD = "insurance_claims_adjudication"
#: One fault in every stage after the first, each corrected on the next round.
FAULTS = {"invalid_ddl": True, "failing_inserts": True, "raising_tool": True, "passes_initially": [1],
          "wrong_passes": [2], "malformed": ["schema"]}


def settings(server: MockLLMServer, out: Path, **extra: Any) -> ExecutableSynthConfig:
    return ExecutableSynthConfig.create({"scenario": SCENARIO, "out": str(out), "synth_model": "synth-m",
                                         "base_url": server.base_url, "api_key": "k", **extra})


def asks(requests: list[dict[str, Any]], stage: str) -> list[dict[str, Any]]:
    """The inputs of every request of a stage (the first user message), in order."""
    return [json.loads(r["messages"][1]["content"]) for r in requests
            if r["messages"][0]["content"].startswith(f"Stage: {stage}\n")]


def run_with(script: dict[str, Any], out: Path, **extra: Any) -> tuple[SynthesisReport, list[dict[str, Any]]]:
    with MockLLMServer(make_scripted_responder(synth=script)) as server:
        report = synthesize(settings(server, out, **extra), QUIET)
        return report, list(server.requests)


@pytest.fixture(scope="module")
def corrected(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SynthesisReport, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("synth") / "out"
    report, requests = run_with(FAULTS, out)
    return out, report, requests


@pytest.mark.slow
def test_every_scripted_fault_goes_back_to_its_stage_and_is_corrected(corrected: Any) -> None:
    _, report, requests = corrected
    # A malformed answer is asked again by the engine with the same inputs: each problem once.
    fed_back = {stage: list(dict.fromkeys(p for ask in asks(requests, stage) for p in ask.get("problems", ())))
                for stage in ("tasks", "schema", "seed", "tools", "checks")}
    assert fed_back["tasks"] == []
    assert fed_back["schema"] == ['table cases: near ",": syntax error']
    assert fed_back["seed"][0].startswith("5 of 36 rows fail to insert (at most 10 % may): row 32 (cases): CHECK "
                                          "constraint failed")
    assert fed_back["tools"] == ["tool get_case with its sample_arguments {'case_id': 'CASE-1001'}: tool_failed: "
                                 "KeyError: 'escalation_level'"]
    initially, nothing, wrong = fed_back["checks"]  # task 1 passes initially and so after doing nothing; task 2 wrong
    assert initially.startswith("on the untouched initial database (with the reference answer), every check passes")
    assert nothing.startswith("after doing nothing, every check passes")
    assert wrong.startswith("after the wrong solution, every check passes")
    second = asks(requests, "tools")[1]
    assert second["previous_answer"]["tools"][0]["name"] == "get_case"  # the answer that failed comes back too
    stages = report.stages
    assert {name: (s["items"], s["first_try"], s["corrections"], s["dropped"]) for name, s in stages.items()} == {
        "tasks": (1, 1, 0, 0), "schema": (1, 0, 1, 0), "seed": (1, 0, 1, 0), "tools": (1, 0, 1, 0),
        "checks": (3, 1, 2, 0)}
    assert stages["schema"]["format_reasks"] == 2  # each round's malformed first answer, asked again by the engine
    assert stages["checks"]["first_try_rate"] == pytest.approx(1 / 3)
    assert stages["checks"]["mean_corrections"] == pytest.approx(2 / 3)


def test_the_world_folder_has_the_built_in_shape_and_passes_validation(corrected: Any,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    out, report, _ = corrected
    assert sorted(p.name for p in (out / WORLD).iterdir()) == ["__init__.py", "schema.sql", "seed.sql"]
    assert "pending" not in (out / WORLD / "seed.sql").read_text()  # the failing rows were asked again, not kept
    [world] = worlds_of(out)
    problems, results = validate([world])
    assert problems == {WORLD: []} and all(r.ok for r in results) and len(results) == 3
    assert main(["validate", "--worlds-dir", str(out)]) == 0
    assert "3/3 tasks valid (reference 100 %, do-nothing 0 %, wrong solution 0 %)" in capsys.readouterr().out
    assert report.worlds == [{"name": WORLD, "scenario": SCENARIO, "folder": str(out / WORLD), "tables": 3,
                              "rows": 31, "tools": 6, "tasks": 3}]


@pytest.mark.slow
def test_the_report_is_written_with_tokens_and_cost_per_100_tasks(corrected: Any, tmp_path: Path) -> None:
    out, report, _ = corrected
    saved = json.loads((out / "synthesis" / "report.json").read_text())
    assert saved["kept"] == {"worlds": 1, "tables": 3, "rows": 31, "tools": 6, "tasks": 3}
    assert saved["dropped"] == [] and saved["requested"] == 1
    tokens = saved["usage"]["prompt_tokens"] + saved["usage"]["completion_tokens"]
    assert tokens > 0 and saved["tokens_per_100_tasks"] == pytest.approx(tokens * 100 / 3)
    assert saved["cost"] is None  # no --prices
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"synth-m": {"input": 1.0, "output": 2.0}}))
    with MockLLMServer(make_scripted_responder(synth=FAULTS)) as server:  # everything stored: nothing is asked
        priced = synthesize(settings(server, out, prices=str(prices)), QUIET)
    expected = (saved["usage"]["prompt_tokens"] * 1.0 + saved["usage"]["completion_tokens"] * 2.0) / 1e6
    assert priced.cost == pytest.approx(expected) and priced.per_100_tasks()[1] == pytest.approx(expected * 100 / 3)
    titles = [table.title for table in priced.tables()]
    assert titles[1] == "Kept: 1 of 1 world(s) requested"


@pytest.mark.slow
def test_running_the_same_command_again_sends_no_request_and_writes_the_same_world(corrected: Any) -> None:
    out, report, _ = corrected
    before = {p.name: p.read_bytes() for p in (out / WORLD).iterdir()}
    (out / WORLD / "__init__.py").unlink()
    with MockLLMServer(make_scripted_responder(synth=FAULTS)) as server:
        again = synthesize(settings(server, out, skip_preflight=True), QUIET)
        assert server.requests == []
    assert {p.name: p.read_bytes() for p in (out / WORLD).iterdir()} == before
    assert again.stages == report.stages | {name: {**s, "format_reasks": 0} for name, s in report.stages.items()}


def test_the_synthesized_world_runs_and_is_served_to_the_mcp_client(corrected: Any, tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    out, _, _ = corrected
    assert main(["run", "--suite", "executable", "--worlds-dir", str(out), "--agent", "reference",
                 "--output-dir", str(tmp_path), "--run-name", "r"]) == 0
    results = [json.loads(line) for line in (tmp_path / "r" / "results.jsonl").read_text().splitlines()]
    assert len(results) == 3 and all(r["is_correct"] for r in results)

    async def session() -> tuple[list[str], dict[str, Any]]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "occubench", "serve", "--worlds-dir",
                                                                      str(out), "--env", WORLD])
        # errlog named: the client's default is the stderr of the moment it was imported, maybe pytest's capture.
        with open(tmp_path / "stderr.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                tools = (await client.list_tools()).tools
                await client.call_tool("assign_case", {"case_id": "CASE-1003", "staff_id": "ST-02"})
                case = await client.call_tool("get_case", {"case_id": "CASE-1003"})
                return sorted(t.name for t in tools), json.loads(case.content[0].text)
    names, case = anyio.run(session)
    assert names == ["assign_case", "get_case", "list_staff", "resolve_case", "search_cases", "set_priority"]
    assert case["owner_id"] == "ST-02"


@pytest.mark.parametrize(("hostile", "refused"), [
    ("open_file", "tool get_case: line 7: the builtin 'open' is not allowed"),
    ("socket", "tool get_case: line 7: `import socket` is not allowed"),
    ("endless_loop", "tool get_case with its sample_arguments {'case_id': 'CASE-1001'}: timeout: get_case: the call "
                     "did not finish within 2 s"),
    ("memory_bomb", "tool get_case with its sample_arguments {'case_id': 'CASE-1001'}: memory: get_case: the call "
                    "ran out of memory"),
])
@pytest.mark.slow
def test_hostile_tool_code_is_refused_or_stopped_and_then_corrected(tmp_path: Path, hostile: str,
                                                                    refused: str) -> None:
    report, requests = run_with({"hostile": hostile}, tmp_path / "out")
    [problem] = asks(requests, "tools")[1]["problems"]
    assert problem.startswith(refused)
    assert report.stages["tools"]["corrections"] == 1 and len(report.worlds) == 1


KEY = "sk-synthesis-test-5b4a39281706f5e4"


@pytest.mark.parametrize("script", [{"hostile": "environ_escape"}, {"leak": f"found it: {KEY}"}])
@pytest.mark.slow
def test_no_key_reaches_the_model_the_terminal_or_the_disk(script: dict[str, Any], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # in the harness's environment, as in a real run
    with MockLLMServer(make_scripted_responder(synth=script)) as server:
        status = main(["synth", "executable", "--scenario", SCENARIO, "--out", str(tmp_path / "out"),
                       "--synth-model", "m", "--base-url", server.base_url, "--api-key", KEY])
        bodies = json.dumps(server.requests)
    problems = asks(server.requests, "tools")[1]["problems"]  # what the first tools answer was told
    assert status == 0 and KEY not in bodies and KEY not in "".join(capsys.readouterr())
    assert all(KEY.encode() not in path.read_bytes() for path in (tmp_path / "out").rglob("*") if path.is_file())
    if "leak" in script:  # the executed code did report it: masked before it was sent, printed or stored
        assert [problem.endswith("tool_error: found it: <redacted>") for problem in problems] == [True]
    else:  # the escape is refused before it runs: there is no key in the worker to find anyway
        assert any("the module json may be used only to read a name from it" in p for p in problems)


def test_a_fault_never_corrected_drops_the_world_with_its_reason(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"raising_tool": True, "uncorrected": ["raising_tool"]}))
    with MockLLMServer(make_scripted_responder(synth=json.loads(script.read_text()))) as server:
        status = main(["synth", "executable", "--scenario", SCENARIO, "--out", str(tmp_path / "out"),
                       "--synth-model", "m", "--base-url", server.base_url, "--api-key", "k"])
        tools_asks = asks(server.requests, "tools")
    assert status == 1 and len(tools_asks) == 5  # the first answer and four correction rounds
    [dropped] = json.loads((tmp_path / "out" / "synthesis" / "report.json").read_text())["dropped"]
    assert dropped["item"] == WORLD and dropped["stage"] == "tools"
    assert dropped["reason"].startswith("still failing after 4 correction rounds: tool get_case")
    assert "KeyError: 'escalation_level'" in dropped["reason"]
    assert not (tmp_path / "out" / WORLD).exists()
    assert f"dropped {WORLD} at tools" in capsys.readouterr().out


@pytest.mark.slow
def test_a_task_never_corrected_is_dropped_and_the_world_kept_with_the_others(tmp_path: Path) -> None:
    report, _ = run_with({"passes_initially": [4], "uncorrected": ["passes_initially"]}, tmp_path / "out",
                         tasks=4, skip_preflight=True)
    assert [(d["item"], d["stage"]) for d in report.dropped] == [(f"{WORLD}/resolve_case_4", "checks")]
    assert report.worlds[0]["tasks"] == 3 and report.stages["checks"]["dropped"] == 1
    assert main(["validate", "--worlds-dir", str(tmp_path / "out")]) == 0


@pytest.mark.slow
def test_a_few_failing_seed_rows_are_left_out_without_asking_again(tmp_path: Path) -> None:
    report, requests = run_with({"failing_inserts": "few"}, tmp_path / "out", skip_preflight=True)
    assert len(asks(requests, "seed")) == 1 and report.worlds[0]["rows"] == 31  # 2 of 33 rows failed: left out


@pytest.mark.parametrize(("flags", "message"), [
    (["--tasks", "2"], "--tasks: Input should be greater than or equal to 3"),
    (["--category", "Cooking"], "--category: unknown category 'Cooking'; choose from Agriculture"),
    (["--scenario", " "], "--scenario: give at least one scenario"),
])
def test_bad_settings_are_refused_with_exit_status_2(tmp_path: Path, flags: list[str], message: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    base = ["synth", "executable", "--out", str(tmp_path), "--synth-model", "m"]
    assert main([*base, *(flags if "--scenario" in flags else ["--scenario", SCENARIO, *flags])]) == 2
    assert message in capsys.readouterr().err
