"""`occubench data download traineebench`: the command's own paths, offline (a loopback server of synthetic
archives). Only the shipped manifest's files are accepted, so here every download is refused: the download that
succeeds is tested through the same code in tests/util/test_pinned.py, the OccuBench data's in
tests/simulated/test_data.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from occubench.cli import main
from tests.conftest import ArchiveServer, make_archive

FILES = {"environments/traineebench/schemas/templates/manuals_for_intern.md": b"# not theirs\n"}


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OCCUBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OCCUBENCH_TRAINEEBENCH_URL", "http://127.0.0.1:9/forgot-to-set-a-url.tar.gz")
    return tmp_path / "cache"


def error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["data", "download", "traineebench", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("occubench: error: ") and err.count("\n") == 1, err
    return err


def test_files_other_than_the_pinned_ones_are_refused_and_nothing_is_installed(
        archive_server: ArchiveServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    url = archive_server.serve("a70e7ac.tar.gz", make_archive("EvoEnv-a70e7ac", FILES))
    dest = tmp_path / "reference"
    err = error(capsys, "--url", url, "--dest", str(dest))
    assert f"the data downloaded from {url} does not match the pinned checksums" in err
    assert "1 of 56 files differ from the pinned checksums (schemas/templates/manuals_for_intern.md)" in err
    assert f"{dest} was left untouched" in err
    assert list(tmp_path.iterdir()) == []

    monkeypatch.setenv("OCCUBENCH_TRAINEEBENCH_URL", url)  # and by default, into the cache
    err = error(capsys)
    assert f"{tmp_path / 'cache' / 'traineebench-a70e7ac'} was left untouched" in err
    assert [p.name for p in tmp_path.iterdir()] == ["cache"] and list((tmp_path / "cache").iterdir()) == []
    assert archive_server.requests == ["/a70e7ac.tar.gz"] * 2


def test_a_wrong_url_or_flag_is_a_clear_error(archive_server: ArchiveServer,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    url = f"{archive_server.base_url}/elsewhere.tar.gz"
    err = error(capsys, "--url", url)
    assert f"downloading {url} failed: HTTP 404" in err
    assert "`occubench data download traineebench --url`, or OCCUBENCH_TRAINEEBENCH_URL" in err
    assert "--revision is for `occubench data download awm`" in error(capsys, "--revision", "main")
