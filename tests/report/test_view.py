"""`occubench view`: the live viewer's server, started in-process on a free port and asked over HTTP on 127.0.0.1,
as the page asks it; and the page itself in headless Chromium (scripts/check_view.py) when Chromium is installed."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from occubench.cli.view import add_parser
from occubench.errors import ConfigError
from occubench.report import html_report, load_run_dirs
from occubench.report.live import ViewServer, view_server
from tests.report.conftest import TECH, result, write_run

ROOT = Path(__file__).resolve().parents[2]
EVIL = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">'
TOOLS = [{"type": "function", "function": {
    "name": "get_prescription", "description": "Look up a prescription.",
    "parameters": {"type": "object", "properties": {"rx_id": {"type": "string"}}}}}]
JUDGE_PROMPT = [{"role": "system", "content": "You grade pharmacy work."}, {"role": "user", "content": "Grade it."}]
CONTEXT = {"instruction": "Refill RX-100 " + EVIL, "system_prompt": "You are a pharmacy assistant.", "tools": TOOLS,
           "judge_prompt": JUDGE_PROMPT}
IDS = {kind: f"{i:016x}" for i, kind in enumerate(CONTEXT)}
MESSAGES = [{"role": "assistant", "content": "", "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "get_prescription", "arguments": '{"rx_id": "RX-100"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": '{"refills": 2, "note": "' + EVIL.replace('"', "'") + '"}'},
    {"role": "assistant", "content": "Refilled."}]
STATE_DIFF = {"prescriptions": {"inserted": [], "deleted": [],
                                "updated": [{"key": ["RX-100"], "changes": {"refills": [2, 1]}}]}}
TIMEOUT_S = 30.0


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record) + "\n"


def _detailed(task_id: int) -> dict[str, Any]:
    return result(task_id, True, context=IDS, messages=MESSAGES, final_answer=EVIL,
                  agent_output={"command": "agent.py", "exit_code": 0, "stdout": EVIL, "stderr": "warn " + EVIL},
                  verdict_details={"checks": [{"name": "refill recorded", "passed": True, "message": "1 row"}],
                                   "state_diff": STATE_DIFF},
                  usage={"agent": {"prompt_tokens": 900, "completion_tokens": 80, "calls": 3,
                                   "retries": {"rate_limited": 2}}})


@pytest.fixture()
def results_dir(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    run = write_run(root, "A__sim__E0", [_detailed(1), result(2, False, category=TECH), result(3, None)])
    (run / "context.jsonl").write_text("".join(_line({"id": IDS[k], "value": v}) for k, v in CONTEXT.items()),
                                       encoding="utf-8")
    return root


@contextmanager
def serving(*run_dirs: Path, output_dir: Path | None = None) -> Iterator[ViewServer]:
    server = view_server(run_dirs, output_dir)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def request(server: ViewServer, path: str, host: str | None = None,
            method: str = "GET") -> tuple[int, http.client.HTTPMessage, bytes]:
    """The path sent as is (no client-side normalisation of ``..``)."""
    connection = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=TIMEOUT_S)
    try:
        connection.putrequest(method, path, skip_host=True)
        connection.putheader("Host", host or f"127.0.0.1:{server.server_port}")
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.headers, response.read()
    finally:
        connection.close()


def api(server: ViewServer, path: str) -> Any:
    status, headers, body = request(server, path)
    assert status == 200, body
    assert headers["Content-Type"] == "application/json"
    return json.loads(body.decode("utf-8"))  # strict: UTF-8, no NaN, no lone surrogate escapes left


def wait_for(check: Callable[[], Any]) -> Any:
    """Poll until ``check`` returns something true, as the page does; fail after a generous timeout."""
    deadline = time.monotonic() + TIMEOUT_S
    while not (value := check()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return value


def next_change(server: ViewServer, since: int) -> dict[str, Any]:
    """The first answer to the page's poll that has news."""
    def poll() -> dict[str, Any] | None:
        state = api(server, f"/api/state?since={since}")
        return state if "runs" in state else None

    return wait_for(poll)


