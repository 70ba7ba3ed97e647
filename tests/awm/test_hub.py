"""`occubench data download awm`: AgentWorldModel-1K through the Hugging Face Hub's own client, here from a hub of
one dataset on 127.0.0.1 (``HF_ENDPOINT``) serving a tiny AWM-format set made in the test; and `--suite awm`
without --data-dir finding what was downloaded."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import unquote

import pytest
from rich.console import Console

from occubench.awm import hub
from occubench.awm.data import FILES
from occubench.awm.plugin import plan
from occubench.cli import main
from occubench.config import RunConfig
from tests.awm.conftest import sha256sum_digest
from tests.conftest import extra_reason, serving

pytest.importorskip("huggingface_hub", reason=extra_reason("awm"))

#: The commit a branch or tag of the fake hub points at.
COMMIT = "0123456789abcdef0123456789abcdef01234567"
TOKEN = "hf_secretsecretsecret0123456789"
LINES = {
    "scenario": {"name": "shop_1", "description": "A small shop."},
    "tasks": {"scenario": "shop_1", "tasks": ["List the items.", "Buy the cheapest item."]},
    "schema": {"scenario": "shop_1", "db_schema": {"tables": [{"name": "items", "ddl": "CREATE TABLE t (id INT)"}]}},
    "seed": {"scenario": "shop_1", "sample_data": {"tables": []}},
    "spec": {"scenario": "shop_1", "api_spec": {"api_groups": []}},
    "app": {"scenario": "other_2", "full_code": "app = None\n"},
    "verifier": {"scenario": "shop_1", "task_idx": 0, "verification": {"code": "def verify_task(a, b): ..."}},
    "pure_verifier": {"scenario": "shop_1", "task_idx": 1, "verification": {"code": "def f(): ..."}},
}
SET = {FILES[part]: (json.dumps(line) + "\n").encode() for part, line in LINES.items()}


@dataclass
class Hub:
    """What the hub was asked for its files: each request as (method, revision, file), and the Authorization
    headers they came with (the client's other requests, for its own registries, are answered 404 and not kept)."""

    url: str = ""
    requests: list[tuple[str, str, str]] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)
    #: A status to answer every request with (a hub that is down), quoting the Authorization it was sent.
    fail: int | None = None


