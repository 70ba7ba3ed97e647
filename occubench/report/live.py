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

Live hints (``occubench run --live-hints``, :mod:`occubench.core.hints`): for a run directory with a ``live/``
folder, the state also lists the episodes in progress with their latest calls, and ``POST /api/hint`` appends a
person's hint (tier, text, name) to an episode's hints file, which the run hands the agent with its next
observation. Only a request whose ``X-Occubench-Token`` header is the run's token (``live/token``) may send one:
any other gets 403 and nothing is written. The token reaches the browser only through the URL the viewer prints
for each live run (``?token=...``, which the page keeps and takes out of its address bar); no page or answer of
the server ever holds it.
"""

from __future__ import annotations

import errno
import hmac
import ipaddress
import json
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from occubench.core.hints import LIVE_DIR, hint_problem, read_token
from occubench.core.results import Result, with_live_label
from occubench.engine.summary import Price
from occubench.errors import ConfigError
from occubench.export.atif import load_atif, trajectory_files
from occubench.report.live_episodes import MAX_BODY, append_hint, episodes, live_files
from occubench.report.live_episodes import signature as file_signature
from occubench.report.robustness import robustness_table
from occubench.report.runs import Run, apart, worlds_of
from occubench.report.stats import RunStats, run_stats
from occubench.report.tables import leaderboard_table, modes_table, report_warnings, run_tables, suite_tables
from occubench.report.viewer import VIEWER_HTML, asset, entry, resolve_context, summary
from occubench.store import CONTEXT_FILE, RESULTS_FILE, latest_by_task, read_context, run_records
from occubench.util.jsonsafe import dumps
from occubench.util.lock import LOCK_FILE
from occubench.util.text import terminal

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
<nav><a href="#live">Live</a><a href="#leaderboard">Leaderboard</a><a href="#modes">Fault levels</a>
<a href="#runs">Runs</a><a href="#trajectories">Trajectories</a></nav>
</header>
<main>
<div id="run-errors"></div>
<section id="live" hidden><h2>Live episodes</h2>
<p class="sub">Episodes of runs started with --live-hints, as they happen. A hint reaches the agent with the
observation of its next tool call and is recorded in the episode's result; results with hints are reported apart.
Sending one takes the URL <code>occubench view</code> printed for the run: it carries the run's token.</p>
<div id="live-episodes"></div></section>
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
    #: Its statistics, one per part: results with live hints are a part of their own (:func:`apart`).
    stats: list[RunStats] = field(default_factory=list)
    #: The run's section of the report, and what the list shows of each result.
    report: dict[str, Any] = field(default_factory=dict)
    summaries: list[dict[str, Any]] = field(default_factory=list)
    #: Why the results file could not be read (a garbled line, say); what was read before is still shown.
    error: str | None = None
    #: The state version at which this run last changed.
    version: int = 0
    #: Its episodes in progress (``live/``, a run with live hints), as the page shows them, and what they were
    #: read from.
    live: list[dict[str, Any]] = field(default_factory=list)
    live_signature: tuple[Any, ...] = ()
    #: The token the viewer last printed a URL with.
    announced: str | None = None

    @property
    def live_dir(self) -> Path:
        return self.path / LIVE_DIR

    @property
    def trials(self) -> int:
        return max((stats.trials for stats in self.stats), default=1)


class ViewState:
    """The run directories shown and what was last read from them. Given ``run_dirs``, those; else every directory
    of ``output_dir`` that holds a results file, new ones included as they appear."""

    def __init__(self, run_dirs: Sequence[Path] = (), output_dir: Path | None = None,
                 prices: Mapping[str, Price] | None = None) -> None:
        self.output_dir = output_dir
        self.prices = prices
        #: Called with a live run's name and token when the viewer first finds it (or its token changes): the
        #: server prints the URL to send hints from.
        self.announce: Callable[[str, str], None] | None = None
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
            found = sorted(d for d in self.output_dir.iterdir() if d not in known and
                           ((d / RESULTS_FILE).is_file() or (d / LIVE_DIR).is_dir()))
        except OSError:  # the folder was removed or renamed while the server runs: keep what was shown
            return
        for d in found:
            self._add(d, d.name)

    def _read(self, run: _Run) -> bool:
        """Read the run again if its files changed; whether they did."""
        # Without a results file, the path is an ATIF trajectory file or a folder of them, or a live run before its
        # first result.
        atif = not (run.path / RESULTS_FILE).is_file() and not run.live_dir.is_dir()
        try:
            files = trajectory_files(run.path) if atif else [run.path / RESULTS_FILE, run.path / CONTEXT_FILE]
        except OSError:  # the folder was removed while the server runs: read below, which says so
            files = []
        signature = (atif, *((file.name, file_signature(file)) for file in files))
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
            # Labelled as every report shows them: results with live hints are never pooled with results without.
            run.results = [with_live_label(result) for result in latest_by_task(results).values()]
            run.error = None
        except ConfigError as exc:
            run.error = str(exc)
        except OSError as exc:
            run.error = f"cannot read {run.path if atif else run.path / RESULTS_FILE}: {exc.strerror}"
        parts = apart(Run(run.name, run.path, run.results, run.left_out, *worlds_of(run.path)))
        run.stats = [run_stats(part, self.prices) for part in parts]
        extra = suite_tables(parts)
        run.report = {"index": run.index, "name": run.name,
                      "tables": [asdict(t) for part, stats in zip(parts, run.stats, strict=True)
                                 for t in [*run_tables(stats, by_domain=True), *extra.get(part.name, [])]]}
        run.summaries = [summary(run.index, run.name, run.trials, result) for result in run.results]
        self.version += 1
        run.version = self.version
        return True

    def _read_live(self, run: _Run) -> None:
        """Read the run's episodes in progress again if its live files changed (a new version then)."""
        files = live_files(run.live_dir)
        signature = (file_signature(run.path / LOCK_FILE), *((path.name, file_signature(path)) for path in files))
        if signature == run.live_signature:
            return
        run.live_signature = signature
        if (token := read_token(run.live_dir)) is not None and token != run.announced:
            run.announced = token
            if self.announce is not None:
                self.announce(run.name, token)
        run.live = [{"run_index": run.index, "run": run.name, **episode} for episode in episodes(run.path, files)]
        self.version += 1

    def _refresh(self) -> None:
        self._discover()
        for run in self.runs:
            if run.live_dir.is_dir() or run.live:
                self._read_live(run)
        changed = [run for run in self.runs if self._read(run)]  # every run is checked
        if not changed and self._report:
            return
        stats = [stats for run in self.runs for stats in run.stats]
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
                    "report": self._report, "live": [episode for run in self.runs for episode in run.live]}

    def result(self, run_index: int, task_id: str, trial: int) -> dict[str, Any] | None:
        """The full record of one result as last read, its context values resolved; None if there is none."""
        with self._lock:
            self._refresh()
            if not 0 <= run_index < len(self.runs):
                return None
            run = self.runs[run_index]
            for result in run.results:
                if str(result.task_id) == task_id and result.trial == trial:
                    return {**entry(run.index, run.name, run.trials, result),
                            "context": resolve_context(result.context, run.context)}
        return None

    def authorized(self, token: str) -> set[int]:
        """The runs whose token ``token`` is (compared in constant time): the ones it may send hints to."""
        given = token.encode()
        if not given:
            return set()
        with self._lock:
            self._discover()
            runs = list(self.runs)
        found = set()
        for run in runs:  # every live run is compared, so the time taken says nothing of which one matched
            expected = read_token(run.live_dir)
            if expected is not None and hmac.compare_digest(given, expected.encode()):
                found.add(run.index)
        return found

    def send_hint(self, run_index: int, episode: str, who: str, tier: int, text: str) -> dict[str, Any] | None:
        """Append a hint (checked already) to an episode in progress of run ``run_index``; what was written, or
        None when the run has no such episode in progress."""
        with self._lock:
            if not 0 <= run_index < len(self.runs):
                return None
            run = self.runs[run_index]
            self._read_live(run)  # an episode that started since the last poll is found
            if not any(e["key"] == episode for e in run.live):
                return None
            record = append_hint(run.live_dir, episode, who, tier, text)
            self._read_live(run)
            return record


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

    def do_POST(self) -> None:
        """``/api/hint``: a hint for an episode in progress, from a request carrying its run's token."""
        self._send(*self._post())

    def _post(self) -> tuple[HTTPStatus, dict[str, Any]]:
        server = self.server
        if self.headers.get("Host") not in server.hosts:
            return HTTPStatus.FORBIDDEN, {"error": "unknown Host header"}
        origin = self.headers.get("Origin")
        if origin is not None and origin not in {f"http://{host}" for host in server.hosts}:
            return HTTPStatus.FORBIDDEN, {"error": "unknown Origin header"}
        path = urlsplit(self.path).path
        if path != "/api/hint":
            known = path == "/" or path in _ASSETS or path in ("/api/state", "/api/result")
            return (HTTPStatus.METHOD_NOT_ALLOWED, {"error": "only GET here"}) if known else \
                (HTTPStatus.NOT_FOUND, {"error": "not found"})
        # The token first: a request without it learns nothing, whatever its body.
        runs = server.view.authorized(self.headers.get("X-Occubench-Token", ""))
        if not runs:
            return HTTPStatus.FORBIDDEN, {"error": "missing or wrong X-Occubench-Token: open the URL `occubench "
                                          "view` printed for the run"}
        return self._hint(runs)

    def _hint(self, runs: set[int]) -> tuple[HTTPStatus, dict[str, Any]]:
        """A hint from a request whose token is that of ``runs``."""
        if not (self.headers.get("Content-Type") or "").startswith("application/json"):
            return HTTPStatus.UNSUPPORTED_MEDIA_TYPE, {"error": "send the hint as application/json"}
        length = self.headers.get("Content-Length", "")
        if not (length.isascii() and length.isdigit()) or not 0 < int(length) <= MAX_BODY:
            return HTTPStatus.BAD_REQUEST, {"error": f"a body of 1 to {MAX_BODY:,} bytes is required"}
        try:
            body = json.loads(self.rfile.read(int(length)))
        except (ValueError, RecursionError):
            body = None
        if not isinstance(body, dict):
            return HTTPStatus.BAD_REQUEST, {"error": "the body must be a JSON object"}
        run, episode = body.get("run"), body.get("episode")
        if not isinstance(run, int) or isinstance(run, bool):
            return HTTPStatus.BAD_REQUEST, {"error": "run: the run's index is required"}
        if run not in runs:
            return HTTPStatus.FORBIDDEN, {"error": "this token is not that run's"}
        if (problem := hint_problem(body.get("name"), body.get("tier"), body.get("text"))) is not None:
            return HTTPStatus.BAD_REQUEST, {"error": problem}
        if not isinstance(episode, str) or (record := self.server.view.send_hint(
                run, episode, body["name"], body["tier"], body["text"])) is None:
            return HTTPStatus.NOT_FOUND, {"error": "no such episode in progress (it may have ended)"}
        return HTTPStatus.OK, {"sent": record["id"], "at": record["at"], "tier": record["tier"]}

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

    def live_url(self, token: str) -> str:
        """The page's URL that carries a live run's token (what a person opens to send hints)."""
        return f"{self.url}?token={quote(token, safe='')}"


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


def _announce(server: ViewServer, run: str, token: str) -> None:
    """Print the URL a person sends a live run's hints from, as Jupyter prints its own: on the terminal only."""
    print(f"live hints for {terminal(run, newlines=False)}: {server.live_url(token)}", flush=True)


def serve_view(run_dirs: Iterable[Path | str] = (), output_dir: Path | str | None = None, *,
               host: str = "127.0.0.1", port: int = 0, prices: Mapping[str, Price] | None = None) -> None:
    """Serve the viewer (see :func:`view_server`) and print its URL; returns when interrupted (Ctrl-C)."""
    server = view_server(run_dirs, output_dir, host=host, port=port, prices=prices)
    print(server.url, flush=True)
    server.view.announce = partial(_announce, server)
    server.view.state()  # the live runs there are now are announced at once, later ones when found
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("viewer stopped", file=sys.stderr)
    finally:
        server.server_close()
