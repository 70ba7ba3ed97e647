"""Installing world packages: a package lands in the store under its digest only once its files match its manifest,
its manifest the digest, its occubench versions this one, and every world passed its suite's validation in the
sandbox. Anything else (a tampered byte, a hostile tar, a world that escapes or hangs, no sandbox) is refused with
nothing installed and nothing written outside."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest

from occubench.awm.data import FILES
from occubench.errors import ConfigError
from occubench.hub.install import Installed, install, installed, list_installed, remove, staging, store_root
from occubench.hub.package import MANIFEST, Manifest, pack, unpack
from occubench.hub.validate import workplace_settings
from occubench.sandbox import Provider
from occubench.simulated.data import CONFIG_DIR_NAME, EVAL_DATA_NAME, SAMPLE, SCENARIO_POOL_NAME
from tests.conftest import awm_sample, extra_reason
from tests.sandbox.corpus import ATTACKS, BASE, Attack, make_corpus_world

FIELDS = {"name": "acme/claims", "version": "1.0"}


@pytest.fixture(autouse=True)
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache (the store in it) and home for each test."""
    monkeypatch.setenv("OCCUBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "cache" / "worlds"


def _pack(tmp_path: Path, build: dict[str, Path | bytes], **fields: str) -> tuple[Path, Manifest]:
    """A package tar of ``build`` (a path in the package → a folder to copy or a file's bytes)."""
    folder = tmp_path / "package"
    shutil.rmtree(folder, ignore_errors=True)
    for path, content in build.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            shutil.copytree(content, target, ignore=shutil.ignore_patterns("__pycache__"))
    tar = tmp_path / "package.tar"
    return tar, pack(folder, tar, **{**FIELDS, **fields})


def _install(tar: Path) -> Installed:
    with staging() as folder:
        unpack(tar, folder, str(tar))
        return install(folder, str(tar))


def _world(tmp_path: Path, attack: Attack | None = None, port: int = 9) -> Path:
    return make_corpus_world(tmp_path / "built", attack or Attack(), mark=tmp_path / "outside" / "escaped", port=port,
                             harness=os.getpid())


def _assert_nothing_installed(store: Path) -> None:
    assert list_installed() == []
    assert not (store / "sha256").exists() or list((store / "sha256").iterdir()) == []
    assert not (store / "tmp").exists() or list((store / "tmp").iterdir()) == []


def test_a_valid_package_installs_under_its_digest_and_installing_again_changes_nothing(
        tmp_path: Path, store: Path, sandbox: Provider) -> None:
    tar, manifest = _pack(tmp_path, {f"executable/{BASE}": _world(tmp_path)})
    done = _install(tar)
    assert done.digest == manifest.digest and done.manifest == manifest
    assert done.path == store_root() / "sha256" / manifest.digest.removeprefix("sha256:")
    assert done.path.parent == store / "sha256"
    assert (done.kind_folder("executable") / BASE / "seed.sql").is_file()
    assert installed(manifest.digest) == done and list_installed() == [done]
    inode = done.path.stat().st_ino
    assert _install(tar) == done
    assert done.path.stat().st_ino == inode and list((store / "tmp").iterdir()) == []
    assert remove(manifest.digest) and installed(manifest.digest) is None and list_installed() == []


def _connect_at_import(port: str = "PORT") -> Attack:
    return Attack('import socket\n    socket.create_connection(("127.0.0.1", PORT), timeout=5).sendall(b"hi")\n'
                  .replace("PORT", port), when="import")


@pytest.mark.parametrize("attack", [ATTACKS["import_time_shell"], _connect_at_import(),
                                    replace(ATTACKS["container_escape_shell"], when="import")],
                         ids=["write_a_host_file", "connect_to_loopback", "escape_the_allow_list"])
def test_a_world_that_tries_to_escape_at_load_is_refused(attack: Attack, tmp_path: Path, store: Path,
                                                         sandbox: Provider) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.setblocking(False)
        tar, _ = _pack(tmp_path, {f"executable/{BASE}": _world(tmp_path, attack, listener.getsockname()[1])})
        with pytest.raises(ConfigError) as refused:
            _install(tar)
        with pytest.raises(BlockingIOError):
            listener.accept()  # no connection came
    assert not (tmp_path / "outside").exists()
    assert str(tar) in str(refused.value) and f"executable/{BASE}" in str(refused.value)
    _assert_nothing_installed(store)


@pytest.mark.slow  # held to the worker's load deadline (30 s)
def test_a_world_that_hangs_at_load_is_refused(tmp_path: Path, store: Path, sandbox: Provider) -> None:
    tar, _ = _pack(tmp_path, {f"executable/{BASE}": _world(tmp_path, Attack("while True:\n        n = 0\n",
                                                                                when="import"))})
    with pytest.raises(ConfigError, match=f"executable/{BASE}"):
        _install(tar)
    _assert_nothing_installed(store)


def test_a_world_that_fails_its_own_validation_is_refused(tmp_path: Path, store: Path, sandbox: Provider) -> None:
    world = _world(tmp_path)
    source = (world / "__init__.py").read_text()
    (world / "__init__.py").write_text(source + "\nworld.tasks[:] = world.tasks[:1]\n")  # too few tasks
    tar, _ = _pack(tmp_path, {f"executable/{BASE}": world, "executable/notes.txt": b"not a world"})
    with pytest.raises(ConfigError) as refused:
        _install(tar)
    lines = str(refused.value).splitlines()
    assert any(f"executable/{BASE}: needs at least 3 tasks" in line for line in lines), lines
    assert any("executable/notes.txt: not a world folder" in line for line in lines), lines
    _assert_nothing_installed(store)


def test_a_byte_changed_after_packing_is_refused(tmp_path: Path, store: Path) -> None:
    tar, manifest = _pack(tmp_path, {"workplace/settings.json": b'{"days": 3, "seed": 7}'})
    data = bytearray(tar.read_bytes())
    at = data.index(b'"days": 3')
    data[at + 8] = ord("4")
    tampered = tmp_path / "tampered.tar"
    tampered.write_bytes(bytes(data))
    with pytest.raises(ConfigError, match="differ from their sha256"):
        _install(tampered)
    _assert_nothing_installed(store)
    # A folder whose manifest was changed with it is another package: its reference's digest refuses it.
    with staging() as folder:
        unpack(tar, folder, "ref")
        changed = b'{"days": 4, "seed": 7}'
        (folder / "workplace" / "settings.json").write_bytes(changed)
        files = {**manifest.files, "workplace/settings.json": hashlib.sha256(changed).hexdigest()}
        (folder / MANIFEST).write_bytes(replace(manifest, files=files).canonical())
        with pytest.raises(ConfigError, match=f"not {manifest.digest}"):
            install(folder, "ref", manifest.digest)
        assert not folder.exists()
    _assert_nothing_installed(store)


def _hostile_tar(path: Path, member: tarfile.TarInfo, manifest: Manifest) -> None:
    with tarfile.open(path, "w") as archive:
        data = manifest.canonical()
        info = tarfile.TarInfo(MANIFEST)
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
        archive.addfile(member, io.BytesIO(b"x" * member.size) if member.isreg() else None)


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "dotdot", "absolute"])
def test_a_tar_with_a_link_or_a_path_out_is_refused_with_nothing_written_outside(kind: str, tmp_path: Path,
                                                                                 store: Path) -> None:
    outside = tmp_path / "outside" / "written"
    outside.parent.mkdir()
    _, manifest = _pack(tmp_path, {"workplace/settings.json": b'{"days": 3, "seed": 7}'})
    names = {"symlink": "workplace/settings.json", "hardlink": "workplace/settings.json",
             "dotdot": "workplace/../../../outside/written", "absolute": str(outside)}
    member = tarfile.TarInfo(names[kind])
    if kind in ("symlink", "hardlink"):
        member.type = tarfile.SYMTYPE if kind == "symlink" else tarfile.LNKTYPE
        member.linkname = str(outside)
    else:
        member.size = 1
    tar = tmp_path / "hostile.tar"
    _hostile_tar(tar, member, manifest)
    with pytest.raises(ConfigError, match=re.escape(str(tar))), staging() as folder:
        unpack(tar, folder, str(tar))
    assert not outside.exists() and not outside.is_symlink() and list(outside.parent.iterdir()) == []
    _assert_nothing_installed(store)


