"""Tests for occubench.simulated.data: download, verification and path resolution.

Downloads go to a tiny HTTP server on 127.0.0.1 that serves tarballs built here from the local
copy of the upstream data; nothing touches the internet.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from occubench import cli
from occubench.errors import ConfigError, DataNotFoundError
from occubench.simulated import data
from tests.conftest import NO_SHARED_DATA
from tests.conftest import SHARED_DATA as UPSTREAM_DATA
from tests.conftest import ArchiveServer as Server
from tests.conftest import tar_member as _member

REPO_ROOT = Path(__file__).resolve().parents[2]
TOP = "OccuBench-d47bffb0123"
CONFIG = "world_model_configs/env_153c260a856a.json"


@pytest.fixture(scope="module")
def upstream() -> dict[str, bytes]:
    """Relative posix path -> content of every upstream data file."""
    if not UPSTREAM_DATA.is_dir():
        pytest.skip(NO_SHARED_DATA)
    return {
        p.relative_to(UPSTREAM_DATA).as_posix(): p.read_bytes()
        for p in sorted(UPSTREAM_DATA.rglob("*"))
        if p.is_file()
    }


def make_tarball(files: dict[str, bytes], *, extra: Sequence[tarfile.TarInfo] = (), gz: bool = False) -> bytes:
    """A GitHub-style archive: `files` under `<TOP>/data/`, a README beside it, plus raw `extra` members."""
    buffer = io.BytesIO()
    options = {"mode": "w:gz", "compresslevel": 1} if gz else {"mode": "w"}
    with tarfile.open(fileobj=buffer, **options) as archive:
        def add(name: str, payload: bytes) -> None:
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            archive.addfile(info, io.BytesIO(payload))

        for folder in (TOP, f"{TOP}/data", f"{TOP}/data/world_model_configs"):
            info = tarfile.TarInfo(folder)
            info.type = tarfile.DIRTYPE
            archive.addfile(info)
        add(f"{TOP}/README.md", b"not data\n")
        for name, payload in files.items():
            add(f"{TOP}/data/{name}", payload)
        for info in extra:
            archive.addfile(info, io.BytesIO(b"x" * info.size) if info.isreg() else None)
    return buffer.getvalue()


@pytest.fixture
def server(archive_server: Server) -> Server:
    return archive_server


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No user settings leak in, loopback bypasses any proxy, and a forgotten URL fails fast instead of reaching
    GitHub."""
    for name in ("OCCUBENCH_DATA", "OCCUBENCH_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OCCUBENCH_DATA_URL", f"http://127.0.0.1:{_closed_port()}/forgot-to-set-a-url.tar.gz")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "occubench", *args], env=env, capture_output=True, text=True,
                          timeout=60)


def entries(directory: Path) -> set[str]:
    return {p.relative_to(directory).as_posix() for p in directory.rglob("*")}


# --- manifest and verification ---------------------------------------------------------------

def test_shipped_manifest_matches_upstream_copy(upstream: dict[str, bytes]) -> None:
    shipped = json.loads((REPO_ROOT / "occubench" / "simulated" / "data_manifest.json").read_text())
    assert set(shipped) == set(upstream)
    assert len([n for n in shipped if n.startswith("world_model_configs/env_")]) == 382
    assert {"LICENSE", data.EVAL_DATA_NAME, data.SCENARIO_POOL_NAME} <= set(shipped)
    assert data.build_manifest(UPSTREAM_DATA) == shipped
    data.verify_data(UPSTREAM_DATA)


def test_verify_names_missing_and_changed_files_and_ignores_extras(upstream: dict[str, bytes], tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(UPSTREAM_DATA, copy)
    for p in copy.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)  # the shared copy is read-only
    (copy / "my-notes.txt").write_text("extra files are fine\n")
    data.verify_data(copy)

    removed = sorted(n for n in upstream if n.startswith("world_model_configs/"))[:12]
    for name in removed:
        (copy / name).unlink()
    (copy / data.EVAL_DATA_NAME).write_bytes(upstream[data.EVAL_DATA_NAME] + b"\n")
    with pytest.raises(ConfigError) as info:
        data.verify_data(copy)
    message = str(info.value)
    assert "12 of 385 files missing" in message
    assert removed[0] in message and removed[9] in message
    assert removed[10] not in message and "and 2 more" in message
    assert f"1 of 385 files differ from the pinned checksums ({data.EVAL_DATA_NAME})" in message
    assert "occubench data download --dest" in message and "\n" not in message