@pytest.fixture
def fake_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Hub]:
    """The two routes ``hf_hub_download`` asks of a hub for a dataset's file: HEAD for its commit (X-Repo-Commit),
    ETag and size, GET for its bytes, under ``/datasets/<repo>/resolve/<revision>/<file>``."""
    state = Hub()
    prefix = f"/datasets/{hub.REPO}/resolve/"

    class Handler(BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            self._answer(body=False)

        def do_GET(self) -> None:
            self._answer(body=True)

        def _answer(self, body: bool) -> None:
            revision, _, name = self.path.removeprefix(prefix).partition("/")
            if self.path.startswith(prefix):
                state.requests.append((self.command, unquote(revision), unquote(name)))
                state.authorizations.append(self.headers.get("Authorization", ""))
            content = SET.get(unquote(name)) if self.path.startswith(prefix) else None
            if state.fail or content is None:
                status = state.fail or 404
                quoted = f"failed; you sent {self.headers.get('Authorization')}"
                said = json.dumps({"error": quoted}).encode()
                self.send_response(status)
                self.send_header("X-Error-Message", quoted)  # what the client quotes of a HEAD's answer
                if status == 404:
                    self.send_header("X-Error-Code", "EntryNotFound")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(said)))
                self.end_headers()
                self.wfile.write(said if body else b"")
                return
            self.send_response(200)
            # A commit is its own commit; a branch or tag, the one it points at.
            sha = unquote(revision) if re.fullmatch("[0-9a-f]{40}", unquote(revision)) else COMMIT
            self.send_header("X-Repo-Commit", sha)
            self.send_header("ETag", f'"{hashlib.sha256(content).hexdigest()}"')
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            if body:
                self.wfile.write(content)

        def log_message(self, *args: object) -> None:
            pass

    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    with serving(Handler) as state.url:
        for name, value in {"HF_ENDPOINT": state.url, "OCCUBENCH_CACHE_DIR": str(tmp_path / "cache"),
                            "HF_HOME": str(tmp_path / "hf"), "HF_HUB_DISABLE_PROGRESS_BARS": "1",
                            "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}.items():
            monkeypatch.setenv(name, value)
        yield state


def _download(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["data", "download", "awm", *args])
    said = capsys.readouterr()
    return code, said.out, said.err


def test_the_set_lands_in_the_cache_with_its_digest_and_is_not_fetched_twice(
        fake_hub: Hub, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _download(capsys)
    folder = tmp_path / "cache" / "awm-1k" / hub.AWM_REVISION
    assert code == 0 and {path.name: path.read_bytes() for path in folder.glob("gen_*.jsonl")} == SET
    digest = sha256sum_digest(folder)
    assert f"content digest (sha256): {digest}" in out and "2 scenarios, 0 runnable" in " ".join(out.split())
    assert json.loads((folder / hub.RECORD).read_text()) == {"repo": hub.REPO, "revision": hub.AWM_REVISION,
                                                             "digest": digest}
    assert {(method, revision) for method, revision, _ in fake_hub.requests} == {("HEAD", hub.AWM_REVISION),
                                                                                 ("GET", hub.AWM_REVISION)}
    assert sorted(name for method, _, name in fake_hub.requests if method == "GET") == sorted(SET)
    # Pinned to a commit, the files already there are the client's to trust: not one request the second time.
    fake_hub.requests.clear()
    code, again, _ = _download(capsys)
    assert code == 0 and fake_hub.requests == [] and f"content digest (sha256): {digest}" in again


def test_revision_and_dest_pass_through(fake_hub: Hub, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _download(capsys, "--revision", "v1.0", "--dest", str(tmp_path / "mine"))
    assert code == 0 and {revision for _, revision, _ in fake_hub.requests} == {"v1.0"}
    assert (tmp_path / "mine" / FILES["tasks"]).read_bytes() == SET[FILES["tasks"]]
    assert sha256sum_digest(tmp_path / "mine") in out and not (tmp_path / "cache" / "awm-1k").exists()
    code, _, err = _download(capsys, "--revision", "../../elsewhere")
    assert code == 2 and "--revision '../../elsewhere'" in err and len(fake_hub.requests) == 2 * len(SET)
    assert main(["data", "download", "--revision", "v1.0"]) == 2  # the OccuBench data is pinned otherwise
    assert "--revision is for `occubench data download awm`" in capsys.readouterr().err


def test_a_hub_error_is_a_clear_error_that_never_shows_the_token(
        fake_hub: Hub, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    fake_hub.fail = 403
    code, out, err = _download(capsys, "--dest", str(tmp_path / "mine"))
    said = " ".join(err.split())
    assert code == 2 and said.startswith(f"occubench: error: cannot download {FILES['scenario']} of {hub.REPO} "
                                         f"at revision {hub.AWM_REVISION}: HfHubHTTPError: 403 Forbidden")
    # The token went to the hub (the client sends it), and the hub quoted it back: it is masked, and on no disk.
    assert f"Bearer {TOKEN}" in fake_hub.authorizations and "you sent Bearer <redacted>" in said
    assert TOKEN not in out + err
    assert not any(TOKEN.encode() in path.read_bytes() for path in tmp_path.rglob("*") if path.is_file())
    code, _, err = _download(capsys, "--url", "http://127.0.0.1/x.tar")
    assert code == 2 and "--url is for the OccuBench data" in err


def test_suite_awm_without_data_dir_runs_the_downloaded_copy(fake_hub: Hub, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--suite", "awm", "--trust-world-code"]) == 2
    assert "occubench data download awm" in capsys.readouterr().err
    code, out, _ = _download(capsys)
    assert code == 0
    folder = tmp_path / "cache" / "awm-1k" / hub.AWM_REVISION
    assert main(["validate", "--suite", "awm", "--trust-world-code"]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "shop_1" in said and "other_2" in said and "0/2 scenarios run" in said
    # The run's identity holds the digest of the files it read: the one the download printed.
    suite_plan = plan(RunConfig.create({"suite": "awm", "trust_world_code": True}), Console(quiet=True))
    assert suite_plan.task_set is not None and suite_plan.settings["data_dir"] == str(folder)
    assert suite_plan.task_set.identity == {"task_content": sha256sum_digest(folder)}


def test_offline_the_download_stops_at_once_in_one_line_naming_what_to_do(tmp_path: Path) -> None:
    # A hub that cannot be reached: a loopback port nobody listens on (taken from the system, then let go).
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "HF_ENDPOINT": f"http://127.0.0.1:{port}", "OCCUBENCH_CACHE_DIR": str(tmp_path / "cache"),
           "HF_HOME": str(tmp_path / "hf"), "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    done = subprocess.run([sys.executable, "-m", "occubench", "data", "download", "awm"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()  # no retry after retry: the one error line
    assert line.startswith(f"occubench: error: cannot reach the Hugging Face Hub at http://127.0.0.1:{port}: ")
    assert "retry online" in line and "HF_ENDPOINT" in line and "--data-dir FOLDER" in line
    assert all(name in line for name in FILES.values()) and hub.AWM_REVISION in line
    assert not (tmp_path / "cache" / "awm-1k").exists()
