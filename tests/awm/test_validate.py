"""`occubench validate --suite awm`: every scenario's parts and defects, the runnable ones loaded in their worker
(tools listed, verifiers compiled and run on the initial database), and an exit status that fails only for a
runnable scenario that does not load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from occubench.awm.data import FILES
from occubench.cli import main


def _validate(folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["validate", "--suite", "awm", "--data-dir", str(folder)])
    return code, " ".join(capsys.readouterr().out.split())


def test_the_samples_parts_and_defects(data: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # one line per scenario
    code, said = _validate(data, capsys)
    assert code == 0 and "2/7 scenarios run" in said
    assert "content_platform_1 │ yes │ 10 │ 34 │ 0 │ 0 │ no verifier for tasks" in said
    assert "code_hosting_2 │ yes │ 10 │ 61 │" in said and "no seed rows" in said
    # e_commerce_33 has no application, but its verifiers are compiled: the published one of task 2 does not.
    assert "e_commerce_33 │ no │ 10 │ - │ 3 │ 3 │ no application" in said
    assert "code-augmented verifier of task 2: does not compile" in said
    assert "verifier of task 0: does not compile" not in said


def test_a_runnable_scenario_that_does_not_load_fails_the_validation(
        data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    lines = [json.loads(line) for line in (data / FILES["app"]).read_text().splitlines()]
    for line in lines:
        if line["scenario"] == "content_platform_1":
            line["full_code"] = "raise RuntimeError('broken at import')\n"
    (data / FILES["app"]).write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, said = _validate(data, capsys)
    assert code == 1 and "1 runnable ones do not load: content_platform_1" in said
    assert "does not load" in said and "broken at import" in said
