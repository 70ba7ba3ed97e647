"""The one cache folder: OCCUBENCH_CACHE_DIR, else an absolute XDG_CACHE_HOME, else ~/.cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from occubench.util.paths import user_cache_dir


def test_user_cache_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("OCCUBENCH_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert user_cache_dir() == tmp_path / "home" / ".cache" / "occubench"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_cache_dir() == tmp_path / "xdg" / "occubench"
    monkeypatch.setenv("OCCUBENCH_CACHE_DIR", str(tmp_path / "cache"))
    assert user_cache_dir() == tmp_path / "cache"
