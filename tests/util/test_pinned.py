"""Tests for occubench.util.pinned: a pinned repository folder downloaded, extracted safely and verified.

A synthetic repository is described here with its own manifest, archived in the test and served over loopback;
nothing touches the internet. The OccuBench data's own behaviour through this code is in tests/simulated/test_data.py.
"""

from __future__ import annotations

import hashlib
import json
import tarfile
from pathlib import Path

import pytest

from occubench.errors import ConfigError
from occubench.util import pinned
from occubench.util.pinned import PinnedFolder
from occubench.util.untrusted import MAX_FILE_BYTES
from tests.conftest import ArchiveServer, make_archive, tar_member

TOP = "Synthetic-0123abc"
FOLDER = "environments/bench"
FILES = {
    "manual.md": b"# Manual\nCopy it to your workspace first.\n",
    "resumes/Ana Maria Gonzalez_resume.md": "# Ana María González\n".encode(),
    "tables/rates.csv": b"region,rate\nEU,0.2\n",
    "bench_config.json": b'{"scenarios": []}\n',
}
#: The folder's code, and files outside the folder: in the archive, never downloaded.
LEFT_OUT = {
    f"{FOLDER}/generator.py": b"print('code')\n",
    f"{FOLDER}/utils/cv_generator.ipynb": b"{}\n",
    "README.md": b"not the folder\n",
    "environments/other/manual.md": b"another folder\n",
}


def tarball(files: dict[str, bytes] = FILES, *members: tarfile.TarInfo) -> bytes:
    return make_archive(TOP, {**{f"{FOLDER}/{name}": payload for name, payload in files.items()}, **LEFT_OUT},
                        *members)


