"""Check the live viewer (`occubench view`) in a real browser.

Writes a results folder with one run directory (a result with its full context and conversation, a result whose
instruction, tool output and final answer carry script injections, an error), starts `occubench view` on it as a
subprocess, opens the URL it prints in headless Chromium driven over the DevTools protocol (--remote-debugging-pipe,
see check_report_browser.py) and checks that:

1. the page loads and lists every result, with the leaderboard;
2. a result appended to results.jsonl while the page is open appears without a reload;
3. opening a result (by clicking it, or by its #task= link) shows its instruction, system prompt, tool schemas,
   conversation and judge prompt;
4. model output is shown as text and runs no script (window.__pwned stays undefined);
5. the server refuses path traversal (asked directly, without the browser);
6. Ctrl-C (SIGINT) stops the server cleanly.

    python scripts/check_view.py [--chromium PATH] [--keep DIR]

Needs Chromium: /usr/bin/chromium, or the browser named by $CHROMIUM or --chromium (Debian: apt-get install
chromium). Prints one PASS or FAIL line per check; exits 0 when all pass, 1 when one fails, 2 without Chromium.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from check_report_browser import Browser, Checks

EVIL = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">'
TIMEOUT_MS = 30_000
CONTEXT = {
    "0000000000000001": "Refill prescription RX-100 and confirm the refill count.",
    "0000000000000002": "You are a pharmacy assistant. Today is 2025-01-01.",
    "0000000000000003": [{"type": "function", "function": {
        "name": "get_prescription", "description": "Look up a prescription.",
        "parameters": {"type": "object", "properties": {"rx_id": {"type": "string"}}, "required": ["rx_id"]}}}],
    "0000000000000004": [{"role": "system", "content": "You grade pharmacy work against the rubric."},
                         {"role": "user", "content": "Was RX-100 refilled?"}],
    "0000000000000005": f"Refill RX-200. {EVIL}",
}


def _record(task_id: int, outcome: bool | None, *, instruction: str = "0000000000000001", answer: str = "Refilled.",
            observation: str = "refills: 2") -> dict[str, Any]:
    arguments = json.dumps({"rx_id": f"RX-{task_id}00"})
    call = {"id": "call_1", "type": "function", "function": {"name": "get_prescription", "arguments": arguments}}
    return {
        "task_id": task_id, "trial": 0, "task_scenario_name": f"Pharmacy refill {task_id}",
        "category": "Healthcare & Life Sciences", "domain": "Pharmacy", "difficulty_level": 1, "agent_model": "a1",
        "world_model": "sim", "env_mode": "E0", "is_correct": outcome, "status": "error" if outcome is None else "ok",
        "error": {"kind": "infrastructure", "message": "endpoint down"} if outcome is None else None,
        "votes": [] if outcome is None else [{"is_correct": outcome, "feedback": "checked", "attempts": 1}] * 3,
        "final_answer": answer,
        "steps": [{"content": None, "tool_calls": [{"name": "get_prescription", "arguments": arguments,
                                                    "observation": {"result": observation}, "call_index": 0}]}],
        "context": {"instruction": instruction, "system_prompt": "0000000000000002", "tools": "0000000000000003",
                    "judge_prompt": "0000000000000004"},
        "messages": [{"role": "assistant", "content": "", "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": "call_1", "content": observation},
                     {"role": "assistant", "content": answer}],
        "usage": {"agent": {"prompt_tokens": 900, "completion_tokens": 80, "calls": 2, "retries": {"timeout": 1}}},
    }


def write_run(root: Path) -> Path:
    run = root / "a1__sim__E0"
    run.mkdir(parents=True)
    records = [_record(1, True), _record(2, False, instruction="0000000000000005", answer=EVIL, observation=EVIL),
               _record(3, None)]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (run / "context.jsonl").write_text("".join(json.dumps({"id": i, "value": v}) + "\n" for i, v in CONTEXT.items()),
                                       encoding="utf-8")
    return run


def start_viewer(root: Path, log: Path) -> tuple[subprocess.Popen[str], str]:
    """`occubench view --output-dir root`, and the URL it prints."""
    with log.open("w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "occubench", "view", "--output-dir", str(root)],
                                stdout=subprocess.PIPE, stderr=stderr, text=True)
    assert proc.stdout is not None
    ready = select.select([proc.stdout], [], [], TIMEOUT_MS / 1000)[0]
    line = proc.stdout.readline() if ready else ""
    if not re.fullmatch(r"http://127\.0\.0\.1:\d+/\n", line):
        proc.kill()
        proc.wait()
        raise SystemExit(f"FAIL: occubench view printed no URL ({line!r}); stderr: {log.read_text()}")
    return proc, line.strip()


def wait_js(expression: str) -> str:
    """A promise of the expression's value once it is truthy, polled in the page (its last value after 30 s)."""
    return (f"new Promise(resolve => {{ const start = Date.now(); (function check() {{ const value = ({expression}); "
            f"if (value || Date.now() - start > {TIMEOUT_MS}) resolve(value); else setTimeout(check, 100); }})(); }})")


