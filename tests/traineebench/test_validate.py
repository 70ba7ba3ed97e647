"""`occubench validate --suite traineebench`: every day of a config generates, and doing nothing never earns a task
its full points; a config that cannot be generated is a clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from occubench.cli import main
from tests.traineebench.test_run import reference_folder, write_config

TASK = {"name": "Transaction Data Review", "deadline": "2025-10-01T20:00:00",
        "arguments": {"num_normal_transactions": 3, "num_abnormal_transactions": 2}}


def test_every_day_generates_and_doing_nothing_earns_no_task_its_points(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path, [[TASK], [TASK, TASK]])
    assert main(["validate", "--suite", "traineebench", "--traineebench-config", str(config), "--reference-dir",
                 str(reference_folder(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "2 day(s), 3 task(s) generated; 0 passed by doing nothing" in out
    assert "Transaction Data Review" in out


def test_a_config_that_cannot_be_generated_is_an_error_naming_the_place(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path, [[TASK, {**TASK, "arguments": {"num_normal_transactions": "many"}}]])
    assert main(["validate", "--suite", "traineebench", "--traineebench-config", str(config), "--reference-dir",
                 str(reference_folder(tmp_path))]) == 2
    assert "scenarios[0].days[0].tasks[1]" in capsys.readouterr().err
    assert main(["validate", "--suite", "traineebench"]) == 2
    config.write_text(json.dumps({"scenarios": []}))
    assert main(["validate", "--suite", "traineebench", "--traineebench-config", str(config)]) == 2


def test_a_bare_config_name_is_read_from_the_reference_files_unless_the_working_folder_has_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    reference = reference_folder(tmp_path)
    write_config(reference, [[TASK], [TASK, TASK]])  # the reference's own traineebench_config.json
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    validate = ["validate", "--suite", "traineebench", "--traineebench-config", "traineebench_config.json"]
    assert main([*validate, "--reference-dir", str(reference)]) == 0
    assert "2 day(s), 3 task(s) generated" in " ".join(capsys.readouterr().out.split())
    write_config(work, [[TASK]])  # a file of that name in the working folder is the one meant
    assert main([*validate, "--reference-dir", str(reference)]) == 0
    assert "1 day(s), 1 task(s) generated" in " ".join(capsys.readouterr().out.split())


def test_a_bare_config_name_found_nowhere_names_both_places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    reference = reference_folder(tmp_path)
    write_config(reference, [[TASK]])
    monkeypatch.chdir(tmp_path / "reference" / "schemas")
    monkeypatch.setenv("OCCUBENCH_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["validate", "--suite", "traineebench", "--traineebench-config", "traineebench_cl_config.json",
                 "--reference-dir", str(reference)]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert (f"--traineebench-config traineebench_cl_config.json: no such file in the working folder "
            f"({reference / 'schemas'}) nor in the reference files ({reference}, whose configs are: "
            "traineebench_config.json)") in said
    # No reference files downloaded: the error says where it looked and how to get them.
    assert main(["run", "--suite", "traineebench", "--traineebench-config", "traineebench_config.json",
                 "--agent-model", "m", "--base-url", "http://127.0.0.1:9/v1"]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert f"no such file in the working folder ({reference / 'schemas'})" in said
    assert str(tmp_path / "cache") in said and "occubench data download traineebench" in said
