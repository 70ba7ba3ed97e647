"""A real ``git daemon`` on 127.0.0.1 for the git backend's tests, serving the bare repositories of a temporary
folder, pushes allowed. The daemon makes no repository on a push (nor does any git host), so a test asks for each
one it pushes to first. HOME is a temporary folder while it runs: no git config or credential of the developer's
is read."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class GitServer:
    """The daemon's folder of repositories and its port."""

    root: Path
    port: int

    def repository(self, name: str) -> str:
        """A new empty bare repository ``name`` (``claims.git``) the daemon serves; its ``git://`` URL."""
        git("init", "--quiet", "--bare", str(self.root / name))
        return self.url(name)

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"


def git(*args: str, cwd: Path | None = None, stdin: str | None = None) -> str:
    """Plain git, as a user (or an attacker) runs it: its output."""
    done = subprocess.run(["git", "-c", "user.name=test", "-c", "user.email=test@localhost", *args], cwd=cwd,
                          env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}, input=stdin,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(name="git_server")
def serve_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitServer]:
    """A git daemon on a free loopback port. Skipped when git or its daemon is not installed, unless
    ``OCCUBENCH_REQUIRE_HUB`` is set (as ``.ci/run`` sets it), where that fails the test."""
    daemon = Path(subprocess.run(["git", "--exec-path"], capture_output=True, text=True).stdout.strip(),
                  "git-daemon") if shutil.which("git") else None
    if daemon is None or not daemon.exists():
        reason = "git or git daemon is not installed (Debian: apt-get install git)"
        if os.environ.get("OCCUBENCH_REQUIRE_HUB"):
            pytest.fail(f"OCCUBENCH_REQUIRE_HUB is set but {reason}")
        pytest.skip(reason)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    for name in [name for name in os.environ if name.startswith("GIT_")]:
        monkeypatch.delenv(name)
    root = tmp_path_factory.mktemp("git-root")
    server = GitServer(root, _free_port())
    log = root.parent / f"{root.name}-daemon.log"
    with log.open("wb") as errors:
        process = subprocess.Popen(["git", "daemon", "--listen=127.0.0.1", f"--port={server.port}",
                                    f"--base-path={root}", "--export-all", "--enable=receive-pack", "--reuseaddr",
                                    "--informative-errors", str(root)], stdout=subprocess.DEVNULL, stderr=errors,
                                   env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"})
    try:
        deadline = time.monotonic() + 30
        while True:  # until it accepts connections
            try:
                socket.create_connection(("127.0.0.1", server.port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"git daemon did not start on port {server.port}: {log.read_text()}")
                time.sleep(0.05)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
