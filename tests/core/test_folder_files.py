"""The one way the harness reads a folder it did not make (a run's identity digest, a data folder's checksums): no
link followed, regular files only, size limits, read in chunks; the digest of an ordinary folder is what it was
before, so existing runs keep their identity."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from occubench.cli import main
from occubench.core.suite import content_digest, folder_files
from occubench.errors import ConfigError
from occubench.simulated.data import SAMPLE
from occubench.testing import MockLLMServer
from occubench.util.untrusted import MAX_FILES

SECRET = "s3cret-only-in-this-file-52be01"


def test_the_digest_of_an_ordinary_folder_is_unchanged(tmp_path: Path) -> None:
    (tmp_path / "w" / "sub").mkdir(parents=True)
    (tmp_path / "w" / "a.sql").write_bytes(b"CREATE TABLE t (x);\n")
    (tmp_path / "w" / "sub" / "b.py").write_bytes("é = 1\n".encode())
    (tmp_path / "w" / "__pycache__").mkdir()
    (tmp_path / "w" / "__pycache__" / "b.pyc").write_bytes(b"\0")
    files = folder_files(tmp_path / "w", "w/")
    assert list(files) == ["w/a.sql", "w/sub/b.py"]
    before = hashlib.sha256()  # the digest as it was computed from whole reads
    for name in sorted(files):
        data = files[name].read_bytes()
        before.update(f"{len(name)}:{name}{len(data)}:".encode())
        before.update(data)
    assert content_digest(files) == before.hexdigest()[:16]


def test_a_sparse_8_gb_file_is_refused_by_the_digest_without_being_read(tmp_path: Path) -> None:
    big = tmp_path / "eval.jsonl"
    with big.open("wb") as handle:
        os.truncate(handle.fileno(), 8 << 30)
    with pytest.raises(ConfigError, match="8,589,934,592 bytes"):
        content_digest({"eval_data": big})
    with pytest.raises(ConfigError, match="8,589,934,592 bytes"):
        folder_files(tmp_path)


def test_a_link_is_neither_listed_nor_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "config.json").symlink_to(secret)
    with pytest.raises(ConfigError, match="a symbolic link") as listed:
        folder_files(tmp_path / "data")
    with pytest.raises(ConfigError, match="a symbolic link") as read:
        content_digest({"configs/x.json": tmp_path / "data" / "config.json"})
    assert SECRET not in str(listed.value) + str(read.value)


def test_a_data_folder_with_a_link_or_a_path_outside_in_its_manifest_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    data = tmp_path / "data"
    data.mkdir()
    (data / "tasks.jsonl").symlink_to(secret)
    digest = hashlib.sha256(SECRET.encode()).hexdigest()
    for manifest in ({"tasks.jsonl": digest}, {"../secret.txt": digest}, {str(secret): digest}):
        (data / "data_manifest.json").write_text(json.dumps(manifest))
        assert main(["data", "verify", "--dir", str(data)]) == 2
        out, err = capsys.readouterr()
        assert "Traceback" not in err and SECRET not in out + err and "every file matches" not in out
    (data / "data_manifest.json").unlink()
    (data / "data_manifest.json").symlink_to(secret)  # the manifest itself
    assert main(["data", "verify", "--dir", str(data)]) == 2
    out, err = capsys.readouterr()
    assert "a symbolic link" in err and SECRET not in out + err


def data_folder(root: Path) -> Path:
    """The package's sample as an OccuBench data folder."""
    shutil.copytree(SAMPLE / "worlds", root / "world_model_configs")
    shutil.copy(SAMPLE / "tasks.jsonl", root / "eval_benchmark_solvable.jsonl")
    shutil.copy(SAMPLE / "scenarios.jsonl", root / "task_scenario_all_pool.jsonl")
    return root


def test_a_run_on_a_data_folder_reads_no_linked_config_and_no_8_gb_task_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configs = data_folder(tmp_path / "data") / "world_model_configs"
    config = json.loads((configs / "env_fixture_pharmacy.json").read_text())
    config["world_model_system_prompt"] += f" {SECRET}"
    (tmp_path / "secret.json").write_text(json.dumps(config))
    (configs / "env_fixture_pharmacy.json").unlink()
    (configs / "env_fixture_pharmacy.json").symlink_to(tmp_path / "secret.json")
    run = ["run", "--data-dir", str(tmp_path / "data"), "--world-model", "w", "--agent-model", "a",
           "--output-dir", str(tmp_path / "runs"), "--run-name", "r"]
    with MockLLMServer() as server:
        assert main([*run, "--base-url", server.base_url]) == 2
        out, err = capsys.readouterr()
        assert "a symbolic link" in err and "Traceback" not in err
        assert SECRET not in out + err + json.dumps(server.requests)  # the linked config reached no model
        (configs / "env_fixture_pharmacy.json").unlink()
        shutil.copy(SAMPLE / "worlds" / "env_fixture_pharmacy.json", configs)
        with (tmp_path / "data" / "eval_benchmark_solvable.jsonl").open("r+b") as handle:
            os.truncate(handle.fileno(), 8 << 30)
        assert main([*run, "--base-url", server.base_url]) == 2
        out, err = capsys.readouterr()
        assert "8,589,934,592 bytes" in err and "Traceback" not in err and "MemoryError" not in err
    assert all(SECRET not in path.read_text(errors="replace") for path in tmp_path.rglob("*")
               if path.is_file() and path.stat().st_size < 1 << 20 and path.name != "secret.json")


def test_a_folder_past_the_count_of_entries_is_refused(tmp_path: Path) -> None:
    for number in range(MAX_FILES + 1):
        (tmp_path / "w" / f"d{number}").mkdir(parents=True)  # empty folders count as much as files
    with pytest.raises(ConfigError, match=f"more than {MAX_FILES:,} files and folders"):
        folder_files(tmp_path / "w")


def test_a_folder_where_a_file_is_expected_is_a_config_error(tmp_path: Path) -> None:
    from occubench.util.untrusted import read_file

    (tmp_path / "answer.json").mkdir()
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        with pytest.raises(ConfigError, match="is a directory"):
            read_file(tmp_path / "answer.json")
    assert len(os.listdir("/proc/self/fd")) == before  # each descriptor opened for it was closed
