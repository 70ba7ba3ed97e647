"""``--worlds-dir DIR``: world folders from outside the package in ``suites``, ``validate``, ``run`` and ``serve``,
each ``__init__.py`` checked by the sandbox's allow-list before it runs; a refused or broken folder is a
configuration error that names the file (and the line)."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from occubench.cli import main
from occubench.errors import ConfigError
from occubench.executable.registry import _WORLDS, load_world, world_named, worlds_of

TWO = ("insurance_claims", "warehouse_inventory")


@pytest.fixture
def worlds_dir(tmp_path: Path) -> Path:
    """Two built-in worlds copied out of the package."""
    for name in TWO:
        shutil.copytree(_WORLDS / name, tmp_path / "worlds" / name, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "worlds"


def test_suites_validate_and_run_take_the_folder_instead_of_the_built_in_worlds(
        worlds_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["suites", "--worlds-dir", str(worlds_dir), "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)["executable"]["listing"]
    assert [entry["name"] for entry in listing] == list(TWO)
    assert main(["validate", "--worlds-dir", str(worlds_dir)]) == 0
    assert "6/6 tasks valid" in capsys.readouterr().out
    assert main(["run", "--suite", "executable", "--worlds-dir", str(worlds_dir), "--agent", "reference",
                 "--output-dir", str(tmp_path / "runs"), "--run-name", "r"]) == 0
    results = [json.loads(line) for line in (tmp_path / "runs" / "r" / "results.jsonl").read_text().splitlines()]
    assert len(results) == 6 and all(r["is_correct"] for r in results)
    assert {r["task_id"].split("/")[0] for r in results} == set(TWO)


def test_serve_takes_a_world_of_the_folder(worlds_dir: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def tools() -> list[str]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "occubench", "serve", "--worlds-dir",
                                                                      str(worlds_dir), "--env", "warehouse_inventory"])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            return [tool.name for tool in (await client.list_tools()).tools]
    assert len(anyio.run(tools)) == len(load_world("warehouse_inventory").tools)


def test_hostile_code_in_a_world_folder_is_refused_before_it_runs(worlds_dir: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "ran"
    init = worlds_dir / "insurance_claims" / "__init__.py"
    init.write_text(init.read_text() + f"\n\nimport os\nopen({str(marker)!r}, 'w').write(os.getcwd())\n")
    assert main(["validate", "--worlds-dir", str(worlds_dir)]) == 2
    error = capsys.readouterr().err
    lines = len(init.read_text().splitlines())
    assert f"{init}:{lines - 1}: `import os` is not allowed" in error
    assert f"{init}:{lines}: the builtin 'open' is not allowed" in error
    assert not marker.exists()  # refused, never run


@pytest.mark.parametrize(("breakage", "message"), [
    (lambda folder: (folder / "seed.sql").unlink(), "no seed.sql"),
    (lambda folder: (folder / "seed.sql").write_text("INSERT INTO nowhere VALUES (1);"), "seed.sql: no such table: "
                                                                                          "nowhere"),
    (lambda folder: folder.rename(folder.parent / "claims"), "the world is named 'insurance_claims' but its folder "
                                                             "'claims'"),
    (lambda folder: (folder / "__init__.py").write_text("x = 1\n"), "defines no `world = World(...)`"),
    (lambda folder: (folder / "__init__.py").write_text("x = 1 / 0\n"), "the world does not load: "
                                                                         "ZeroDivisionError"),
])
def test_a_broken_world_folder_is_a_configuration_error_naming_it(worlds_dir: Path,
                                                                  breakage: Callable[[Path], object],
                                                                  message: str) -> None:
    breakage(worlds_dir / "insurance_claims")
    with pytest.raises(ConfigError, match="insurance_claims|claims") as error:
        worlds_of(worlds_dir)
    assert message in str(error.value)


def test_a_missing_or_empty_folder_and_an_unknown_world_are_configuration_errors(worlds_dir: Path,
                                                                                  tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not a folder"):
        worlds_of(tmp_path / "nowhere")
    with pytest.raises(ConfigError, match="holds no world folder"):
        worlds_of(tmp_path)
    with pytest.raises(ConfigError, match="unknown environment 'pharmacy_dispensing'; in .*: insurance_claims, "
                                          "warehouse_inventory"):
        world_named("pharmacy_dispensing", worlds_of(worlds_dir), worlds_dir)


def test_a_folders_sql_cannot_attach_a_file(worlds_dir: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "escaped.db"
    schema = worlds_dir / "insurance_claims" / "schema.sql"
    schema.write_text(f"ATTACH DATABASE '{target}' AS outside;\nCREATE TABLE outside.t (x);\n"
                      + schema.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["validate", "--worlds-dir", str(worlds_dir)]) == 2
    assert f"{schema}: not authorized" in capsys.readouterr().err
    assert not target.exists()
