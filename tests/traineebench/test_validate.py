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
