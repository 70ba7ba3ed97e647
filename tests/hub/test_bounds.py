"""Bounds on what a registry can make a pull download or wait for, against hostile registries the tests write
(tests/hub/hostile.py): a Hub whose manifest is 301 MB (announced, or announced small and sent anyway), and
registries of each kind that answer a byte at a time, or not at all. Each runs `occubench worlds pull` (and `list`)
as a user does, and checks the effect: how many bytes the server got to send, that the command ended with exit
status 2, and that nothing is left staged or installed."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hub.hostile import Connection, serving

HUGE = 301 << 20  # what a hostile manifest holds, announced or not
LIMIT = 64 << 20  # a package file, a manifest among them, has at most 64 MB
COMMIT = "c0ffee" * 6 + "c0ff"
MANIFEST = "occubench-package.json"
#: A bound on how long a test waits for the command: generous, it only proves "not for ever".
PATIENCE = 120


def pull(tmp_path: Path, *args: str, timeout: str = "3600", **env: str) -> subprocess.CompletedProcess[str]:
    """`occubench worlds ARGS`, with a cache of the test's own and the hub's deadline ``timeout`` seconds."""
    environment = {**os.environ, "OCCUBENCH_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path),
                   "HF_HOME": str(tmp_path / "hf"), "HF_HUB_DISABLE_XET": "1", "NO_PROXY": "127.0.0.1",
                   "no_proxy": "127.0.0.1", "OCCUBENCH_HUB_TIMEOUT": timeout, "COLUMNS": "500", **env}
    environment.pop("HF_TOKEN", None)
    return subprocess.run([sys.executable, "-m", "occubench", "worlds", *args], env=environment,
                          capture_output=True, text=True, timeout=PATIENCE, check=False)


def nothing_left(tmp_path: Path) -> None:
    """Nothing installed, nothing staged: the store holds no package and its staging folder is empty."""
    store = tmp_path / "cache" / "worlds"
    assert not (store / "sha256").exists() or not any((store / "sha256").iterdir())
    assert not (store / "tmp").exists() or not any((store / "tmp").iterdir())


def hub(manifest: Callable[[str, Connection], None], listed: int = 1000) -> Callable[[str, str, Connection], None]:
    """A Hub-compatible server of one dataset repository, acme/huge, version 1.0 (no digest tag: resolving it reads
    the manifest), whose manifest ``manifest`` answers (HEAD and GET) and which its listing says has ``listed``
    bytes."""
    def answer(method: str, path: str, conn: Connection) -> None:
        if path.startswith("/api/datasets/acme/huge/revision/"):
            conn.json(json.dumps({"id": "acme/huge", "sha": COMMIT, "private": False}).encode())
        elif path.startswith("/api/datasets/acme/huge/refs"):
            conn.json(json.dumps({"branches": [], "converts": [], "tags": [
                {"name": "1.0", "ref": "refs/tags/1.0", "targetCommit": COMMIT}]}).encode())
        elif path.startswith(f"/api/datasets/acme/huge/tree/{COMMIT}"):
            conn.json(json.dumps([{"type": "file", "path": MANIFEST, "size": listed, "oid": "0" * 40}]).encode())
        elif path == f"/datasets/acme/huge/resolve/{COMMIT}/{MANIFEST}":
            manifest(method, conn)
        else:
            conn.answer("404 Not Found", {"Content-Length": "0"})
    return answer


def announced(size: int) -> Callable[[str, Connection], None]:
    """A manifest the Hub says has ``size`` bytes, and that holds 301 MB whatever it says."""
    def manifest(method: str, conn: Connection) -> None:
        headers = {"ETag": '"e"', "X-Repo-Commit": COMMIT, "Content-Type": "application/octet-stream"}
        if method == "HEAD":
            conn.answer("200 OK", {**headers, "Content-Length": str(size)})
            return
        # No length on the body itself: it ends when the connection does, so only the reader can stop it.
        conn.answer("200 OK", {**headers, "Connection": "close"})
        conn.flood(HUGE)
        conn.sock.close()
    return manifest


@pytest.mark.slow  # commands run one after another, each waiting out a deadline or a flood
def test_a_huge_manifest_the_hub_announces_is_not_downloaded(tmp_path: Path) -> None:
    with serving(hub(announced(HUGE))) as (host, counter):
        for args in (["pull", "hf://acme/huge@1.0"], ["list", "hf://acme/huge"]):
            done = pull(tmp_path, *args, HF_ENDPOINT=f"http://{host}")
            assert done.returncode == 2, done.stderr
            assert "hf://acme/huge" in done.stderr
    assert ("GET", f"/datasets/acme/huge/resolve/{COMMIT}/{MANIFEST}") not in counter.requests
    assert ("HEAD", f"/datasets/acme/huge/resolve/{COMMIT}/{MANIFEST}") in counter.requests
    assert counter.sent < 64 << 10  # the API's answers and headers: not a byte of the manifest
    nothing_left(tmp_path)


@pytest.mark.slow  # commands run one after another, each waiting out a deadline or a flood
def test_a_manifest_sent_past_the_size_announced_is_stopped_before_the_limit(tmp_path: Path) -> None:
    """The Hub says 1,000 bytes (in the HEAD answer and its listing) and sends 301 MB: resolving stops reading it
    there, and so does a pull by digest, which downloads the files its listing names."""
    with serving(hub(announced(1000))) as (host, counter):
        done = pull(tmp_path, "pull", "hf://acme/huge@1.0", HF_ENDPOINT=f"http://{host}")
        assert done.returncode == 2, done.stderr
        after_resolve = counter.sent
        done = pull(tmp_path, "pull", "hf://acme/huge@sha256:" + "0" * 64, HF_ENDPOINT=f"http://{host}")
        assert done.returncode == 2, done.stderr
    assert ("GET", f"/datasets/acme/huge/resolve/{COMMIT}/{MANIFEST}") in counter.requests
    # What the kernel's socket buffers took before the client stopped reading, at most: far from 301 MB.
    assert after_resolve < LIMIT and counter.sent - after_resolve < LIMIT
    nothing_left(tmp_path)


def trickling_oci(where: str) -> Callable[[str, str, Connection], None]:
    """A registry whose manifest comes a byte at a time, in its ``where`` (headers or body)."""
    def answer(method: str, path: str, conn: Connection) -> None:
        if where == "headers":
            conn.send(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            conn.trickle(b"a")
        conn.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.oci.image.manifest.v1+json\r\n"
                  b"Content-Length: 100000\r\n\r\n")
        conn.trickle()
    return answer


def trickling_hub(method: str, path: str, conn: Connection) -> None:
    conn.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
    conn.trickle()


@pytest.mark.slow  # commands run one after another, each waiting out a deadline or a flood
@pytest.mark.parametrize("case", ["oci-headers", "oci-body", "hf", "git"])
def test_a_registry_that_trickles_is_given_up_at_the_deadline(case: str, tmp_path: Path) -> None:
    """A byte every 0.2 s (or, for git, nothing at all): each read is answered long before any read timeout, and
    only the deadline of 2 s ends the pull, with exit status 2 and nothing staged. A second deadline-bound
    operation, listing the versions, ends the same way."""
    env: dict[str, str] = {}
    if case == "git":
        with socket.socket() as listener:  # accepts every connection and says nothing
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            held: list[socket.socket] = []
            threading.Thread(target=lambda: held.extend(iter(lambda: listener.accept()[0], None)),
                             daemon=True).start()
            ref = f"git+git://127.0.0.1:{listener.getsockname()[1]}/claims.git"
            done = [pull(tmp_path, "pull", f"{ref}@1.0", timeout="2"), pull(tmp_path, "list", ref, timeout="2")]
            for sock in held:
                sock.close()
    else:
        answer = trickling_hub if case == "hf" else trickling_oci(case.removeprefix("oci-"))
        with serving(answer) as (host, counter):
            if case == "hf":
                ref, env = "hf://acme/slow", {"HF_ENDPOINT": f"http://{host}"}
            else:
                ref = f"oci://{host}/acme/claims"
            done = [pull(tmp_path, "pull", f"{ref}{':' if case != 'hf' else '@'}1.0", timeout="2", **env),
                    pull(tmp_path, "list", ref, timeout="2", **env)]
            assert counter.sent > 0  # it was answering, a byte at a time
    for ended in done:
        assert ended.returncode == 2, ended.stderr
        assert ref in ended.stderr and "within 2 s" in ended.stderr and "OCCUBENCH_HUB_TIMEOUT" in ended.stderr
    nothing_left(tmp_path)


def test_a_deadline_that_is_not_a_number_of_seconds_is_refused(tmp_path: Path) -> None:
    done = pull(tmp_path, "pull", "oci://127.0.0.1:9/acme/claims:1.0", timeout="soon")
    assert done.returncode == 2 and "OCCUBENCH_HUB_TIMEOUT='soon'" in done.stderr
    nothing_left(tmp_path)