@pytest.fixture
def synthetic(tmp_path: Path) -> PinnedFolder:
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({name: hashlib.sha256(payload).hexdigest() for name, payload in FILES.items()}))
    return PinnedFolder(name="synthetic files", repo="someone/Synthetic", commit="0123abc", folder=FOLDER,
                        manifest=manifest, command="occubench data download synthetic",
                        url_variable="OCCUBENCH_SYNTHETIC_URL", skip_suffixes=(".py", ".ipynb"))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def contents(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_the_folder_s_files_but_its_code_are_downloaded_verified_and_only_once(
        synthetic: PinnedFolder, archive_server: ArchiveServer, work: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert synthetic.url == "https://github.com/someone/Synthetic/archive/0123abc.tar.gz"
    monkeypatch.setenv("OCCUBENCH_SYNTHETIC_URL", archive_server.serve("0123abc.tar.gz", tarball()))
    dest = work / "cache" / "synthetic-0123abc"

    assert synthetic.download(dest) == dest
    assert contents(dest) == FILES
    assert synthetic.problems(dest) == ""
    assert [p.name for p in work.iterdir()] == ["cache"]
    assert [p.name for p in (work / "cache").iterdir()] == ["synthetic-0123abc"]  # no temp folder left behind

    assert synthetic.download(dest) == dest
    assert "already holds the verified synthetic files; nothing downloaded" in capsys.readouterr().err
    assert archive_server.requests == ["/0123abc.tar.gz"]


INSIDE = f"{TOP}/{FOLDER}"


@pytest.mark.parametrize("files, member, expected", [
    (FILES, tar_member("../evil", tarfile.REGTYPE, size=4), "unsafe path '../evil'"),
    (FILES, tar_member(f"{INSIDE}/../../../../evil", tarfile.REGTYPE, size=4), "unsafe path"),
    (FILES, tar_member("/tmp/evil", tarfile.REGTYPE, size=4), "unsafe path '/tmp/evil'"),
    (FILES, tar_member(f"{INSIDE}/evil.md", tarfile.SYMTYPE, linkname="/etc/passwd"), "not a regular file"),
    (FILES, tar_member(f"{INSIDE}/evil.py", tarfile.SYMTYPE, linkname="/etc/passwd"), "not a regular file"),
    (FILES, tar_member(f"{INSIDE}/evil.md", tarfile.LNKTYPE, linkname=f"{TOP}/README.md"), "not a regular file"),
    (FILES, tar_member(f"{INSIDE}/huge.csv", tarfile.REGTYPE, size=MAX_FILE_BYTES + 1),
     f"'{INSIDE}/huge.csv' ({MAX_FILE_BYTES + 1:,} bytes) is past the limits of a data folder"),
    (FILES, tar_member(f"{INSIDE}/manual.md/evil", tarfile.REGTYPE, size=4),
     f"cannot extract '{INSIDE}/manual.md/evil'"),
    ({**FILES, "tables/rates.csv": b"region,rate\nEU,0.0\n"}, None,
     "1 of 4 files differ from the pinned checksums (tables/rates.csv)"),
    ({k: v for k, v in FILES.items() if k != "manual.md"}, None, "1 of 4 files missing (manual.md)"),
], ids=["dotdot-top", "dotdot-inside", "absolute", "symlink", "symlink-among-code", "hardlink", "huge",
        "file-as-folder", "wrong-checksum", "missing-file"])
def test_a_hostile_or_wrong_archive_is_refused_and_nothing_is_left(
        synthetic: PinnedFolder, archive_server: ArchiveServer, work: Path, files: dict[str, bytes],
        member: tarfile.TarInfo | None, expected: str) -> None:
    url = archive_server.serve("bad.tar.gz", tarball(files, *filter(None, [member])))
    dest = work / "out" / "bench"
    with pytest.raises(ConfigError) as info:
        synthetic.download(dest, url=url)
    assert expected in str(info.value) and url in str(info.value)
    assert [p.relative_to(work).as_posix() for p in work.rglob("*")] == ["out"]  # no dest, no temp folder


def test_an_existing_folder_keeps_its_files_when_the_download_is_refused(
        synthetic: PinnedFolder, archive_server: ArchiveServer, work: Path) -> None:
    (work / "manual.md").write_bytes(b"stale")
    (work / "my-notes.txt").write_text("keep me\n")
    url = archive_server.serve("bad.tar.gz", tarball({**FILES, "bench_config.json": b"{}"}))
    with pytest.raises(ConfigError, match="left untouched"):
        synthetic.download(work, url=url)
    assert contents(work) == {"manual.md": b"stale", "my-notes.txt": b"keep me\n"}

    synthetic.download(work, url=archive_server.serve("good.tar.gz", tarball()))
    assert contents(work) == {**FILES, "my-notes.txt": b"keep me\n"}  # completed, the user's file kept


@pytest.mark.parametrize("announce_length", [True, False], ids=["announced", "unannounced"])
def test_an_archive_past_the_size_limit_is_refused_while_downloading(
        synthetic: PinnedFolder, archive_server: ArchiveServer, work: Path, monkeypatch: pytest.MonkeyPatch,
        announce_length: bool) -> None:
    monkeypatch.setattr(pinned, "MAX_ARCHIVE_BYTES", 1 << 20)
    archive_server.announce_length = announce_length
    url = archive_server.serve("huge.tar.gz", bytes((1 << 20) + 1))
    with pytest.raises(ConfigError, match=f"{url} is larger than 1 MB; is it the Synthetic repository archive"):
        synthetic.download(work / "bench", url=url)
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("url, expected", [
    ("{base}/missing.tar.gz", "HTTP 404 Not Found; check the URL (`occubench data download synthetic --url`, "
                              "or OCCUBENCH_SYNTHETIC_URL)"),
    ("not-a-url", "cannot download not-a-url: unknown url type"),
    ("{base}/garbage.tar.gz", "is not a readable tar archive"),
    ("{base}/other.tar.gz", "has no files under Synthetic-0123abc/environments/bench/; is it the Synthetic "
                            "repository archive?"),
], ids=["404", "malformed-url", "garbage", "other-archive"])
def test_a_download_that_fails_names_the_url_and_the_way_out(
        synthetic: PinnedFolder, archive_server: ArchiveServer, work: Path, url: str, expected: str) -> None:
    archive_server.serve("garbage.tar.gz", b"<html>not a tarball</html>")
    archive_server.serve("other.tar.gz", make_archive(TOP, {"src/main.py": b"pass\n"}))
    with pytest.raises(ConfigError) as info:
        synthetic.download(work / "bench", url=url.format(base=archive_server.base_url))
    assert expected in str(info.value)
    assert list(work.iterdir()) == []
