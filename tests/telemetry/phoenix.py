"""Arize Phoenix as the tests' trace collector: its own server (``phoenix serve``, from the phoenix peer of
.ci/peers/phoenix.sh) on loopback, and what it stored read back through its own client (phoenix_reader.py, run by
the peer's Python).

``running_phoenix(folder)`` starts the server at free ports on 127.0.0.1 (OTLP/HTTP on its HTTP port, gRPC on a port
of its own: Phoenix cannot turn its gRPC collector off), everything it writes under ``folder`` (its working folder
and SQLite database, its pid files, a home of its own), its usage telemetry and every request of its own to the
internet off, and yields a :class:`Phoenix` once ``/readyz`` answers; at the end its whole process group is stopped.

Phoenix puts a span in the project its resource's ``openinference.project.name`` attribute names, and in
``default`` without one (an ``x-project-name`` header would win over both): a test that shares the server names a
project of its own, e.g. with ``OTEL_RESOURCE_ATTRIBUTES=openinference.project.name=NAME``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tests.conftest import peer

READER = Path(__file__).with_name("phoenix_reader.py")
#: Bounds on waiting, not assertions: Phoenix takes ~16 s to start on a busy 2-core machine (its migrations and
#: imports), its client ~10 s to import, and spans are stored a batch export and an insertion queue after they end.
START_S = 300
SPANS_S = 180


@dataclass
class Phoenix:
    """A running Phoenix: ``url`` its base URL (UI, REST API, ``/readyz``), ``traces_endpoint`` its OTLP/HTTP
    traces endpoint (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``; ``OTEL_EXPORTER_OTLP_ENDPOINT`` is ``url``),
    ``grpc_port`` its OTLP/gRPC port, ``folder`` what it writes, ``log`` its output."""

    url: str
    traces_endpoint: str
    grpc_port: int
    folder: Path
    log: Path
    python: Path
    _reader: subprocess.Popen[str] | None = field(default=None, repr=False)

    def projects(self) -> list[dict[str, Any]]:
        """Every project Phoenix has (``Client().projects.list()``): ``{"name", "id", "description"}`` each."""
        return list(self._ask({"projects": True})["projects"])

    def spans(self, project: str = "default", *, trace_ids: list[str] | None = None, count: int | None = None,
              until: Callable[[list[dict[str, Any]]], bool] | None = None,
              timeout: float = SPANS_S) -> list[dict[str, Any]]:
        """Every span Phoenix stored in ``project`` (of ``trace_ids`` only, if given), once there are at least
        ``count`` of them and ``until(spans)`` holds (read again every half second, up to ``timeout`` seconds: spans
        arrive after their batch is exported and stored); without either, what is stored now. Each span as
        phoenix_reader.py describes it: ``trace_id``, ``span_id``, ``parent_id`` (None for a root), ``name``,
        ``kind`` (OpenInference's span kind), ``status``, ``status_message``, ``start_time``, ``end_time``,
        ``attributes`` (flat: dotted names to values) and ``events`` (``name``, ``timestamp``, flat
        ``attributes``)."""
        deadline = time.monotonic() + timeout
        while True:
            found = self._ask({"spans": project, "trace_ids": trace_ids})["spans"]
            spans = list(found or [])
            waiting = count is not None or until is not None
            if not waiting or (found is not None and (count is None or len(spans) >= count)
                               and (until is None or until(spans))):
                return spans
            if time.monotonic() > deadline:
                seen = sorted((s["trace_id"], s["name"]) for s in spans)
                raise AssertionError(f"after {timeout:.0f} s Phoenix has in project {project!r} "
                                     f"{'no such project' if found is None else f'{len(spans)} spans: {seen}'} "
                                     f"(waited for {count} spans{' and a condition' if until else ''}); "
                                     f"projects: {[p['name'] for p in self.projects()]}; log: {self.log}")
            time.sleep(0.5)

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        if self._reader is None:
            errors = open(self.folder / "reader.err", "w")
            self._reader = subprocess.Popen([str(self.python), "-I", str(READER), self.url], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=errors, text=True, env=_env(self.folder))
            errors.close()
        reader = self._reader
        assert reader.stdin is not None and reader.stdout is not None
        try:
            reader.stdin.write(json.dumps(request) + "\n")
            reader.stdin.flush()
            line = reader.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            reader.wait(timeout=30)
            raise AssertionError(f"Phoenix's client stopped ({reader.returncode}): "
                                 f"{(self.folder / 'reader.err').read_text()[-3000:]}")
        return dict(json.loads(line))

    def close(self) -> None:
        """Ends the reader, if one was started."""
        if self._reader is not None:
            reader, self._reader = self._reader, None
            _close(reader.stdin)
            try:
                reader.wait(timeout=30)
            except subprocess.TimeoutExpired:
                reader.kill()
                reader.wait()
            _close(reader.stdout)


def _close(stream: IO[str] | None) -> None:
    if stream is not None:
        try:
            stream.close()
        except OSError:
            pass


def _env(folder: Path) -> dict[str, str]:
    """Ours, without any Phoenix or OpenTelemetry setting of the developer's, with a home and temporary folder under
    ``folder``, and loopback reached without a proxy."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PHOENIX_", "OTEL_"))}
    for name in ("home", "tmp"):
        (folder / name).mkdir(exist_ok=True)
    return {**env, "HOME": str(folder / "home"), "TMPDIR": str(folder / "tmp"),
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for probe in sockets:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in sockets]
    finally:
        for probe in sockets:
            probe.close()


def _ready(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, never through a proxy
    try:
        with opener.open(url + "/readyz", timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@contextmanager
def running_phoenix(folder: Path) -> Iterator[Phoenix]:
    """Phoenix's own server from the phoenix peer (skipped, or failed where peers are required, without it),
    writing only under ``folder``, until the block ends."""
    venv = peer("phoenix")
    folder.mkdir(parents=True, exist_ok=True)
    port, grpc_port = _free_ports(2)
    url = f"http://127.0.0.1:{port}"
    env = {**_env(folder),
           "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc_port),
           "PHOENIX_WORKING_DIR": str(folder / "working"),  # its SQLite database (phoenix.db) and exports
           "PHOENIX_TELEMETRY_ENABLED": "false",  # its usage telemetry (the UI's FullStory and Scarf pixels)
           "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",  # no request of its own to the internet (fonts, downloads)
           "PHOENIX_DISABLE_AGENT_ASSISTANT": "true"}  # its LLM assistant, which no test uses
    log = folder / "phoenix.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([str(venv / "bin" / "phoenix"), "serve"], cwd=folder, stdin=subprocess.DEVNULL,
                                   stdout=out, stderr=out, env=env, start_new_session=True)
    phoenix = Phoenix(url=url, traces_endpoint=f"{url}/v1/traces", grpc_port=grpc_port, folder=folder, log=log,
                      python=venv / "bin" / "python")
    try:
        deadline = time.monotonic() + START_S
        while not _ready(url):
            assert process.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
            time.sleep(0.2)
        yield phoenix
    finally:
        phoenix.close()
        _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Its whole process group: terminated, killed if it is still there after 30 s."""
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
