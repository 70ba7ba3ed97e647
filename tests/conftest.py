"""Shared fixtures: a loopback OpenAI-compatible server, the project's small dataset, the real OccuBench data."""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from occubench.executable.registry import builtin_worlds
from occubench.sandbox import Provider, detect
from occubench.simulated.data import SAMPLE
from occubench.testing import MockLLMServer

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "occubench-data"
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
        pytest.skip(f"the OccuBench data is not at {SHARED_DATA} (fetch it with `occubench data download`)")
    return SHARED_DATA


@pytest.fixture
def server() -> Iterator[MockLLMServer]:
    """The scripted mock server: plays agent, world model and verifier deterministically."""
    with MockLLMServer() as mock:
        yield mock


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # A developer's real endpoint or key must never be used by a test.
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OCCUBENCH_DATA"):
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