def test_a_package_for_another_occubench_is_refused(tmp_path: Path, store: Path) -> None:
    tar, _ = _pack(tmp_path, {"workplace/settings.json": b'{"days": 3, "seed": 7}'}, requires_occubench=">=99")
    with pytest.raises(ConfigError, match="needs occubench >=99"):
        _install(tar)
    _assert_nothing_installed(store)


def test_workplace_settings_install_as_typed_values(tmp_path: Path, store: Path) -> None:
    tar, _ = _pack(tmp_path, {"workplace/settings.json": b'{"days": 3, "seed": 7}'})
    done = _install(tar)
    settings = workplace_settings(done.kind_folder("workplace"))
    assert (settings.days, settings.seed) == (3, 7)
    for bad, said in ((b'{"days": "3", "seed": 7}', "days"), (b'{"days": 0, "seed": 7}', "days"),
                      (b'{"days": 3}', "seed"), (b'{"days": 3, "seed": 7, "x": 1}', "x"), (b"[3, 7]", "object"),
                      (b"{", "not JSON")):
        tar, _ = _pack(tmp_path, {"workplace/settings.json": bad})
        with pytest.raises(ConfigError, match=f"workplace/settings.json: .*{said}"):
            _install(tar)
    assert list_installed() == [done]


def _occubench_data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE / "worlds", data / CONFIG_DIR_NAME)
    shutil.copy(SAMPLE / "tasks.jsonl", data / EVAL_DATA_NAME)
    shutil.copy(SAMPLE / "scenarios.jsonl", data / SCENARIO_POOL_NAME)
    return data


