"""What the harness reads of a world folder it did not make: no link is followed, no file read whole, nothing past
the size limits. A folder that breaks a rule is refused (exit status 2, no traceback) before anything reads it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from occubench.cli import main
from occubench.executable.registry import _WORLDS

BASE = "insurance_claims"
SECRET = "s3cret-only-in-this-file-7f3a9c"


def world_copy(root: Path) -> Path:
    folder = root / BASE
    shutil.copytree(_WORLDS / BASE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def commands(worlds: Path, runs: Path) -> list[list[str]]:
    """Every command that loads a world folder, and one that hashes its files for the run's identity."""
    return [["validate", "--worlds-dir", str(worlds)], ["suites", "--worlds-dir", str(worlds)],
            ["tasks", "--suite", "executable", "--worlds-dir", str(worlds)],
            ["run", "--suite", "executable", "--worlds-dir", str(worlds), "--agent", "reference", "--output-dir",
             str(runs), "--run-name", "r"]]


def refused_everywhere(tmp_path: Path, capsys: pytest.CaptureFixture[str], because: str) -> str:
    """Run every command on ``tmp_path``/worlds; each exits 2 saying ``because``; all they printed."""
    printed = ""
    for command in commands(tmp_path / "worlds", tmp_path / "runs"):
        assert main(command) == 2, command
        out, err = capsys.readouterr()
        assert because in err and "Traceback" not in err + out and "MemoryError" not in err + out, (command, err)
        printed += out + err
    return printed


def test_a_sparse_8_gb_file_is_refused_by_its_size_without_being_read(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    folder = world_copy(tmp_path / "worlds")
    with (folder / "data.bin").open("wb") as handle:
        os.truncate(handle.fileno(), 8 << 30)
    refused_everywhere(tmp_path, capsys, f"{folder / 'data.bin'}: 8,589,934,592 bytes")
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("where", ["notes.txt", "seed.sql", "sub/notes.txt", "the folder itself", "a subfolder"])
def test_a_link_to_a_file_outside_is_refused_and_its_content_goes_nowhere(
        where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    secret = tmp_path / "elsewhere" / "secret.sql"
    secret.parent.mkdir()
    secret.write_text(f"-- {SECRET}\n")
    folder = world_copy(tmp_path / "elsewhere" if where == "the folder itself" else tmp_path / "worlds")
    if where == "the folder itself":
        (tmp_path / "worlds").mkdir()
        (tmp_path / "worlds" / BASE).symlink_to(folder)
        link = tmp_path / "worlds" / BASE
    elif where == "a subfolder":
        (folder / "sub").symlink_to(secret.parent)
        link = folder / "sub"
    else:
        link = folder / where
        link.parent.mkdir(exist_ok=True)
        link.unlink(missing_ok=True)
        link.symlink_to(secret)
    printed = refused_everywhere(tmp_path, capsys, f"{link}: a symbolic link")
    assert SECRET not in printed
    written = [path for path in tmp_path.rglob("*") if path.is_file() and not path.is_symlink()
               and path != secret and not path.is_relative_to(tmp_path / "elsewhere")]
    assert all(SECRET not in path.read_text(errors="replace") for path in written)
    assert not (tmp_path / "runs").exists()


def test_a_fifo_in_a_world_folder_is_refused_without_blocking(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    folder = world_copy(tmp_path / "worlds")
    os.mkfifo(folder / "pipe")  # opening it to read would wait for a writer forever
    refused_everywhere(tmp_path, capsys, f"{folder / 'pipe'}: not a regular file")
