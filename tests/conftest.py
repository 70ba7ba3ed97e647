"""Shared fixtures: a loopback OpenAI-compatible server, a loopback server of archives, the project's small dataset,
the real OccuBench data."""

from __future__ import annotations

import io
import json
import os
import re
import tarfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from occubench.executable.registry import builtin_worlds
from occubench.sandbox import Provider, detect
from occubench.sandbox.forking import Forking
from occubench.sandbox.landlock import REQUIRED_ABI, abi
from occubench.simulated.data import SAMPLE
from occubench.testing import MockLLMServer

#: The data the tests read from shared/ beside the repository (as CI lays it out), never committed.
SHARED = Path(__file__).resolve().parents[2] / "shared"
SHARED_DATA = SHARED / "occubench-data"
#: What un-skips the tests that read the OccuBench data (the download verifies it against the pinned checksums).
NO_SHARED_DATA = (f"the OccuBench data is not at {SHARED_DATA}: download it there with "
                  f"`occubench data download --dest {SHARED_DATA}`")
AWM_SAMPLE = SHARED / "awm-1k-sample"
#: The built-in executable worlds and their tasks, counted from the registry: a world added needs no test changed.
BUILTIN_WORLDS = builtin_worlds()
BUILTIN_TASKS = sum(len(world.tasks) for world in BUILTIN_WORLDS)

@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 answering with ``handler`` while the block runs; its base URL."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()



@dataclass
class ArchiveServer:
    """Files served over loopback HTTP (``serve``), and the paths asked for; ``announce_length`` off sends a body
    without a Content-Length, ended by closing the connection."""

    base_url: str
    routes: dict[str, bytes] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    announce_length: bool = True

    def serve(self, name: str, body: bytes) -> str:
        self.routes[f"/{name}"] = body
        return f"{self.base_url}/{name}"