def test_state_lists_summaries_and_the_report(results_dir: Path) -> None:
    with serving(output_dir=results_dir) as server:
        state = api(server, "/api/state")
    (run,) = state["runs"]
    assert run["name"] == "A__sim__E0" and run["results"] == 3 and run["error"] is None
    summaries = state["results"]["0"]
    assert [(s["key"], s["outcome"]) for s in summaries] == [("0/1/0", "pass"), ("0/2/0", "fail"), ("0/3/0", "error")]
    assert "steps" not in summaries[0] and "messages" not in summaries[0]  # the list gets summaries only
    leaderboard = state["report"]["leaderboard"]
    assert "95% CI" in leaderboard["columns"] and leaderboard["rows"][0][1] == "A__sim__E0"
    assert "A__sim__E0: by category" in [t["title"] for t in state["report"]["runs"][0]["tables"]]


def test_result_has_the_full_record_with_context_resolved(results_dir: Path) -> None:
    with serving(results_dir / "A__sim__E0") as server:
        record = api(server, "/api/result?run=0&task=1&trial=0")
        assert request(server, "/api/result?run=0&task=9&trial=0")[0] == 404
    assert record["context"] == CONTEXT
    assert record["messages"] == MESSAGES and record["final_answer"] == EVIL
    assert record["agent_output"]["stdout"] == EVIL  # an agent program's output, set as text by the page
    assert record["verdict_details"]["state_diff"] == STATE_DIFF
    assert record["usage"]["agent"]["retries"] == {"rate_limited": 2}


def test_new_lines_and_new_runs_show_up_in_the_next_poll(results_dir: Path) -> None:
    with serving(output_dir=results_dir) as server:
        version = api(server, "/api/state")["version"]
        assert api(server, f"/api/state?since={version}") == {"version": version}  # nothing changed
        path = results_dir / "A__sim__E0" / "results.jsonl"
        with path.open("a", encoding="utf-8") as handle:
            handle.write(_line(result(4, True)))
        state = next_change(server, version)
        assert [r["task_id"] for r in state["results"]["0"]] == [1, 2, 3, 4]
        write_run(results_dir, "B__sim__E0", [result(1, False)])
        state = next_change(server, state["version"])
        assert [r["name"] for r in state["runs"]] == ["A__sim__E0", "B__sim__E0"]
        assert list(state["results"]) == ["1"]  # only the run that changed


def test_half_written_last_line_waits_until_whole(results_dir: Path) -> None:
    path = results_dir / "A__sim__E0" / "results.jsonl"
    line = _line(result(4, True))
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line[:20])
    with serving(output_dir=results_dir) as server:
        state = api(server, "/api/state")
        assert state["runs"][0]["results"] == 3 and state["runs"][0]["error"] is None
        with path.open("a", encoding="utf-8") as handle:
            handle.write(line[20:])
        wait_for(lambda: api(server, "/api/state")["runs"][0]["results"] == 4)


def test_garbled_line_is_an_error_of_its_run_only(results_dir: Path) -> None:
    bad = results_dir / "B__sim__E0"
    bad.mkdir()
    (bad / "results.jsonl").write_text(_line(result(1, True)) + "{not json\n" + _line(result(2, True)),
                                       encoding="utf-8")
    with serving(output_dir=results_dir) as server:
        runs = {r["name"]: r for r in api(server, "/api/state")["runs"]}
        assert runs["A__sim__E0"]["error"] is None and runs["A__sim__E0"]["results"] == 3
        assert "results.jsonl:2: not a valid result line" in runs["B__sim__E0"]["error"]
        assert api(server, "/api/result?run=0&task=2&trial=0")["outcome"] == "fail"  # still serving


def test_only_fixed_routes_and_no_path_reaches_a_file(results_dir: Path) -> None:
    with serving(output_dir=results_dir) as server:
        for path in ("/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/viewer.js/../../../etc/passwd",
                     "/A__sim__E0/results.jsonl", "/results.jsonl", "//etc/passwd"):
            status, _, body = request(server, path)
            assert status == 404 and b"root:" not in body, path
        for query in ("run=../..&task=1&trial=0", "run=0&task=../../etc/passwd&trial=0", "run=-1&task=1",
                      "run=5&task=1", "run=0&task=1&trial=x", "task=1"):
            status, _, body = request(server, "/api/result?" + query)
            assert status in (400, 404) and b"root:" not in body, query
        assert request(server, "/api/state?since=x")[0] == 400
        # A page elsewhere that rebinds its own host name to 127.0.0.1 is refused.
        assert request(server, "/api/state", host=f"evil.example:{server.server_port}")[0] == 403


