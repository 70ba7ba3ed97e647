"""The live viewer (``occubench view``; its flags are in :mod:`occubench.cli.view`): a local web server
that shows run directories while runs write them — the report's tables and the trajectory viewer, refreshed in the
page without a reload. An ATIF trajectory file, or a folder of them (``occubench export --format atif``), is shown
as a run too (:func:`occubench.export.atif.load_atif`).

The page polls ``/api/state?since=<version>``: every check stats each results file (and ``context.jsonl``), re-reads
only the ones whose size or modification time changed, and answers with the runs, the report's tables and the
summaries of results of the runs changed since that version. A result's full record comes from ``/api/result``
when it is opened. Nothing but these fixed routes is served, and no request names a file: runs are addressed by
their index, results by task id and trial among what was read. The server binds to loopback only, answers only
requests addressed to it by name (a page on another site cannot reach it through DNS rebinding), and forbids any
script or style but its own.
"""

from __future__ import annotations

import errno
import ipaddress
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from occubench.core.results import Result
from occubench.engine.summary import Price
from occubench.errors import ConfigError
from occubench.export.atif import load_atif, trajectory_files
from occubench.report.robustness import robustness_table
from occubench.report.runs import Run, worlds_of
from occubench.report.stats import RunStats, run_stats
from occubench.report.tables import leaderboard_table, modes_table, report_warnings, run_tables, suite_tables
from occubench.report.viewer import VIEWER_HTML, asset, entry, resolve_context, summary
from occubench.store import CONTEXT_FILE, RESULTS_FILE, latest_by_task, read_context, run_records
from occubench.util.jsonsafe import dumps

HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