def refused(url: str, path: str) -> int:
    """The status of a GET of ``path`` sent as is, with no client-side clean-up of ``..``."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=TIMEOUT_MS / 1000)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()
    return 0 if b"root:" in body else response.status


def check_page(checks: Checks, browser: Browser, url: str, run: Path) -> None:
    browser.open(url)
    listed = browser.eval(wait_js("document.querySelectorAll('#task-list a').length === 3 && "
                                  "document.querySelectorAll('#live-leaderboard tbody tr').length"))
    checks.check("the page loads and lists the 3 results and the leaderboard", listed == 1,
                 browser.eval("document.getElementById('task-count').textContent"))

    browser.eval("window.__sameDocument = true")  # gone if the page reloads
    with (run / "results.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(_record(4, True)) + "\n")
    appeared = browser.eval(wait_js("document.querySelector('#task-list a[data-key=\"0/4/0\"]') !== null"))
    checks.check("a result appended to results.jsonl appears without a reload",
                 appeared is True and browser.eval("window.__sameDocument") is True
                 and browser.eval("document.querySelectorAll('#task-list a').length") == 4)

    browser.eval("document.querySelector('#task-list a[data-key=\"0/1/0\"]').click()")
    expected = ["Refill prescription RX-100 and confirm the refill count.", "You are a pharmacy assistant.",
                "get_prescription", "Refilled.", "You grade pharmacy work against the rubric.", "Judge prompt"]
    text = browser.eval(wait_js("document.getElementById('task-detail').innerText.includes('You grade pharmacy') "
                                "&& document.getElementById('task-detail').innerText"))
    missing = [s for s in expected if s not in (text or "")]
    checks.check("opening a result shows instruction, system prompt, tool schema, messages and judge prompt",
                 not missing, f"missing {missing}" if missing else "")

    browser.eval(f"location.hash = 'task=' + {json.dumps(quote('0/2/0', safe=''))}")
    text = browser.eval(wait_js("document.getElementById('task-detail').innerText.includes('Refill RX-200') "
                                "&& document.getElementById('task-detail').innerText")) or ""
    exceptions = [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"]
    checks.check("a #task= link opens the result whose model output carries script injections",
                 "Task 2 · Pharmacy refill 2" in text)
    checks.check("the injections are shown as text and run nothing (window.__pwned undefined, no script error)",
                 text.count(EVIL) >= 4 and browser.eval("typeof window.__pwned") == "undefined"
                 and browser.eval("document.querySelectorAll('#task-detail img, #task-detail script').length") == 0
                 and not exceptions, f"{text.count(EVIL)} copies shown, {len(exceptions)} exception(s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                        help="browser binary (default: $CHROMIUM, else /usr/bin/chromium)")
    parser.add_argument("--keep", type=Path, help="write the results folder into DIR and keep it")
    args = parser.parse_args()
    if not os.access(args.chromium, os.X_OK):
        print(f"FAIL: no Chromium at {args.chromium}: install it (Debian: apt-get install chromium) or set $CHROMIUM")
        return 2
    checks = Checks()
    with tempfile.TemporaryDirectory(prefix="occubench-view-") as tmp:
        root = args.keep or Path(tmp) / "results"
        root.mkdir(parents=True, exist_ok=True)
        run = write_run(root)
        proc, url = start_viewer(root, Path(tmp) / "viewer.log")
        try:
            browser = Browser(args.chromium, Path(tmp) / "profile")
            try:
                check_page(checks, browser, url, run)
            except (RuntimeError, TimeoutError, OSError, StopIteration) as exc:
                checks.check("drive the page over the DevTools protocol", False, str(exc))
            finally:
                browser.close()
            statuses = {path: refused(url, path) for path in ("/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
                                                              "/api/result?run=../..&task=1&trial=0",
                                                              "/api/result?run=0&task=../../etc/passwd&trial=0")}
            checks.check("the server refuses path traversal", all(s in (400, 404) for s in statuses.values()),
                         ", ".join(f"{p} -> {s}" for p, s in statuses.items()))
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                code = proc.wait(timeout=TIMEOUT_MS / 1000)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
        checks.check("Ctrl-C stops the server cleanly", code == 0, f"exit {code}")
    print(f"{'FAIL' if checks.failed else 'PASS'}: {checks.failed} check(s) failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
