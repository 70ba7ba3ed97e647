"""``occubench worlds push`` and ``pull`` as a user runs them, against a real registry on loopback: a package pulled by
version and by digest installs the same files; a package tampered with in the registry's blob store, or one whose
world tries to leave the sandbox, is refused with exit 2 and nothing installed."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from occubench.sandbox import Provider
from tests.hub.oci_server import OciServer, oci_server
from tests.sandbox.corpus import Attack, make_corpus_world

__all__ = ["oci_server"]  # the fixture, used by name


def occubench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OCCUBENCH_CACHE_DIR": str(cwd / "cache"), "COLUMNS": "500"}
    return subprocess.run([sys.executable, "-m", "occubench", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600, check=False)


def installed(cwd: Path) -> list[str]:
    store = cwd / "cache" / "worlds" / "sha256"
    return sorted(path.name for path in store.iterdir()) if store.exists() else []


def package(tmp_path: Path, attack: Attack, port: int = 9) -> Path:
    folder = tmp_path / "pkg"
    make_corpus_world(folder / "executable", attack, mark=tmp_path / "outside" / "escaped", port=port,
                      harness=os.getpid())
    (folder / "executable" / "victim.txt").unlink()  # the corpus's bait file, not a world
    return folder


def test_pulled_by_version_or_digest_the_same_package_installs_once(tmp_path: Path, oci_server: OciServer,
                                                                    sandbox: Provider) -> None:
    package(tmp_path, Attack())
    reference = f"oci://{oci_server.host}/acme/claims"
    pushed = occubench("worlds", "push", "pkg", f"{reference}:1.0", "--name", "acme/claims", "--version", "1.0",
                       cwd=tmp_path)
    assert pushed.returncode == 0, pushed.stderr
    digest = pushed.stdout.split("digest: ")[1].split()[0]
    assert f"1.0  {digest}" in occubench("worlds", "list", reference, cwd=tmp_path).stdout
    by_version = occubench("worlds", "pull", f"{reference}:1.0", cwd=tmp_path)
    assert by_version.returncode == 0, by_version.stderr
    assert installed(tmp_path) == [digest.removeprefix("sha256:")]
    by_digest = occubench("worlds", "pull", f"{reference}@{digest}", cwd=tmp_path)
    assert by_digest.returncode == 0 and installed(tmp_path) == [digest.removeprefix("sha256:")]
    assert digest in occubench("worlds", "list", cwd=tmp_path).stdout
    assert occubench("worlds", "remove", digest, cwd=tmp_path).returncode == 0 and installed(tmp_path) == []
    assert occubench("worlds", "remove", digest, cwd=tmp_path).returncode == 2


def test_a_package_tampered_with_in_the_registrys_blob_store_is_refused(tmp_path: Path, oci_server: OciServer,
                                                                         sandbox: Provider) -> None:
    package(tmp_path, Attack())
    reference = f"oci://{oci_server.host}/acme/claims:1.0"
    assert occubench("worlds", "push", "pkg", reference, "--name", "acme/claims", "--version", "1.0",
                     cwd=tmp_path).returncode == 0
    blobs = [path for path in (oci_server.storage / "docker" / "registry" / "v2" / "blobs").rglob("data")
             if path.stat().st_size > 1024]  # the package's layer: the manifests and the empty config are small
    (layer,) = blobs
    data = bytearray(layer.read_bytes())
    data[len(data) // 2] ^= 1
    layer.write_bytes(bytes(data))
    pulled = occubench("worlds", "pull", reference, cwd=tmp_path)
    assert pulled.returncode == 2 and "tampered" in pulled.stderr
    assert installed(tmp_path) == []


def test_a_package_whose_world_tries_to_leave_the_sandbox_is_refused(tmp_path: Path, oci_server: OciServer,
                                                                      sandbox: Provider) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.setblocking(False)
        attack = Attack('import socket\n    socket.create_connection(("127.0.0.1", PORT), timeout=5)\n'
                        '    open("MARK", "w").write("out")\n', when="import")
        package(tmp_path, attack, listener.getsockname()[1])
        reference = f"oci://{oci_server.host}/acme/escape:1.0"
        assert occubench("worlds", "push", "pkg", reference, "--name", "acme/escape", "--version", "1.0",
                         cwd=tmp_path).returncode == 0  # pushing runs none of it
        pulled = occubench("worlds", "pull", reference, cwd=tmp_path)
        assert pulled.returncode == 2 and "executable/" in pulled.stderr
        try:
            listener.accept()
            connected = True
        except BlockingIOError:
            connected = False
    assert not connected and not (tmp_path / "outside").exists() and installed(tmp_path) == []
