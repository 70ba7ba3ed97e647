"""A shell command's workspace in the sandbox: a file system of its own within a quota, copied back to the day's
folder within the same quota, and whatever an agent leaves there (folders thousands deep, names at the length
limit, sparse files, hard links, links, FIFOs, folders without permissions) walked, measured and removed by the
harness without recursion and without following a link."""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from occubench.errors import AgentOutputError
from occubench.sandbox import Provider
from occubench.sandbox.shell import COMMAND_LIMITS, run_command
from occubench.sandbox.workspace import MAX_DEPTH, MAX_ENTRIES, remove, usage, walk

QUOTA = 8 << 20
LIMITS = replace(COMMAND_LIMITS, workspace_bytes=QUOTA)


def on_disk(folder: Path) -> int:
    """The bytes ``folder`` takes on the host's disk (its blocks, as du counts them), links not followed."""
    total = 0
    for _, entries in walk(folder):
        total += sum(entry.stat(follow_symlinks=False).st_blocks * 512 for entry in entries)
    return total


def chain(root: Path, depth: int, name: str) -> None:
    """``depth`` folders each named ``name``, one in the other, under ``root``, made one level at a time (the whole
    path is far past PATH_MAX when ``name`` is long)."""
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir(name, dir_fd=folder)
        inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
        os.close(folder)
        folder = inner
    os.close(folder)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "notes.txt").write_text("kept\n")
    return tmp_path / "workspace"


def test_a_command_writing_past_the_quota_meets_enospc_and_the_host_keeps_at_most_the_quota(
        sandbox: Provider, workspace: Path) -> None:
    flood = run_command(sandbox, workspace, "head -c 20000000 /dev/zero > big; echo status=$?; "
                                            "for i in 1 2 3 4 5 6 7 8 9; do head -c 1000000 /dev/zero > f$i; done; "
                                            "cat notes.txt", 30, LIMITS)
    assert "No space left on device" in flood.output and "status=1" in flood.output
    assert "kept" in flood.output  # the day's folder was there inside
    assert on_disk(workspace) <= QUOTA and usage(workspace) <= QUOTA
    assert (workspace / "notes.txt").read_text() == "kept\n"
    # The next command finds the workspace as the last one left it, and can free space and write again.
    again = run_command(sandbox, workspace, "rm -f big f*; head -c 3000000 /dev/zero > fresh && ls", 30, LIMITS)
    assert again.exit_code == 0 and again.output.split() == ["fresh", "notes.txt"]
    assert sorted(p.name for p in workspace.iterdir()) == ["fresh", "notes.txt"]
    assert (workspace / "fresh").stat().st_size == 3_000_000


def test_sparse_files_and_hard_links_cost_their_full_size_on_the_way_back(sandbox: Provider,
                                                                         workspace: Path) -> None:
    # Inside, 64 MB sparse and twenty names for it take no space; written out they would take 1.3 GB.
    result = run_command(sandbox, workspace, "truncate -s 60M sparse && for i in $(seq 20); do ln sparse h$i; done "
                                             "&& mkfifo pipe && ln -s /etc/passwd link && echo done", 30, LIMITS)
    assert result.exit_code == 0 and result.output == "done\n"
    assert "past 8 MB" in result.not_kept
    assert on_disk(workspace) <= QUOTA and usage(workspace) <= QUOTA
    assert (workspace / "link").is_symlink() and os.readlink(workspace / "link") == "/etc/passwd"
    assert not (workspace / "pipe").exists()  # a FIFO is not brought back
    assert (workspace / "notes.txt").read_text() == "kept\n"


@pytest.mark.slow  # ten thousand files written to the host's disk
def test_folders_past_the_depth_and_entry_caps_are_not_brought_back(sandbox: Provider, workspace: Path) -> None:
    deep = run_command(sandbox, workspace, "(for i in $(seq 1200); do mkdir d && cd d || exit 1; done) && echo made",
                       60, LIMITS)
    assert deep.output == "made\n" and f"more than {MAX_DEPTH} levels" in deep.not_kept
    levels = sum(1 for _ in walk(workspace / "d"))
    assert levels == MAX_DEPTH
    wide = run_command(sandbox, workspace, f"mkdir w && cd w && seq {MAX_ENTRIES + 500} | xargs touch && echo made",
                       60, LIMITS)
    assert wide.output == "made\n" and "past 10,000" in wide.not_kept
    assert sum(len(entries) for _, entries in walk(workspace)) <= MAX_ENTRIES
    remove(workspace)
    assert not workspace.exists()


@pytest.mark.slow  # 1,200 levels made and removed on the host's disk
def test_a_tree_thousands_deep_with_long_names_and_odd_entries_is_walked_within_caps_and_removed(
        tmp_path: Path) -> None:
    root, outside = tmp_path / "left", tmp_path / "outside.txt"
    root.mkdir()
    outside.write_text("not the agent's")
    name = "n" * 250
    chain(root, 1_200, name)  # a path of 300,000 characters
    os.mkfifo(root / "pipe")
    (root / "link").symlink_to(outside)
    (root / "folder-link").symlink_to(tmp_path)
    (root / "locked").mkdir()
    (root / "locked" / "inside").write_text("x")
    with pytest.raises(AgentOutputError, match="cannot be listed"):  # its paths are too long to name
        for _ in walk(root):
            pass
    chain(root / "locked", MAX_DEPTH + 2, "d")
    with pytest.raises(AgentOutputError, match=f"more than {MAX_DEPTH} levels"):
        for _ in walk(root / "locked"):
            pass
    (root / "locked" / "d").chmod(0)
    (root / "locked").chmod(0o500)
    remove(root)
    assert not root.exists() and outside.read_text() == "not the agent's" and tmp_path.is_dir()


def test_remove_takes_a_file_a_link_or_nothing(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "file")
    remove(tmp_path / "link")
    assert (tmp_path / "file").is_file() and not (tmp_path / "link").is_symlink()
    remove(tmp_path / "file")
    remove(tmp_path / "never")
    assert list(tmp_path.iterdir()) == []
    assert stat.S_ISDIR(tmp_path.stat().st_mode)