def test_an_occubench_format_folder_installs_once_its_loader_reads_it(tmp_path: Path, store: Path) -> None:
    data = _occubench_data(tmp_path)
    tar, manifest = _pack(tmp_path, {"occubench": data})
    assert _install(tar).digest == manifest.digest
    config = sorted((data / CONFIG_DIR_NAME).iterdir())[0]
    config.write_text(json.dumps({**json.loads(config.read_text()), "environment_name": "other"}))
    tar, _ = _pack(tmp_path, {"occubench": data})
    with pytest.raises(ConfigError, match=f"occubench/{CONFIG_DIR_NAME}/{config.name}: environment_name is 'other'"):
        _install(tar)
    (data / EVAL_DATA_NAME).write_text((data / EVAL_DATA_NAME).read_text() + '{"task_id": 1}\n')
    tar, _ = _pack(tmp_path, {"occubench": data})
    with pytest.raises(ConfigError, match=f"occubench/{EVAL_DATA_NAME}:[0-9]+: missing key"):
        _install(tar)
    assert len(list_installed()) == 1


SCRIPT = """
import sys
from pathlib import Path
from occubench.awm.data import FILES
from occubench.errors import ConfigError
from occubench.hub.install import install, staging
from occubench.hub.package import unpack
try:
    with staging() as folder:
        unpack(Path(sys.argv[1]), folder, sys.argv[1])
        install(folder, sys.argv[1])
except ConfigError as exc:
    print(exc)
    sys.exit(2)
"""


def test_a_package_with_code_is_refused_without_a_sandbox_and_no_trust_is_offered(tmp_path: Path,
                                                                                 store: Path) -> None:
    tar, _ = _pack(tmp_path, {f"executable/{BASE}": _world(tmp_path, ATTACKS["import_time_shell"])})
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tar)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "OCCUBENCH_SANDBOX": "none"}, check=False)
    assert done.returncode == 2, done.stderr
    assert "runs only in a sandbox" in done.stdout and "bubblewrap" in done.stdout
    assert "--trust-world-code" not in done.stdout and "Traceback" not in done.stderr
    assert not (tmp_path / "outside").exists()
    _assert_nothing_installed(store)


def test_an_awm_set_installs_once_its_runnable_scenarios_load_in_the_sandbox(tmp_path: Path, store: Path,
                                                                             sandbox: Provider) -> None:
    sample = awm_sample()
    pytest.importorskip("sqlalchemy", reason=extra_reason("awm"))
    data = tmp_path / "awm"
    shutil.copytree(sample, data, ignore=shutil.ignore_patterns("README.md"))
    tar, manifest = _pack(tmp_path, {"awm": data})
    assert _install(tar).digest == manifest.digest
    lines = [json.loads(line) for line in (data / FILES["app"]).read_text().splitlines()]
    for line in lines:
        if line["scenario"] == "content_platform_1":
            line["full_code"] = "raise RuntimeError('broken at import')\n"
    (data / FILES["app"]).write_text("".join(json.dumps(line) + "\n" for line in lines))
    tar, _ = _pack(tmp_path, {"awm": data})
    with pytest.raises(ConfigError, match="awm/content_platform_1: does not load: .*broken at import"):
        _install(tar)
    assert len(list_installed()) == 1