@pytest.fixture
def archive_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ArchiveServer]:
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")  # loopback bypasses any proxy of the developer's
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    state = ArchiveServer(base_url="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.requests.append(self.path)
            body = state.routes.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/gzip")
            if state.announce_length:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

    with serving(Handler) as state.base_url:
        yield state


def make_archive(top: str, files: dict[str, bytes], *members: tarfile.TarInfo) -> bytes:
    """A gzipped archive in GitHub's shape: ``files`` (paths below the one folder ``top``), then ``members`` as they
    are (links, devices, paths of any kind; a regular one filled with zeros)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        for name, payload in files.items():
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(payload)
            archive.addfile(info, io.BytesIO(payload))
        for info in members:
            archive.addfile(info, io.BytesIO(bytes(info.size)) if info.isreg() else None)
    return buffer.getvalue()


def tar_member(name: str, kind: bytes, **attrs: object) -> tarfile.TarInfo:
    """An archive member's header of any kind (a link, a device, a file of any claimed size)."""
    info = tarfile.TarInfo(name)
    info.type = kind
    for key, value in attrs.items():
        setattr(info, key, value)
    return info

def write_small_data(root: Path, copies: int = 1) -> Path:
    """The OccuBench-format sample shipped with the package (3 tasks over two simulated worlds), its tasks repeated
    ``copies`` times under new ids (+10 per copy), under ``root``."""
    configs = root / "world_model_configs"
    configs.mkdir(parents=True, exist_ok=True)
    (root / "task_scenario_all_pool.jsonl").write_bytes((SAMPLE / "scenarios.jsonl").read_bytes())
    sample = [json.loads(line) for line in (SAMPLE / "tasks.jsonl").read_text().splitlines()]
    tasks = [{**task, "task_id": task["task_id"] + 10 * copy} for copy in range(copies) for task in sample]
    (root / "eval_benchmark_solvable.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    for config in (SAMPLE / "worlds").iterdir():
        (configs / config.name).write_bytes(config.read_bytes())
    return root


def run_folder(root: Path, prefix: str) -> Path:
    """The one run directory of ``root`` named by default as ``prefix`` and the short hash of its identity."""
    found = [p for p in Path(root).glob(f"{prefix}__*") if re.fullmatch(re.escape(prefix) + "__[0-9a-f]{8}", p.name)]
    assert len(found) == 1, f"expected one {prefix}__<hash> in {root}: {sorted(p.name for p in Path(root).iterdir())}"
    return found[0]


def agent_requests(server: MockLLMServer) -> list[dict]:
    """The agent's requests of the episodes: they carry tools and start with its system prompt (the preflight's
    tool probe has neither)."""
    return [r for r in server.requests if r.get("tools") and r["messages"][0]["role"] == "system"]


@pytest.fixture
def small_data(tmp_path: Path) -> Path:
    return write_small_data(tmp_path / "data")


@pytest.fixture
def shared_data() -> Path:
    if not (SHARED_DATA / "eval_benchmark_solvable.jsonl").is_file():
        pytest.skip(NO_SHARED_DATA)
    return SHARED_DATA


def awm_sample() -> Path:
    """The three-line sample of AgentWorldModel-1K the AWM tests read, or the test is skipped saying what to do."""
    if not (AWM_SAMPLE / "gen_envs.jsonl").is_file():
        pytest.skip(f"the AWM-1K sample is not at {AWM_SAMPLE}: put the sample of shared/ beside the repository "
                    "there (its README says what it is); a full download of the set is not it")
    return AWM_SAMPLE


def extra_reason(extra: str) -> str:
    """The skip reason of a test whose module comes with ``extra``: what installs it."""
    return f"needs the {extra} extra: pip install -e '.[{extra}]' (or '.[dev]', which has every extra)"



@pytest.fixture
def server() -> Iterator[MockLLMServer]:
    """The scripted mock server: plays agent, world model and verifier deterministically."""
    with MockLLMServer() as mock:
        yield mock


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # A developer's real endpoint or key must never be used by a test, nor their OpenTelemetry collector.
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OCCUBENCH_DATA",
                 *(name for name in os.environ if name.startswith("OTEL_"))):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def sandbox() -> Provider:
    """The machine's sandbox provider (bubblewrap). Without one, a test that needs it is skipped, naming what is
    missing, unless ``OCCUBENCH_REQUIRE_SANDBOX`` is set (as ``.ci/run`` sets it), where that fails it."""
    detection = detect()
    if detection.provider is None:
        if os.environ.get("OCCUBENCH_REQUIRE_SANDBOX"):
            pytest.fail(f"OCCUBENCH_REQUIRE_SANDBOX is set but there is no sandbox: {detection.reason}")
        pytest.skip(f"no sandbox provider here: {detection.reason}")
    return detection.provider


#: How the browser tests start Debian's Chromium (headless, as root on a closed network: no sandbox, nothing fetched
#: from Google's hosts), each with a fresh profile folder.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture
def browser() -> str:
    """Chromium's path, for a test driving it with Playwright. Without Chromium or Playwright, a test that needs them
    is skipped, naming what is missing, unless ``OCCUBENCH_REQUIRE_BROWSER`` is set (as ``.ci/run`` sets it), where
    that fails it."""
    missing = None
    if not os.access(CHROMIUM, os.X_OK):
        missing = f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            missing = "no Playwright (pip install -e '.[dev]')"
    if missing is not None:
        if os.environ.get("OCCUBENCH_REQUIRE_BROWSER"):
            pytest.fail(f"OCCUBENCH_REQUIRE_BROWSER is set but there is {missing}")
        pytest.skip(missing)
    return CHROMIUM


def peer(name: str) -> Path:
    """The virtualenv of peer project ``name`` that `bash .ci/peers.sh DIR` made (see that script), found through
    ``OCCUBENCH_PEERS``; without it the test is skipped, unless ``OCCUBENCH_REQUIRE_PEERS`` is set (as ``.ci/run``
    sets it), where that fails it."""
    root = os.environ.get("OCCUBENCH_PEERS")
    folder = Path(root) / name if root else None
    if folder is None or not (folder / "bin" / "python").exists():
        reason = f"no {name} peer environment: run `bash .ci/peers.sh DIR` and set OCCUBENCH_PEERS=DIR"
        if os.environ.get("OCCUBENCH_REQUIRE_PEERS"):
            pytest.fail(f"OCCUBENCH_REQUIRE_PEERS is set but there is {reason}")
        pytest.skip(reason)
    return folder


@pytest.fixture(params=["own sandbox", "forked"])
def worker_sandbox(request: pytest.FixtureRequest, sandbox: Provider, tmp_path: Path) -> Iterator[Provider]:
    """Each scenario's worker in a sandbox of its own, and forked from a zygote (whose folders are under
    ``tmp_path``), as runs on kernels with Landlock have them."""
    pytest.importorskip("sqlalchemy", reason=extra_reason("awm"))
    if request.param == "own sandbox":
        yield sandbox
        return
    if abi() < REQUIRED_ABI:
        pytest.skip(f"this kernel's Landlock ABI is {abi()}: workers are not forked here")
    from occubench.awm.world import PRELOAD

    forked = Forking(sandbox, tmp_path, PRELOAD)
    try:
        yield forked
    finally:
        forked.close()
