"""An agent's shell command in the sandbox: it works in the day's workspace, and whatever it tries has no effect
outside it — no host file read or written, no connection, no process left behind, no unbounded output."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from occubench.sandbox import Provider
from occubench.sandbox.cgroups import pids_root, prefix
from occubench.sandbox.shell import MAX_OUTPUT, run_command

SECRET = "host-secret-8d1f"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "workspace").mkdir()
    (tmp_path / "secret.txt").write_text(SECRET)
    return tmp_path / "workspace"


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.create_server(("127.0.0.1", 0))
    server.setblocking(False)
    yield server
    server.close()


def _running(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return found


def test_a_command_works_in_the_workspace_with_python_and_its_packages(sandbox: Provider, workspace: Path) -> None:
    script = "import sqlite3, sys; sqlite3.connect('data.db').execute('CREATE TABLE t (x)'); print(sys.version_info[0])"
    result = run_command(sandbox, workspace, f"echo hi > a.txt && python -c \"{script}\" && ls", 30)
    assert result.exit_code == 0 and result.output.split() == ["3", "a.txt", "data.db"]
    assert (workspace / "a.txt").read_text() == "hi\n" and (workspace / "data.db").is_file()


def test_a_hostile_command_has_no_effect_outside_the_workspace(sandbox: Provider, workspace: Path,
                                                              listener: socket.socket) -> None:
    outside, secret = workspace.parent / "escaped", workspace.parent / "secret.txt"
    port = listener.getsockname()[1]
    attacks = [
        f"cat {secret} ../secret.txt /proc/1/root{secret}; ls {workspace.parent}",
        f"touch {outside} ../escaped /tmp/x; echo x > {outside}",
        f"python -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=1)\"",
        "kill -9 -1; kill -9 1",
    ]
    for attack in attacks:
        result = run_command(sandbox, workspace, attack, 20)
        assert SECRET not in result.output
    assert not outside.exists() and secret.read_text() == SECRET
    with pytest.raises(BlockingIOError):
        listener.accept()
    assert run_command(sandbox, workspace, "echo alive", 20).output == "alive\n"  # the harness's processes live on


@pytest.mark.slow
def test_a_fork_bomb_a_flood_and_a_sleeper_end_within_their_limits(sandbox: Provider, workspace: Path) -> None:
    bomb = run_command(sandbox, workspace, "bash -c 'f() { f | f & }; f; sleep 4242'", 10)
    assert bomb.exit_code != 0 or bomb.exit_code is None
    flood = run_command(sandbox, workspace, "yes", 3)
    assert flood.exit_code is None and len(flood.output) == MAX_OUTPUT and flood.left_out > 0
    left = run_command(sandbox, workspace, "sleep 4343 & echo started", 10)
    assert left.exit_code == 0 and left.output == "started\n"
    assert _running("4242") == [] and _running("4343") == []  # nothing left behind
    if (root := pids_root()) is not None:
        assert not list(root.glob(f"{prefix('shell')}*"))  # nor a control group of this process's commands
