"""The AWM tests' data: the published AgentWorldModel-1K sample (never committed; the tests skip without it)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from occubench.sandbox import Provider
from tests.conftest import awm_sample, extra_reason


@pytest.fixture
def sample() -> Path:
    return awm_sample()


@pytest.fixture
def data(sample: Path, tmp_path: Path, sandbox: Provider, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the sample to change, scenario folders written to a private cache, and a sandbox to run them."""
    pytest.importorskip("sqlalchemy", reason=extra_reason("awm"))
    monkeypatch.setenv("OCCUBENCH_CACHE_DIR", str(tmp_path / "cache"))
    copy = tmp_path / "awm"
    shutil.copytree(sample, copy)
    return copy


def sha256sum_digest(folder: Path) -> str:
    """What `sha256sum gen_*.jsonl | sha256sum` prints in ``folder``: a set's content digest, computed apart from the
    package."""
    names = sorted(path.name for path in folder.glob("gen_*.jsonl"))
    listing = "".join(f"{hashlib.sha256((folder / name).read_bytes()).hexdigest()}  {name}\n" for name in names)
    return hashlib.sha256(listing.encode()).hexdigest()
