"""Tests for occubench.traineebench.reference: the pin, the shipped manifest and how a run finds the files.

The reference files themselves are never committed, so these tests see them only through the manifest; a download
that succeeds is tested on synthetic files in tests/util/test_pinned.py, through the same code.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import pytest

from occubench.errors import ConfigError, DataNotFoundError
from occubench.traineebench import reference
from tests.conftest import ArchiveServer, make_archive

TOP = f"EvoEnv-{reference.COMMIT}"


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OCCUBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OCCUBENCH_TRAINEEBENCH_URL", "http://127.0.0.1:9/forgot-to-set-a-url.tar.gz")
    return tmp_path / "cache"


def test_the_pin_and_the_shipped_manifest() -> None:
    assert reference.REFERENCE.url == ("https://github.com/Edaizi/EvoEnv/archive/"
                                       "a70e7ac9cc77b318fa9702c27a6f90f0557cef85.tar.gz")
    assert reference.default_folder().name == "traineebench-a70e7ac"
    shipped = json.loads(resources.files("occubench.traineebench").joinpath("reference_manifest.json").read_text())
    assert shipped == reference.REFERENCE.expected()
    assert all(re.fullmatch("[0-9a-f]{64}", digest) for digest in shipped.values())
    assert not [name for name in shipped if name.endswith((".py", ".ipynb"))]
    assert {"traineebench_config.json", "traineebench_cl_config.json", "schemas/templates/manuals_for_intern.md",
            "schemas/tasks/resume_select/resume_info.json",
            "schemas/tasks/transactions/templates/approval_template.txt",
            "schemas/tasks/data_completion/templates/logistics_eta_sla.csv"} <= set(shipped)
    assert len([n for n in shipped if n.startswith("schemas/tasks/resume_select/resumes/")]) == 30
    assert len([n for n in shipped if n.startswith("schemas/tasks/kb_fix/templates/articles/")]) == 11
    assert len(shipped) == 56


def test_without_the_files_a_run_is_told_how_to_get_them(cache: Path) -> None:
    with pytest.raises(DataNotFoundError) as info:
        reference.reference_folder()
    message = str(info.value)
    assert f"in {cache / 'traineebench-a70e7ac'}: not downloaded" in message
    assert "`occubench data download traineebench`" in message and "Edaizi/EvoEnv at a70e7ac" in message

    folder = cache / "traineebench-a70e7ac"
    folder.mkdir(parents=True)
    (folder / "traineebench_config.json").write_text("{}")
    with pytest.raises(DataNotFoundError) as info:
        reference.reference_folder()
    assert "55 of 56 files missing" in str(info.value)
    assert "1 of 56 files differ from the pinned checksums (traineebench_config.json)" in str(info.value)


def test_download_refuses_files_that_are_not_the_pinned_ones(
        cache: Path, archive_server: ArchiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {"environments/traineebench/traineebench_config.json": b'{"not": "theirs"}\n'}
    monkeypatch.setenv("OCCUBENCH_TRAINEEBENCH_URL", archive_server.serve("a70e7ac.tar.gz", make_archive(TOP, files)))
    with pytest.raises(ConfigError, match="does not match the pinned checksums .*was left untouched"):
        reference.reference_folder(download=True)
    assert archive_server.requests == ["/a70e7ac.tar.gz"]
    assert list(cache.iterdir()) == []
