"""A real OCI registry on 127.0.0.1 for the hub's tests: Distribution's ``registry`` (the Debian package
``docker-registry``), storing blobs under the test's tmp_path, where a test can reach them to tamper with them."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

BINARY = "docker-registry"
_CONFIG = """\
version: 0.1
log:
  level: error
storage:
  filesystem:
    rootdirectory: {root}
  delete:
    enabled: true
http:
  addr: 127.0.0.1:{port}
"""
#: Distribution's "silly" access controller: every request without an Authorization header is answered 401, with a
#: token realm (the registry itself) that gives no token: a registry that wants credentials we do not have.
_SILLY_AUTH = """auth:
  silly:
    realm: http://127.0.0.1:{port}/token
    service: occubench-tests
"""


def require(reason: str | None) -> None:
    """Skip the test when ``reason`` says what is missing; fail it instead where ``OCCUBENCH_REQUIRE_HUB`` is set
    (as ``.ci/run`` sets it), so the hub's tests cannot go quietly unrun there."""
    if reason is None:
        return
    if os.environ.get("OCCUBENCH_REQUIRE_HUB"):
        pytest.fail(f"OCCUBENCH_REQUIRE_HUB is set but {reason}")
    pytest.skip(reason)


@dataclass(frozen=True)
class OciServer:
    """A running registry: its ``host`` (``127.0.0.1:PORT``) and the folder its filesystem storage is in."""

    host: str
    storage: Path

    def blob_file(self, digest: str) -> Path:
        """Where the registry keeps the blob ``digest`` (``sha256:HEX``) on disk."""
        hex_digest = digest.removeprefix("sha256:")
        return self.storage / "docker" / "registry" / "v2" / "blobs" / "sha256" / hex_digest[:2] / hex_digest / "data"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_ready(process: subprocess.Popen[bytes], url: str, log: Path, ready: tuple[int, ...]) -> None:
    deadline = time.monotonic() + 60  # a start-up bound, not a timing assertion: it takes well under a second
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{BINARY} exited with {process.returncode} at start: {log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status in ready:
                    return
        except urllib.error.HTTPError as exc:
            if exc.code in ready:
                return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.05)
    pytest.fail(f"{BINARY} did not answer {url} within 60 s: {log.read_text(errors='replace')}")


@contextmanager
def running(folder: Path, *, wants_credentials: bool = False) -> Iterator[OciServer]:
    """A registry storing under ``folder`` while the block runs; ``wants_credentials``: one that refuses every
    request without them."""
    require(None if shutil.which(BINARY) else f"there is no {BINARY} program here (Debian: apt-get install "
                                              "docker-registry)")
    folder.mkdir(exist_ok=True)
    storage = folder / "registry"
    port = _free_port()
    config = folder / "registry.yml"
    config.write_text(_CONFIG.format(root=storage, port=port) + (_SILLY_AUTH.format(port=port) if wants_credentials
                                                                  else ""))
    log = folder / "registry.log"
    with log.open("wb") as out:
        process = subprocess.Popen([shutil.which(BINARY) or BINARY, "serve", str(config)], stdout=out,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        _wait_ready(process, f"http://127.0.0.1:{port}/v2/", log, (401,) if wants_credentials else (200,))
        yield OciServer(host=f"127.0.0.1:{port}", storage=storage)
    finally:
        process.kill()
        process.wait()


@pytest.fixture
def oci_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[OciServer]:
    """A registry of its own for the test, with a temporary HOME (no developer's Docker credentials are read) and
    loopback outside any proxy."""
    try:
        import oras.client  # noqa: F401  (the backend's client: the `hub` extra)
    except ImportError:
        require("oras is not installed (pip install -e '.[hub]')")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("DOCKER_CONFIG", raising=False)
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.setenv(name, "127.0.0.1,localhost")
    with running(tmp_path) as server:
        yield server