PAGE = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>OccuBench live viewer</title>
<link rel="stylesheet" href="viewer.css">
</head>
<body>
<header>
<h1>OccuBench live viewer</h1>
<p>Completion = passed / evaluated; errors are counted apart and not scored. Completion intervals: Wilson
score (on the effective sample size when tasks are repeated). The page follows the run directories as they are
written.</p>
<p id="status">Loading…</p>
<nav><a href="#leaderboard">Leaderboard</a><a href="#modes">Fault levels</a><a href="#runs">Runs</a>
<a href="#trajectories">Trajectories</a></nav>
</header>
<main>
<div id="run-errors"></div>
<section id="warnings" class="warnings" hidden><h2>Warnings</h2><ul id="warning-list"></ul></section>
<section id="leaderboard"><h2>Leaderboard</h2><div id="live-leaderboard"></div></section>
<section id="modes"><h2>Fault levels and robustness</h2><div id="live-modes"></div></section>
<section id="runs"><h2>Runs</h2><div id="live-runs"></div></section>
{VIEWER_HTML}
</main>
<script src="viewer.js"></script>
</body>
</html>
""".encode()

_ASSETS = {"/viewer.js": ("viewer.js", "text/javascript; charset=utf-8"),
           "/viewer.css": ("viewer.css", "text/css; charset=utf-8")}


def _signature(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


@dataclass
class _Run:
    index: int
    name: str
    path: Path
    signature: tuple[Any, ...] = ()
    results: list[Result] = field(default_factory=list)
    #: Lines of its results file left out as not the run's.
    left_out: int = 0
    context: dict[str, Any] = field(default_factory=dict)
    stats: RunStats | None = None
    #: The run's section of the report, and what the list shows of each result.
    report: dict[str, Any] = field(default_factory=dict)
    summaries: list[dict[str, Any]] = field(default_factory=list)
    #: Why the results file could not be read (a garbled line, say); what was read before is still shown.
    error: str | None = None
    #: The state version at which this run last changed.
    version: int = 0


class ViewState:
    """The run directories shown and what was last read from them. Given ``run_dirs``, those; else every directory
    of ``output_dir`` that holds a results file, new ones included as they appear."""

    def __init__(self, run_dirs: Sequence[Path] = (), output_dir: Path | None = None,
                 prices: Mapping[str, Price] | None = None) -> None:
        self.output_dir = output_dir
        self.prices = prices
        self.runs: list[_Run] = []
        # Versions start from the clock: a page left open across a restart of the server gets everything again.
        self.version = time.time_ns() // 1000
        self._report: dict[str, Any] = {}
        self._lock = threading.Lock()
        names = [d.name for d in run_dirs]
        for d in run_dirs:  # a name shared by two directories is replaced by the whole path, as in `report`
            self._add(d, d.name if names.count(d.name) == 1 else str(d))

    def _add(self, path: Path, name: str) -> None:
        self.runs.append(_Run(len(self.runs), name, path))

    def _discover(self) -> None:
        if self.output_dir is None:
            return
        known = {run.path for run in self.runs}
        try:
            found = sorted(d for d in self.output_dir.iterdir() if d not in known and (d / RESULTS_FILE).is_file())
        except OSError:  # the folder was removed or renamed while the server runs: keep what was shown
            return
        for d in found:
            self._add(d, d.name)

    def _read(self, run: _Run) -> bool:
        """Read the run again if its files changed; whether they did."""
        # Without a results file, the path is an ATIF trajectory file or a folder of them.
        atif = not (run.path / RESULTS_FILE).is_file()
        try:
            files = trajectory_files(run.path) if atif else [run.path / RESULTS_FILE, run.path / CONTEXT_FILE]
        except OSError:  # the folder was removed while the server runs: read below, which says so
            files = []
        signature = (atif, *((file.name, _signature(file)) for file in files))
        if signature == run.signature:
            return False
        run.signature = signature
        try:
            if atif:
                results, run.context = load_atif(run.path)
                run.left_out = 0
            else:
                # A half-written last line (a run appending right now) is left out until it is whole.
                records = run_records(run.path, quiet=True)
                results, run.left_out = records.results, len(records.left_out)
                run.context = read_context(run.path)
            run.results = list(latest_by_task(results).values())
            run.error = None
        except ConfigError as exc:
            run.error = str(exc)
        except OSError as exc:
            run.error = f"cannot read {run.path if atif else run.path / RESULTS_FILE}: {exc.strerror}"
        loaded = Run(run.name, run.path, run.results, run.left_out, *worlds_of(run.path))
        run.stats = run_stats(loaded, self.prices)
        extra = suite_tables([loaded]).get(run.name, [])
        run.report = {"index": run.index, "name": run.name,
                      "tables": [asdict(t) for t in [*run_tables(run.stats, by_domain=True), *extra]]}
        run.summaries = [summary(run.index, run.name, run.stats.trials, result) for result in run.results]
        self.version += 1
        run.version = self.version
        return True

    def _refresh(self) -> None:
        self._discover()
        changed = [run for run in self.runs if self._read(run)]  # every run is checked
        if not changed and self._report:
            return
        stats = [run.stats for run in self.runs if run.stats]
        modes = robustness_table({run.name: run.results for run in self.runs})
        self._report = {"warnings": report_warnings(modes), "leaderboard": asdict(leaderboard_table(stats)),
                        "modes": asdict(modes_table(modes)), "runs": [run.report for run in self.runs]}

    def state(self, since: int = -1) -> dict[str, Any]:
        """What changed since version ``since``: every run, the report, and the result summaries of the runs that
        changed after it (of all runs for an unknown version). Only the version when nothing changed."""
        with self._lock:
            self._refresh()
            if since == self.version:
                return {"version": self.version}
            if since > self.version:
                since = -1
            return {"version": self.version,
                    "runs": [{"index": run.index, "name": run.name, "path": str(run.path),
                              "results": len(run.results), "error": run.error} for run in self.runs],
                    "results": {str(run.index): run.summaries for run in self.runs if run.version > since},
                    "report": self._report}

    def result(self, run_index: int, task_id: str, trial: int) -> dict[str, Any] | None:
        """The full record of one result as last read, its context values resolved; None if there is none."""
        with self._lock:
            self._refresh()
            if not 0 <= run_index < len(self.runs):
                return None
            run = self.runs[run_index]
            for result in run.results:
                if str(result.task_id) == task_id and result.trial == trial:
                    trials = run.stats.trials if run.stats else 1
                    return {**entry(run.index, run.name, trials, result),
                            "context": resolve_context(result.context, run.context)}
        return None


class _Handler(BaseHTTPRequestHandler):
    server: ViewServer

    def do_GET(self) -> None:
        if self.headers.get("Host") not in self.server.hosts:
            self._send(HTTPStatus.FORBIDDEN, {"error": "unknown Host header"})
            return
        url = urlsplit(self.path)
        if url.path == "/":
            self._send(HTTPStatus.OK, PAGE, "text/html; charset=utf-8")
        elif url.path in _ASSETS:
            name, kind = _ASSETS[url.path]
            self._send(HTTPStatus.OK, asset(name).encode(), kind)
        elif url.path in ("/api/state", "/api/result"):
            self._api(url.path, parse_qs(url.query))
        else:
            self._send(HTTPStatus.NOT_FOUND, {"error": "not found"})

    def _api(self, path: str, query: dict[str, list[str]]) -> None:
        def number(name: str, default: int | None = None) -> int:
            values = query.get(name)
            if not values:
                if default is None:
                    raise ConfigError(f"{name}: missing")
                return default
            try:
                return int(values[-1])
            except ValueError:
                raise ConfigError(f"{name}: an integer is required") from None

        try:
            if path == "/api/state":
                body: dict[str, Any] | None = self.server.view.state(number("since", -1))
            else:
                body = self.server.view.result(number("run"), query.get("task", [""])[-1], number("trial", 0))
        except ConfigError as exc:
            self._send(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
            return
        if body is None:
            self._send(HTTPStatus.NOT_FOUND, {"error": "no such result"})
        else:
            self._send(HTTPStatus.OK, body)

    def _send(self, status: HTTPStatus, body: bytes | dict[str, Any], kind: str = "application/json") -> None:
        data = dumps(body).encode() if isinstance(body, dict) else body
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def end_headers(self) -> None:
        # On every answer, http.server's own errors (a 501 for POST, say) included.
        for name, value in HEADERS.items():
            self.send_header(name, value)
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # a line per poll would bury the terminal


class ViewServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, view: ViewState, host: str, port: int) -> None:
        self.view = view
        super().__init__((host, port), _Handler)
        self.url = f"http://{host}:{self.server_port}/"
        self.hosts = {f"{host}:{self.server_port}", f"localhost:{self.server_port}"}


def view_server(run_dirs: Iterable[Path | str] = (), output_dir: Path | str | None = None, *,
                host: str = "127.0.0.1", port: int = 0, prices: Mapping[str, Price] | None = None) -> ViewServer:
    """The viewer's server, bound and ready for ``serve_forever()``: over ``run_dirs`` if any are given, else over
    every run directory in ``output_dir`` (default ``./results``). Port 0 picks a free port (see ``.url``)."""
    dirs = [Path(d) for d in run_dirs]
    if dirs and output_dir is not None:
        raise ConfigError("give RUN_DIRs or --output-dir, not both")
    for d in dirs:
        if not d.exists():
            raise ConfigError(f"RUN_DIR {d}: not found")
        if not d.is_dir() and d.suffix != ".json":
            raise ConfigError(f"RUN_DIR {d}: neither a directory nor an ATIF trajectory file (*.json)")
    parent = None if dirs else Path(output_dir if output_dir is not None else "results")
    if parent is not None and not parent.is_dir():
        raise ConfigError(f"--output-dir {parent}: no such directory (run something first, or give RUN_DIRs)")
    try:
        loopback = ipaddress.IPv4Address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ConfigError(f"host {host}: the viewer serves results only on an IPv4 loopback address (127.0.0.1)")
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port {port}: not a port number (0 picks a free one)")
    try:
        return ViewServer(ViewState(dirs, parent, prices), host, port)
    except OSError as exc:
        reason = "in use" if exc.errno == errno.EADDRINUSE else exc.strerror
        raise ConfigError(f"--port {port}: cannot listen on {host}:{port} ({reason})") from None


def serve_view(run_dirs: Iterable[Path | str] = (), output_dir: Path | str | None = None, *,
               host: str = "127.0.0.1", port: int = 0, prices: Mapping[str, Price] | None = None) -> None:
    """Serve the viewer (see :func:`view_server`) and print its URL; returns when interrupted (Ctrl-C)."""
    server = view_server(run_dirs, output_dir, host=host, port=port, prices=prices)
    print(server.url, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("viewer stopped", file=sys.stderr)
    finally:
        server.server_close()
