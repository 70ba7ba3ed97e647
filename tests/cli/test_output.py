"""What the command prints, read by people at 80 columns and by scripts in a pipe: help without reST markup and with
a description for every command, run folders and digests never broken across lines, and --json for each."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from occubench.cli import build_parser, main
from occubench.sandbox import Provider
from tests.hub.oci_server import OciServer, oci_server
from tests.hub.packages import package_folder

__all__ = ["oci_server"]  # the fixture, used by name

DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def occubench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command as a script runs it: stdout a pipe, 80 columns."""
    env = {**os.environ, "COLUMNS": "80", "OCCUBENCH_CACHE_DIR": str(cwd / "cache")}
    done = subprocess.run([sys.executable, "-m", "occubench", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def _commands(parser: argparse.ArgumentParser, path: list[str]) -> list[list[str]]:
    found = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found += _commands(child, [*path, name])
    return found


@pytest.mark.parametrize("command", _commands(build_parser(), [])[1:], ids=" ".join)
def test_every_command_says_what_it_does_in_plain_text(command: list[str], capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as exited:
        main([*command, "--help"])
    shown = capsys.readouterr().out
    assert exited.value.code == 0
    # After the usage block, a description before the first list of arguments.
    description = shown.split("\n\n")[1]
    assert description.strip() and not description.startswith(("positional arguments:", "options:")), shown
    assert "``" not in shown and not re.search(r":[a-z]+:`", shown), shown
    assert max(map(len, shown.splitlines())) <= 80, shown


def test_run_help_names_every_installed_suite(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    suites = [point.name for point in entry_points(group="occubench.suites")]
    assert {"occubench", "executable", "workplace", "awm", "traineebench", "twin"} <= set(suites)
    assert all(re.search(rf"\b{re.escape(name)}\b", shown) for name in suites), shown


def test_the_run_summary_names_its_folder_whole_in_a_pipe_and_in_json(tmp_path: Path) -> None:
    name = "a-run-whose-name-alone-is-wider-than-eighty-columns__" + "x" * 40
    run = ("run", "--suite", "executable", "--agent", "reference", "--limit", "1", "--run-name", name)
    printed = occubench(*run, cwd=tmp_path)
    assert re.findall(r"episode\(s\) in (\S+)", printed.stdout) == [f"results/{name}"]
    assert re.findall(r"Run directory: (\S+)", printed.stderr) == [f"results/{name}"]
    [summary] = json.loads(occubench(*run, "--json", cwd=tmp_path).stdout)["runs"]
    assert summary["run_dir"] == f"results/{name}" and (tmp_path / summary["run_dir"]).is_dir()
    assert (summary["passed"], summary["evaluated"], summary["errors"]) == (1, 1, 0)


def test_worlds_digests_are_whole_in_a_pipe_and_the_same_in_json(tmp_path: Path, oci_server: OciServer,
                                                                 sandbox: Provider) -> None:
    package_folder(tmp_path / "pkg")
    # A repository path long enough that the pushed references overflow 80 columns.
    reference = f"oci://{oci_server.host}/acme/a-package-of-worlds-with-a-rather-long-repository-name/claims"
    pushed = occubench("worlds", "push", "pkg", f"{reference}:1.0", "--name", "acme/claims", "--version", "1.0",
                       cwd=tmp_path)
    [digest] = set(DIGEST.findall(pushed.stdout))
    assert f"{reference}@{digest}" in pushed.stdout.split()  # the pinned reference, one word on one line
    for command in (("worlds", "list", reference), ("worlds", "pull", f"{reference}:1.0"), ("worlds", "list")):
        assert DIGEST.findall(occubench(*command, cwd=tmp_path).stdout) == [digest], command
    as_json = [json.loads(occubench(*command, "--json", cwd=tmp_path).stdout) for command in (
        ("worlds", "list", reference), ("worlds", "pull", f"{reference}@{digest}"), ("worlds", "list"))]
    assert [as_json[0][0]["digest"], as_json[1]["digest"], as_json[2][0]["digest"]] == [digest] * 3
    assert Path(as_json[1]["path"]).is_dir() and as_json[2][0]["path"] == as_json[1]["path"]
