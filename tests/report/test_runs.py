"""Run directories as reports load them."""

from __future__ import annotations

from pathlib import Path

import pytest

from occubench.report.runs import load_run_dirs
from tests.report.conftest import result, write_run


def test_a_directory_mixing_configurations_is_warned_about(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    mixed = write_run(tmp_path, "mixed", [result(1, True, config_hash="aaaa"), result(2, False, config_hash="bbbb")])
    write_run(tmp_path, "clean", [result(1, True, config_hash="aaaa"), result(2, True, config_hash="aaaa")])
    runs = load_run_dirs([mixed, tmp_path / "clean"])
    assert [len(run.results) for run in runs] == [2, 2]
    err = capsys.readouterr().err
    assert f"{mixed} holds results of 2 different configurations (config_hash aaaa, bbbb)" in err
    assert "clean" not in err
