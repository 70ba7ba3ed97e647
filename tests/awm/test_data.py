"""An AWM-format set read as data: the published sample's parts per scenario and their defects, and hostile lines
recorded as problems naming file and line, never raised."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from occubench.awm.data import FILES, load_set
from occubench.errors import ConfigError


def test_the_published_samples_parts_and_defects(sample: Path) -> None:
    awm = load_set(sample)
    assert awm.problems == []
    content, code, shop = (awm.scenarios[name] for name in ("content_platform_1", "code_hosting_2", "e_commerce_33"))
    # content_platform_1: everything but a verifier; code_hosting_2: no seed rows; e_commerce_33: no application.
    assert content.runnable and content.defects() == [f"no verifier for tasks {', '.join(map(str, range(10)))}"]
    assert code.runnable and "no seed rows" in code.defects()
    assert not shop.runnable and shop.defects() == ["no application", "no verifier for tasks 3, 4, 5, 6, 7, 8, 9"]
    assert sorted(shop.verifiers) == [0, 1, 2]
    assert sorted(shop.pure_verifiers) == [0, 1, 2] and len(shop.tasks) == 10
    # A scenario of gen_scenario.jsonl alone: a description and nothing to run.
    assert awm.scenarios["marketplace_1"].description and not awm.scenarios["marketplace_1"].runnable
    # communication_messaging_1: an application and seed rows, but no schema to build its database from.
    assert awm.scenarios["communication_messaging_1"].defects() == ["no schema", "no tasks", "no API spec"]


@pytest.mark.parametrize(("line", "problem"), [
    (b"{not json", "unreadable"),
    (b"\xff\xfe", "unreadable"),
    (b"[1, 2]", "a JSON list, not an object"),
    (b'{"scenario": 7, "tasks": []}', "no scenario name"),
    (json.dumps({"scenario": "s" * 200, "tasks": []}).encode(), "no scenario name"),
    (b'{"scenario": "s", "tasks": "do it"}', "tasks is not a list of texts"),
    (b'{"scenario": "s", "tasks": [1]}', "tasks is not a list of texts"),
    (b"[" * 300 + b"]" * 300, "unreadable"),
    (b'{"scenario": "s", "tasks": ["' + b"x" * (17 << 20) + b'"]}', "unreadable"),
])
def test_hostile_lines_are_problems_naming_file_and_line(tmp_path: Path, line: bytes, problem: str) -> None:
    (tmp_path / FILES["tasks"]).write_bytes(b'{"scenario": "ok", "tasks": ["t"]}\n' + line + b"\n")
    awm = load_set(tmp_path)
    assert awm.scenarios["ok"].tasks == ["t"]
    [found] = awm.problems
    assert found.startswith(f"{FILES['tasks']}:2: ") and problem in found


def test_a_verifier_line_needs_an_index_and_code(tmp_path: Path) -> None:
    lines = [{"scenario": "s", "task_idx": 0, "verification": {"code": "def verify_task(a, b): ..."}},
             {"scenario": "s", "task_idx": True, "verification": {"code": "x"}},
             {"scenario": "s", "task_idx": 1, "verification": "x"}]
    (tmp_path / FILES["verifier"]).write_text("".join(json.dumps(line) + "\n" for line in lines))
    awm = load_set(tmp_path)
    assert list(awm.scenarios["s"].verifiers) == [0] and len(awm.problems) == 2


def test_a_folder_without_the_format_or_with_a_link_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no AWM-format file"):
        load_set(tmp_path)
    secret = tmp_path / "secret"
    secret.write_text('{"scenario": "s", "tasks": ["t"]}\n')
    (tmp_path / FILES["tasks"]).symlink_to(secret)
    with pytest.raises(ConfigError, match="symbolic link"):
        load_set(tmp_path)
