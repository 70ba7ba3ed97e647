"""A run's folder is its identity: what the tasks are (their content, not their path), the workplace's seed and
days, and every option that changes what is run; and a results file holds only its run's lines."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from occubench.cli import main as cli
from occubench.executable.registry import _WORLDS
from occubench.store import ARGS_FILE, RESULTS_FILE, read_results
from occubench.testing import MockLLMServer
from tests.conftest import run_folder, write_small_data


def _said(capsys: pytest.CaptureFixture[str]) -> str:
    """What the run printed on stderr, its lines joined: the terminal wraps them where a long path ends."""
    return " ".join(capsys.readouterr().err.split())

def _run(server: MockLLMServer, data: Path, out: Path, *extra: str) -> int:
    return cli(["run", "--agent-model", "a", "--world-model", "w", "--base-url", server.base_url, "--api-key", "k",
                "--data-dir", str(data), "--output-dir", str(out), *extra])


def _ids(run_dir: Path) -> list:
    return sorted(r["task_id"] for r in read_results(run_dir / RESULTS_FILE))


def test_two_task_sets_never_share_a_folder_and_the_same_content_elsewhere_does(
        server: MockLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    first, second = write_small_data(tmp_path / "first"), write_small_data(tmp_path / "second", copies=2)
    assert _run(server, first, out) == 0
    assert _run(server, second, out) == 0  # today's bug: "already done, 0 to run" in the first set's folder
    folders = sorted(out.iterdir())
    assert len(folders) == 2 and all(f.name.startswith("a__w__E0__") for f in folders)
    assert sorted(map(_ids, folders)) == [[1, 2, 3], [1, 2, 3, 11, 12, 13]]
    # The same files at another path are the same task set: the run resumes with nothing to do.
    moved = shutil.copytree(first, tmp_path / "moved")
    capsys.readouterr()
    sent = server.stats.requests
    assert _run(server, moved, out) == 0
    assert "3 already done, 0 to run" in _said(capsys) and server.stats.requests == sent
    # Changing one world config changes the identity too.
    config = moved / "world_model_configs" / "env_fixture_pharmacy.json"
    config.write_text(config.read_text().replace("You simulate", "You imitate"))
    assert _run(server, moved, out, "--task-ids", "1") == 0
    assert len(list(out.iterdir())) == 3


def test_a_folder_of_another_identity_is_refused_before_any_request(
        server: MockLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    assert _run(server, write_small_data(tmp_path / "first"), out, "--run-name", "mine") == 0
    before = (out / "mine" / RESULTS_FILE).read_bytes()
    sent = server.stats.requests
    capsys.readouterr()
    assert _run(server, write_small_data(tmp_path / "second", copies=2), out, "--run-name", "mine") == 2
    error = capsys.readouterr().err.strip()
    assert "different configuration (the tasks' content " in error and "--force" in error
    assert len(error.splitlines()) == 1
    assert server.stats.requests == sent and (out / "mine" / RESULTS_FILE).read_bytes() == before


def test_workplace_seed_and_days_are_part_of_the_identity(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    common = ["run", "--suite", "workplace", "--agent", "reference", "--output-dir", str(out)]
    assert cli([*common, "--seed", "7", "--days", "1"]) == 0
    assert cli([*common, "--seed", "8", "--days", "1"]) == 0
    assert cli([*common, "--seed", "7", "--days", "2"]) == 0
    folders = sorted(out.iterdir())
    assert len(folders) == 3
    args = [json.loads((f / ARGS_FILE).read_text())["config"] for f in folders]
    assert sorted((a["workplace_seed"], a["workplace_days"]) for a in args) == [(7, 1), (7, 2), (8, 1)]
    assert sorted(map(_ids, folders)) == [["s7-d001"], ["s7-d001", "s7-d002"], ["s8-d001"]]
    seven = next(f for f, a in zip(folders, args) if a["workplace_seed"] == 7)
    assert cli([*common, "--seed", "8", "--days", "1", "--run-name", seven.name]) == 2
    assert "--seed 7 → 8" in capsys.readouterr().err


def test_worlds_dir_worlds_are_not_pooled_with_the_built_in_ones(tmp_path: Path) -> None:
    worlds = tmp_path / "worlds"
    shutil.copytree(_WORLDS / "clinic_scheduling", worlds / "clinic_scheduling",
                    ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "results"
    common = ["run", "--suite", "executable", "--agent", "reference", "--output-dir", str(out), "--task-ids",
              "clinic_scheduling/book_urgent_cardiology"]
    assert cli(common) == 0
    assert cli([*common, "--worlds-dir", str(worlds), "--trust-world-code"]) == 0
    assert len(list(out.iterdir())) == 2
    # An edited world is another task set.
    seed = worlds / "clinic_scheduling" / "seed.sql"
    seed.write_text(seed.read_text() + "\n-- edited\n")
    assert cli([*common, "--worlds-dir", str(worlds), "--trust-world-code"]) == 0
    assert len(list(out.iterdir())) == 3


def test_the_run_name_still_wins_and_the_default_name_stays_readable(server: MockLLMServer,
                                                                     small_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert _run(server, small_data, out, "--task-ids", "1", "--run-name", "chosen") == 0
    assert _run(server, small_data, out, "--task-ids", "1", "--env-mode", "E2") == 0
    assert {p.name for p in out.iterdir()} == {"chosen", run_folder(out, "a__w__E2__fc2_fd2").name}


def test_a_folder_written_before_runs_had_an_identity_resumes(server: MockLLMServer, small_data: Path,
                                                              tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    assert _run(server, small_data, out, "--task-ids", "1", "2", "--run-name", "old") == 0
    # What an earlier version wrote: no task-set fields, and another hash (the identity was not in it).
    args_path, results_path = out / "old" / ARGS_FILE, out / "old" / RESULTS_FILE
    args = json.loads(args_path.read_text())
    for key in ("config_hashes", "task_ids"):
        del args[key]
    del args["config"]["task_content"]
    args["config_hash"] = "0123456789abcdef"
    args_path.write_text(json.dumps(args))
    records = read_results(results_path)
    results_path.write_text("".join(json.dumps({**r, "config_hash": "0123456789abcdef"}) + "\n" for r in records))
    capsys.readouterr()
    assert _run(server, small_data, out, "--run-name", "old") == 0
    assert "2 already done, 1 to run" in _said(capsys)
    assert _ids(out / "old") == [1, 2, 3]
    assert cli(["report", str(out / "old")]) == 0
    assert "left out" not in capsys.readouterr().err


def _foreign_lines(run_dir: Path) -> bytes:
    """Append a line of another run (its verdict flipped) and one for a task outside the task set."""
    path = run_dir / RESULTS_FILE
    first = read_results(path)[0]
    lines = [{**first, "config_hash": "ffffffffffffffff", "is_correct": not first["is_correct"]},
             {**first, "task_id": 999, "is_correct": True}]
    with path.open("a") as handle:
        handle.write("".join(json.dumps(line) + "\n" for line in lines))
    return path.read_bytes()


def test_foreign_lines_are_left_out_with_one_warning_and_counted(server: MockLLMServer, small_data: Path,
                                                                 tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    assert _run(server, small_data, out) == 0
    run_dir = run_folder(out, "a__w__E0")
    capsys.readouterr()
    assert cli(["report", str(run_dir), "--format", "json"]) == 0
    clean = json.loads(capsys.readouterr().out)
    on_disk = _foreign_lines(run_dir)

    assert cli(["report", str(run_dir), "--format", "json"]) == 0
    shown = capsys.readouterr()
    mixed = json.loads(shown.out)
    assert mixed["runs"][0]["completion"] == clean["runs"][0]["completion"]
    assert mixed["runs"][0]["completion"]["evaluated"] == 3 and mixed["runs"][0]["left_out"] == 2
    warnings = [line for line in shown.err.splitlines() if "left out" in line]
    assert len(warnings) == 1 and f"{run_dir / RESULTS_FILE}:4: 2 line(s) left out" in warnings[0]

    assert cli(["report", str(run_dir)]) == 0
    assert "| Lines left out (not this run's) | 2 |" in capsys.readouterr().out

    # A resume keeps its own verdicts, sends nothing, and rewrites nothing.
    sent = server.stats.requests
    assert _run(server, small_data, out) == 0
    assert "3 already done, 0 to run" in _said(capsys) and server.stats.requests == sent
    assert (run_dir / RESULTS_FILE).read_bytes() == on_disk

    assert cli(["rescore", str(run_dir), "--verifier-model", "j", "--base-url", server.base_url, "--api-key", "k",
                "--output-dir", str(out), "--run-name", "judged"]) == 0
    assert "left out" in capsys.readouterr().err
    assert _ids(out / "judged") == [1, 2, 3]
    assert cli(["compare", str(run_dir), str(out / "judged"), "--by", "verifier_model"]) == 0
    assert "left out" in capsys.readouterr().err
    assert (run_dir / RESULTS_FILE).read_bytes() == on_disk


def test_retrying_an_error_keeps_foreign_lines_as_they_were(tmp_path: Path) -> None:
    data = write_small_data(tmp_path / "data")
    out = tmp_path / "results"
    with MockLLMServer(error_rate=1.0) as broken:
        assert _run(broken, data, out, "--task-ids", "1", "--retry-budget", "0.2", "--skip-preflight") == 1
    run_dir = run_folder(out, "a__w__E0")
    foreign = json.loads(_foreign_lines(run_dir).splitlines()[1])
    with MockLLMServer() as server:
        assert _run(server, data, out, "--task-ids", "1") == 0
    records = read_results(run_dir / RESULTS_FILE)
    own = [r for r in records if r["task_id"] == 1 and r["config_hash"] != foreign["config_hash"]]
    assert foreign in records and [r["status"] for r in own] == ["ok"]  # the run's own error record was replaced


def test_after_a_resume_the_totals_count_what_the_replaced_attempts_spent(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    data = write_small_data(tmp_path / "data")
    out = tmp_path / "results"
    with MockLLMServer(error_rate=1.0) as broken:
        assert _run(broken, data, out, "--retry-budget", "0.5", "--skip-preflight") == 1
    run_dir = run_folder(out, "a__w__E0")
    failed = read_results(run_dir / RESULTS_FILE)
    retried = sum(n for r in failed for u in r["usage"].values() for n in u["retries"].values())
    assert len(failed) == 3 and retried > 0
    with MockLLMServer() as server:
        assert _run(server, data, out) == 0
    records = read_results(run_dir / RESULTS_FILE)
    assert len(records) == 3 and {r["status"] for r in records} == {"ok"}
    capsys.readouterr()
    assert cli(["report", str(run_dir), "--format", "json"]) == 0
    usage = json.loads(capsys.readouterr().out)["runs"][0]["usage"]
    assert sum(n for u in usage.values() for n in u["retries"].values()) == retried


def test_a_learning_run_has_a_folder_of_its_own(tmp_path: Path) -> None:
    common = ["run", "--suite", "workplace", "--agent", "reference", "--days", "1", "--seed", "3", "--output-dir",
              str(tmp_path)]
    assert cli(common) == 0
    assert cli([*common, "--learning"]) == 0  # refused into the first run's folder before
    folders = sorted(tmp_path.iterdir())
    assert len(folders) == 2 and sorted(len(read_results(f / RESULTS_FILE)) for f in folders) == [1, 3]