def test_security_headers_and_no_inline_script(results_dir: Path) -> None:
    with serving(output_dir=results_dir) as server:
        pages = {path: request(server, path) for path in ("/", "/viewer.js", "/viewer.css", "/api/state", "/nope")}
        pages["PUT"] = request(server, "/api/state", method="PUT")
        pages["POST"] = request(server, "/api/state", method="POST")
    assert pages["PUT"][0] == 501  # http.server's own answer: it gets the headers too
    assert pages["POST"][0] == 405  # only hints are posted (to /api/hint)
    for path, (_, headers, _) in pages.items():
        assert headers["Content-Security-Policy"].startswith(
            "default-src 'self'; script-src 'self'; style-src 'self'"), path
        assert headers["X-Content-Type-Options"] == "nosniff", path
    page = pages["/"][2].decode()
    assert page.count("<script") == 1 and '<script src="viewer.js"></script>' in page and "<style" not in page
    assert pages["/viewer.js"][1]["Content-Type"].startswith("text/javascript")
    assert pages["/viewer.css"][1]["Content-Type"].startswith("text/css")


def test_hostile_strings_come_back_as_json_strings(tmp_path: Path) -> None:
    huge = "x" * 3_000_000
    # A lone surrogate is valid JSON escaped: it must come back as U+FFFD, in strict UTF-8 JSON.
    line = _line(result(1, False, final_answer=EVIL, domain=EVIL, feedback=huge)).replace(
        '"final_answer": "', '"final_answer": "\\ud800', 1)
    run = tmp_path / "evil"
    run.mkdir()
    (run / "results.jsonl").write_text(line, encoding="utf-8")
    with serving(run) as server:
        state = api(server, "/api/state")
        record = api(server, "/api/result?run=0&task=1&trial=0")
        raw = request(server, "/api/result?run=0&task=1&trial=0")[2]
    assert state["results"]["0"][0]["domain"] == EVIL
    assert record["final_answer"] == "\ufffd" + EVIL and record["domain"] == EVIL
    assert record["feedback"].startswith("x" * 1000) and "truncated" in record["feedback"]
    assert b"\\ud800" not in raw


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="occubench")
    add_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def test_bad_input_is_a_config_error_naming_the_argument(results_dir: Path) -> None:
    missing = results_dir / "nope"
    for argv, message in ((["view", str(missing)], f"RUN_DIR {missing}: not found"),
                          (["view", "--output-dir", str(missing)], "--output-dir .*: no such directory")):
        args = _parse(argv)
        with pytest.raises(ConfigError, match=message):
            args.func(args)
    with pytest.raises(SystemExit, match="2"):  # not a port: refused as the flag is read, before any folder
        _parse(["view", "--output-dir", str(missing), "--port", "70000"])
    with pytest.raises(ConfigError, match="--port 70000: not a port"):  # the Python API checks it too
        view_server(output_dir=results_dir, port=70000)
    with pytest.raises(ConfigError, match="not both"):
        view_server([results_dir / "A__sim__E0"], results_dir)
    with pytest.raises(ConfigError, match="loopback"):
        view_server(output_dir=results_dir, host="0.0.0.0")
    with serving(output_dir=results_dir) as server, pytest.raises(ConfigError, match=f"--port {server.server_port}"):
        args = _parse(["view", "--output-dir", str(results_dir), "--port", str(server.server_port)])
        args.func(args)


def _chromium() -> str | None:
    return shutil.which(os.environ.get("CHROMIUM") or "/usr/bin/chromium")


@pytest.mark.skipif(_chromium() is None, reason="needs Chromium (/usr/bin/chromium or $CHROMIUM; Debian: apt-get "
                    "install chromium)")
def test_page_in_headless_chromium() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_view.py")], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_static_report_embeds_each_context_value_once(results_dir: Path) -> None:
    page = html_report(load_run_dirs([results_dir / "A__sim__E0"]))
    data = json.loads(page.split('<script type="application/json" id="occubench-data">')[1].split("</script>")[0])
    assert data["contexts"] == [{IDS[kind]: value for kind, value in CONTEXT.items()}]
    assert data["tasks"][0]["context"] == IDS and data["tasks"][1]["context"] == {}