def test_verify_of_absent_directory_says_how_to_download(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError, match="occubench data download --dest"):
        data.verify_data(tmp_path / "nowhere")


# --- download ----------------------------------------------------------------------------------

def test_cli_download_verify_and_second_download_is_a_no_op(
        upstream: dict[str, bytes], server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = server.serve("d47bffb.tar.gz", make_tarball(upstream, gz=True))
    monkeypatch.setenv("OCCUBENCH_DATA_URL", url)
    dest = tmp_path / "project" / "data"

    first = run_cli("data", "download", "--dest", str(dest))
    assert first.returncode == 0, first.stderr
    assert f"OccuBench data ready in {dest}" in first.stdout
    assert server.requests == ["/d47bffb.tar.gz"]
    assert {p.relative_to(dest).as_posix(): p.read_bytes() for p in dest.rglob("*") if p.is_file()} == upstream
    assert sorted(os.listdir(dest.parent)) == ["data"]  # no temp dirs left behind, README not extracted

    verify = run_cli("data", "verify", "--dir", str(dest))
    assert verify.returncode == 0, verify.stderr
    assert "every file matches the pinned checksums" in verify.stdout

    second = run_cli("data", "download", "--dest", str(dest))
    assert second.returncode == 0, second.stderr
    assert "nothing downloaded" in second.stderr
    assert server.requests == ["/d47bffb.tar.gz"]  # the server saw no second request


@pytest.mark.parametrize("dest_exists", [False, True], ids=["fresh-dest", "existing-dest"])
def test_altered_file_fails_with_exit_2_and_leaves_dest_untouched(
        upstream: dict[str, bytes], server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        dest_exists: bool) -> None:
    tampered = {**upstream, CONFIG: upstream[CONFIG].replace(b"{", b"{ ", 1)}
    url = server.serve("bad.tar", make_tarball(tampered))
    dest = tmp_path / "data"
    if dest_exists:
        dest.mkdir()
        (dest / "my-notes.txt").write_text("keep me\n")
    before = entries(tmp_path)

    assert cli.main(["data", "download", "--dest", str(dest), "--url", url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("occubench: error: ") and err.count("\n") == 1
    assert CONFIG in err and url in err and "left untouched" in err
    assert entries(tmp_path) == before
    if dest_exists:
        assert (dest / "my-notes.txt").read_text() == "keep me\n"


def test_download_completes_a_partial_dest_and_keeps_user_files(
        upstream: dict[str, bytes], server: Server, tmp_path: Path) -> None:
    dest = tmp_path / "data"
    (dest / "world_model_configs").mkdir(parents=True)
    (dest / CONFIG).write_bytes(b"stale")
    (dest / "my-notes.txt").write_text("keep me\n")
    url = server.serve("good.tar", make_tarball(upstream))

    assert data.download_data(dest, url=url) == dest
    data.verify_data(dest)
    assert (dest / CONFIG).read_bytes() == upstream[CONFIG]
    assert (dest / "my-notes.txt").read_text() == "keep me\n"
    assert sorted(os.listdir(tmp_path)) == ["data"]


@pytest.mark.parametrize("make_member, expected", [
    (lambda tmp: _member("../evil", tarfile.REGTYPE, size=4), "unsafe path '../evil'"),
    (lambda tmp: _member(f"{TOP}/data/../../evil", tarfile.REGTYPE, size=4), "unsafe path"),
    (lambda tmp: _member(str(tmp / "evil"), tarfile.REGTYPE, size=4), "unsafe path"),
    (lambda tmp: _member(f"{TOP}/data/evil", tarfile.SYMTYPE, linkname=str(tmp / "evil")), "not a regular file"),
    (lambda tmp: _member(f"{TOP}/data/evil", tarfile.LNKTYPE, linkname=f"{TOP}/README.md"), "not a regular file"),
    (lambda tmp: _member(f"{TOP}/data/evil", tarfile.CHRTYPE, devmajor=1, devminor=3), "not a regular file"),
], ids=["dotdot-top", "dotdot-inside-data", "absolute", "symlink", "hardlink", "device"])
def test_unsafe_members_are_rejected_and_nothing_is_written(
        upstream: dict[str, bytes], server: Server, tmp_path: Path, make_member, expected: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    url = server.serve("evil.tar", make_tarball(upstream, extra=[make_member(tmp_path)]))
    with pytest.raises(ConfigError, match=expected):
        data.download_data(work / "out" / "data", url=url)
    assert not (work / "out" / "data").exists()
    assert [p for p in tmp_path.rglob("*") if "evil" in p.name] == []
    assert entries(work) == {"out"}  # the temp dir is cleaned up


def test_http_404_names_the_url(server: Server, tmp_path: Path) -> None:
    url = f"{server.base_url}/no-such-archive.tar.gz"
    with pytest.raises(ConfigError) as info:
        data.download_data(tmp_path / "data", url=url)
    assert url in str(info.value) and "HTTP 404" in str(info.value)
    assert entries(tmp_path) == set()


def test_unreachable_host_names_the_url(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/d47bffb.tar.gz"
    with pytest.raises(ConfigError, match=f"cannot download {url}"):
        data.download_data(tmp_path / "data", url=url)
    assert entries(tmp_path) == set()


@pytest.mark.parametrize("body, expected", [
    (b"<html>not a tarball</html>", "is not a readable tar archive"),
    (None, "has no files under"),
], ids=["garbage", "no-data-folder"])
def test_archive_without_data_is_rejected(server: Server, tmp_path: Path, body: bytes | None, expected: str) -> None:
    url = server.serve("odd.tar", body if body is not None else make_tarball({}))
    with pytest.raises(ConfigError, match=expected):
        data.download_data(tmp_path / "data", url=url)
    assert entries(tmp_path) == set()


# --- path resolution ---------------------------------------------------------------------------

def test_resolve_data_paths_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    default = data.resolve_data_paths()
    assert default == data.DataPaths(Path("data/eval_benchmark_solvable.jsonl"),
                                     Path("data/task_scenario_all_pool.jsonl"), Path("data/world_model_configs"))

    monkeypatch.setenv("OCCUBENCH_DATA", str(tmp_path / "env"))
    assert data.resolve_data_paths().config_dir == tmp_path / "env" / "world_model_configs"

    from_arg = data.resolve_data_paths(data_dir=tmp_path / "arg")
    assert from_arg.eval_data == tmp_path / "arg" / "eval_benchmark_solvable.jsonl"
    assert from_arg.scenario_pool == tmp_path / "arg" / "task_scenario_all_pool.jsonl"

    explicit = data.resolve_data_paths(data_dir=tmp_path / "arg", eval_data=tmp_path / "mine.jsonl",
                                       config_dir=str(tmp_path / "cfg"))
    assert explicit == data.DataPaths(tmp_path / "mine.jsonl", tmp_path / "arg" / "task_scenario_all_pool.jsonl",
                                      tmp_path / "cfg")


def test_ensure_data_returns_existing_paths_unchanged() -> None:
    if not UPSTREAM_DATA.is_dir():
        pytest.skip(NO_SHARED_DATA)
    paths = data.resolve_data_paths(data_dir=UPSTREAM_DATA)
    assert data.ensure_data(paths) is paths


def test_ensure_data_missing_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path / "mydata"
    (base / "world_model_configs").mkdir(parents=True)
    with pytest.raises(DataNotFoundError) as info:
        data.ensure_data(data.resolve_data_paths(data_dir=base))
    message = str(info.value)
    assert str(base / "eval_benchmark_solvable.jsonl") in message
    assert str(base / "task_scenario_all_pool.jsonl") in message
    assert str(base / "world_model_configs") not in message.split(". ")[0]  # present, so not listed as missing
    assert f"occubench data download --dest {base}" in message
    assert "--data-dir DIR" in message and "OCCUBENCH_DATA=DIR" in message and "--download" in message

    monkeypatch.chdir(tmp_path)  # so the default ./data is surely absent
    with pytest.raises(DataNotFoundError, match="occubench data download --dest data`"):
        data.ensure_data(data.resolve_data_paths())


def test_ensure_data_download_fills_the_user_cache(
        upstream: dict[str, bytes], server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OCCUBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OCCUBENCH_DATA_URL", server.serve("d47bffb.tar", make_tarball(upstream)))

    paths = data.ensure_data(data.resolve_data_paths(data_dir=tmp_path / "absent"), download=True)

    cache = tmp_path / "cache" / f"data-{data.UPSTREAM_COMMIT}"
    assert paths == data.resolve_data_paths(data_dir=cache)
    assert paths.eval_data.read_bytes() == upstream[data.EVAL_DATA_NAME]
    assert len(list(paths.config_dir.glob("env_*.json"))) == 382
    data.verify_data(cache)
    assert not (tmp_path / "absent").exists()
    # Already cached: a second call needs no download.
    assert data.ensure_data(data.resolve_data_paths(data_dir=tmp_path / "absent"), download=True) == paths
    assert len(server.requests) == 1
