"""Run folders someone else had their hands on. Results lines nested 50,000 deep or 20 MB long are left out by every
reader — report, compare, rescore, export, the viewer's state API — with one warning, the folder's own results
counted as they were; a symbolic link planted in place of a file the run writes stops the run (exit 2, naming the
file) with nothing written where it points; ``export --out`` naming a folder is refused, no temporary file left."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from occubench.cli import main
from occubench.report.live import view_server
from occubench.store import CONTEXT_FILE, RESULTS_FILE, read_results
from occubench.testing import MockLLMServer
from tests.conftest import run_folder
from tests.test_store import DEEP, LONG

OFFLINE = ["run", "--suite", "executable", "--agent", "reference", "--run-name", "r"]


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, str]:
    """Run one command, which must succeed without a traceback; what it printed."""
    status = main(list(argv))
    shown = capsys.readouterr()
    assert status == 0, shown.err
    assert "Traceback" not in shown.out + shown.err
    return shown.out, shown.err


def _state(run_dirs: list[Path]) -> dict[str, Any]:
    """The viewer's state, asked over HTTP of a server started as `occubench view` starts it."""
    server = view_server(run_dirs)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=60)
        connection.request("GET", "/api/state")
        response = connection.getresponse()
        assert response.status == 200
        return json.loads(response.read())
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _readings(server: MockLLMServer, run: Path, other: Path, out: Path,
              capsys: pytest.CaptureFixture[str]) -> tuple[list[Any], int]:
    """What each reader makes of ``run`` (next to ``other``, its world model's counterpart), and how many
    warnings about left-out lines they printed in all."""
    warned = 0
    out.mkdir()
    report, err = _cli(capsys, "report", str(run), "--format", "json")
    warned += err.count("left out")
    numbers = json.loads(report)["runs"][0]
    numbers.pop("left_out")
    compared, err = _cli(capsys, "compare", str(run), str(other), "--format", "json")
    warned += err.count("left out")
    _, err = _cli(capsys, "export", str(run), "--out", str(out / "rows.jsonl"))
    warned += err.count("left out")
    shown, err = _cli(capsys, "rescore", str(run), "--verifier-model", "judge-2", "--base-url", server.base_url,
                      "--api-key", "k", "--output-dir", str(out), "--run-name", "rescored")
    warned += (shown + err).count("left out")
    state = _state([run, other])
    assert [entry["error"] for entry in state["runs"]] == [None, None]
    rescored = sorted((r["task_id"], r["is_correct"]) for r in read_results(out / "rescored" / RESULTS_FILE))
    return [numbers, json.loads(compared), (out / "rows.jsonl").read_bytes(), rescored,
            [entry["results"] for entry in state["runs"]], state["results"]], warned


def test_deep_and_long_lines_are_left_out_by_every_reader(small_data: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    with MockLLMServer() as server:
        for world in ("w1", "w2"):
            _cli(capsys, "run", "--agent-model", "a", "--world-model", world, "--record-tokens", "--base-url",
                 server.base_url, "--api-key", "k", "--data-dir", str(small_data), "--output-dir", str(runs))
        run, other = run_folder(runs, "a__w1__E0"), run_folder(runs, "a__w2__E0")
        clean = tmp_path / "clean" / run.name  # the same run before the lines were appended, under the same name
        shutil.copytree(run, clean)
        for name in (RESULTS_FILE, CONTEXT_FILE):
            with (run / name).open("ab") as handle:
                handle.write(DEEP + LONG)
        before, warned_before = _readings(server, clean, other, tmp_path / "before", capsys)
        after, warned_after = _readings(server, run, other, tmp_path / "after", capsys)
    assert before[0]["completion"]["evaluated"] == 3 and before[2]  # something to compare: results, rows
    assert after == before
    assert (warned_before, warned_after) == (0, 4)  # one warning from each command


def test_a_deep_args_json_is_named_not_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _cli(capsys, *OFFLINE, "--limit", "1", "--output-dir", str(tmp_path / "out"))
    run = tmp_path / "out" / "r"
    (run / "args.json").write_bytes(b"[" * 50_000 + b"]" * 50_000)
    _cli(capsys, "report", str(run))  # read as no args.json: the folder is taken whole
    assert main(["rescore", str(run), "--verifier-model", "j", "--base-url", "http://127.0.0.1:9/v1"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"{run / 'args.json'}: invalid JSON: nested deeper than" in err


@pytest.fixture
def resumable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A run folder with a task left to do: the last line of a finished run taken off."""
    _cli(capsys, *OFFLINE, "--limit", "3", "--output-dir", str(tmp_path / "out"))
    results = tmp_path / "out" / "r" / RESULTS_FILE
    results.write_bytes(b"".join(results.read_bytes().splitlines(keepends=True)[:-1]))
    return tmp_path / "out" / "r"


@pytest.mark.parametrize("name", [RESULTS_FILE, CONTEXT_FILE, "args.json", "debug.log", "run.lock"])
@pytest.mark.slow
def test_a_planted_link_stops_the_run_and_nothing_is_written_through_it(
        name: str, resumable: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside.txt"
    # Content a run would take as its own (its results, for results.jsonl), so nothing else stops it first.
    outside.write_bytes((resumable / name).read_bytes() if name == RESULTS_FILE else b"precious\n")
    before = {path.name: path.read_bytes() for path in resumable.iterdir()}
    (resumable / name).unlink(missing_ok=True)
    (resumable / name).symlink_to(outside)
    status = main([*OFFLINE, "--limit", "3", "--output-dir", str(resumable.parent), "--debug"])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    assert f"{resumable / name} is a symbolic link" in err
    assert outside.read_bytes() == (before[name] if name == RESULTS_FILE else b"precious\n")
    assert {path.name: path.read_bytes() for path in resumable.iterdir() if path.name != name} == \
        {key: value for key, value in before.items() if key != name}  # nothing else written either


def test_a_fifo_in_place_of_a_file_is_refused_without_waiting_on_it(resumable: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (resumable / CONTEXT_FILE).unlink()
    os.mkfifo(resumable / CONTEXT_FILE)  # opened for reading or writing as it was, it would block until a peer came
    assert main([*OFFLINE, "--limit", "3", "--output-dir", str(resumable.parent)]) == 2
    assert f"{resumable / CONTEXT_FILE} is not a regular file" in capsys.readouterr().err


def test_a_linked_output_folder_chosen_by_the_user_is_followed(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "disk").mkdir()
    (tmp_path / "results").symlink_to(tmp_path / "disk")
    _cli(capsys, *OFFLINE, "--limit", "1", "--output-dir", str(tmp_path / "results"))
    assert len(read_results(tmp_path / "disk" / "r" / RESULTS_FILE)) == 1


def test_export_to_a_folder_is_refused_and_leaves_no_temporary_file(resumable: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "rows"
    target.mkdir()
    listed = sorted(tmp_path.iterdir())
    assert main(["export", str(resumable), "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"--out {target}" in err
    assert sorted(tmp_path.iterdir()) == listed and not any(target.iterdir())
