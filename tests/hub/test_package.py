"""A package's digest is its files' and metadata's, nothing else; its tar is reproducible; unpacking and verifying
refuse anything that is not exactly the manifest's regular files."""

from __future__ import annotations

import io
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from occubench.errors import ConfigError
from occubench.hub.package import MANIFEST, Manifest, describe, pack, unpack, verify
from occubench.util.untrusted import folder_files
from tests.hub.packages import WORLDS, package_folder

WORLD = WORLDS / "insurance_claims"
META = {"name": "acme/claims", "version": "1.0", "license": "CC-BY-4.0"}


def test_the_same_files_give_the_same_digest_and_tar_whatever_their_times_and_modes(tmp_path: Path) -> None:
    first = package_folder(tmp_path / "a")
    second = tmp_path / "b"
    shutil.copytree(first, second)
    for path in folder_files(second).values():
        os.utime(path, (1_000_000, 1_000_000))
        path.chmod(0o600)
    one, two = pack(first, tmp_path / "1.tar", **META), pack(second, tmp_path / "2.tar", **META)
    assert one.digest == two.digest and (tmp_path / "1.tar").read_bytes() == (tmp_path / "2.tar").read_bytes()
    (second / "executable" / WORLD.name / "seed.sql").write_text("-- another\n")
    assert describe(second, **META).digest != one.digest  # one byte of content is another package
    assert describe(first, **{**META, "version": "1.1"}).digest != one.digest


def test_metadata_comes_from_the_folders_manifest_under_the_flags(tmp_path: Path) -> None:
    folder = package_folder(tmp_path / "p")
    (folder / MANIFEST).write_text('{"name": "acme/claims", "version": "2.0", "description": "claims"}')
    manifest = describe(folder, version="2.1")
    assert (manifest.name, manifest.version, manifest.description, manifest.kinds) == \
        ("acme/claims", "2.1", "claims", ("executable",))
    assert set(manifest.files) == {f"executable/{WORLD.name}/{name}" for name in folder_files(WORLD)}


def test_a_readme_and_a_license_may_stand_beside_the_kinds(tmp_path: Path) -> None:
    folder = package_folder(tmp_path / "p")
    bare = describe(folder, **META)
    (folder / "README.md").write_text("# Claims worlds\n")
    (folder / "LICENSE").write_text("CC-BY-4.0\n")
    documented = describe(folder, **META)
    assert documented.kinds == bare.kinds and documented.digest != bare.digest
    assert unpack(_tar_of(folder, tmp_path), tmp_path / "out", "p.tar") == documented
    (folder / "NOTES.md").write_text("not a document a package takes\n")
    with pytest.raises(ConfigError, match="NOTES.md"):
        describe(folder, **META)
    only = tmp_path / "only"
    only.mkdir()
    (only / "README.md").write_text("no worlds\n")
    with pytest.raises(ConfigError, match="no files under"):
        describe(only, **META)


def _tar_of(folder: Path, tmp_path: Path) -> Path:
    pack(folder, tmp_path / "p.tar", **META)
    return tmp_path / "p.tar"


def test_a_packed_package_unpacks_into_the_same_files(tmp_path: Path) -> None:
    folder = package_folder(tmp_path / "p")
    made = pack(folder, tmp_path / "p.tar", **META)
    assert unpack(tmp_path / "p.tar", tmp_path / "out", "p.tar") == made
    assert verify(tmp_path / "out", "out", made.digest) == made
    for path, file in folder_files(folder).items():
        assert (tmp_path / "out" / path).read_bytes() == file.read_bytes()


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    with tarfile.open(path, "w") as archive:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            archive.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def _member(name: str, kind: bytes = tarfile.REGTYPE, target: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


@pytest.mark.parametrize("hostile", [
    _member("executable/w/link", tarfile.SYMTYPE, "/etc/passwd"),
    _member("executable/w/hard", tarfile.LNKTYPE, "/etc/passwd"),
    _member("../escaped"), _member("/tmp/absolute"), _member("executable/../../escaped"),
    _member("executable/w/fifo", tarfile.FIFOTYPE), _member("stray.txt"),
])
def test_a_tar_with_a_link_a_special_file_or_an_unsafe_path_is_refused_and_writes_nothing(
        tmp_path: Path, hostile: tarfile.TarInfo) -> None:
    folder = package_folder(tmp_path / "p")
    made = describe(folder, **META)
    members = [(_member(MANIFEST), made.canonical())]
    members += [(_member(path), (folder / path).read_bytes()) for path in made.files]
    tar = _tar(tmp_path / "bad.tar", [*members[:2], (hostile, b"owned"), *members[2:]])
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(ConfigError):
        unpack(tar, work / "out", "bad.tar")
    assert list(work.iterdir()) == []  # nothing kept, nothing beside it
    assert not (tmp_path / "escaped").exists() and not Path("/tmp/absolute").exists()


def test_a_changed_missing_or_extra_file_or_another_digest_is_refused(tmp_path: Path) -> None:
    folder = package_folder(tmp_path / "p")
    made = pack(folder, tmp_path / "p.tar", **META)
    seed = f"executable/{WORLD.name}/seed.sql"
    for change in ("flip", "drop", "add"):
        out = tmp_path / change
        unpack(tmp_path / "p.tar", out, "p.tar")
        if change == "flip":
            data = bytearray((out / seed).read_bytes())
            data[10] ^= 1
            (out / seed).write_bytes(bytes(data))
        elif change == "drop":
            (out / seed).unlink()
        else:
            (out / "executable" / "extra.py").write_text("import os\n")
        with pytest.raises(ConfigError, match="changed after it was made"):
            verify(out, change)
    unpack(tmp_path / "p.tar", tmp_path / "again", "p.tar")
    with pytest.raises(ConfigError, match="not sha256:" + "0" * 64):
        verify(tmp_path / "again", "again", "sha256:" + "0" * 64)
    assert verify(tmp_path / "again", "again", made.digest) == made


@pytest.mark.parametrize("text", [b"[]", b"{", b'{"schema": 1, "files": {"../x": "' + b"0" * 64 + b'"}}',
                                  b'{"schema": 1, "files": {}, "kinds": [], "name": "x", "version": "1", '
                                  b'"requires_occubench": "nonsense"}', b"[" * 100_000])
def test_a_hostile_manifest_is_a_config_error(text: bytes) -> None:
    with pytest.raises(ConfigError):
        Manifest.from_bytes(text, "m.json")
