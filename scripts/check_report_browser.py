"""Check the HTML report in a real browser.

Builds a report from small generated run directories, opens it in headless Chromium and verifies that it loads,
shows its tables and charts, lists every result, filters them, opens a task's trajectory when the task is clicked
(driven over the DevTools protocol on --remote-debugging-pipe) and when the URL names it (report.html#task=...,
checked with --dump-dom), and that model output planted in a result runs no script.

    python scripts/check_report_browser.py [--chromium /usr/bin/chromium] [--keep DIR] [--screenshot FILE]

Prints one PASS or FAIL line per check; exits 1 if any check fails, 2 if Chromium cannot be started.
Install Chromium with `apt-get install -y chromium`.
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from occubench.cli import main as occubench_main

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
TIMEOUT_S = 60.0
#: Would set window.__pwned if the report ever parsed model output as markup.
EVIL_ANSWER = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\">"
CATEGORIES = ["Healthcare & Life Sciences", "Transportation & Logistics", "Technology & IT"]


def _records(agent: str, mode: str, outcomes: list[bool | None]) -> list[dict[str, Any]]:
    records = []
    for task_id, ok in enumerate(outcomes, start=1):
        calls = [{"name": "lookup_order", "arguments": json.dumps({"order_id": f"O-{task_id}"}),
                  "observation": {"status": "shipped"}, "call_index": 0},
                 {"name": "lookup_order", "arguments": json.dumps({"order_id": f"O-{task_id}"}),
                  "observation": {"error": "HTTP 500 Internal Server Error"}, "call_index": 1}]
        faulted = mode != "E0"
        records.append({
            "task_id": task_id, "trial": 0, "task_scenario_name": f"Order audit {task_id}",
            "category": CATEGORIES[task_id % len(CATEGORIES)], "domain": "Retail", "difficulty_level": task_id % 3 + 1,
            "agent_model": agent, "world_model": "sim", "env_mode": mode, "is_correct": ok,
            "status": "error" if ok is None else "ok",
            "error": {"kind": "infrastructure", "message": "endpoint down"} if ok is None else None,
            "votes": [] if ok is None else [{"is_correct": ok, "feedback": "checked the order", "attempts": 1}] * 3,
            "usage": {"agent": {"prompt_tokens": 900, "completion_tokens": 80, "calls": 3}},
            "final_answer": EVIL_ANSWER if task_id == 1 else f"Order O-{task_id} verified.",
            "steps": [{"content": "Checking the order.", "tool_calls": calls if faulted else calls[:1]}],
            "fault_events": [{"call_index": 1, "tool": "lookup_order", "kind": "explicit", "fault": "http_500",
                              "detail": "HTTP 500 Internal Server Error"}] if faulted else [],
        })
    return records


def build_report(root: Path) -> tuple[Path, list[dict[str, Any]]]:
    """Three run directories and the report over them; returns the report and the records in report order."""
    runs = {"a1__sim__E0": _records("a1", "E0", [True, True, False, True, None]),
            "a2__sim__E0": _records("a2", "E0", [True, False, False, True, False]),
            "a1__sim__E1": _records("a1", "E1", [True, False, None, True, False])}
    for name, records in runs.items():
        (root / name).mkdir(parents=True)
        (root / name / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    report = root / "report.html"
    with open(os.devnull, "w") as quiet:
        stdout, sys.stdout = sys.stdout, quiet
        try:
            code = occubench_main(["report", *(str(root / name) for name in runs), "--html", str(report)])
        finally:
            sys.stdout = stdout
    if code != 0:
        raise SystemExit(f"occubench report exited {code}")
    return report, [r for records in runs.values() for r in records]


class Browser:
    """Headless Chromium driven over the DevTools protocol on --remote-debugging-pipe (fd 3 in, fd 4 out)."""

    def __init__(self, chromium: str, profile: Path) -> None:
        to_browser_r, self._out = os.pipe()
        self._in, from_browser_w = os.pipe()
        # Move the browser's ends above 3 and 4 so that putting them on 3 and 4 in the child cannot clobber them.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100) for fd in (to_browser_r, from_browser_w)]
        os.close(to_browser_r)
        os.close(from_browser_w)

        def child_fds() -> None:
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self.proc = subprocess.Popen([chromium, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-pipe",
                                      "about:blank"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, preexec_fn=child_fds, close_fds=False)
        for fd in high:
            os.close(fd)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def send(self, method: str, params: dict[str, Any] | None = None, *, browser: bool = False) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if self.session and not browser:
            message["sessionId"] = self.session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            for event in self.events:
                if event.get("method") == method:
                    self.events.remove(event)
                    return event
            self.events.append(self._read(deadline))

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self._in, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def open(self, url: str) -> None:
        targets = self.send("Target.getTargets", browser=True)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True},
                                 browser=True)["sessionId"]
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def eval(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self) -> None:
        try:
            self.send("Browser.close", browser=True)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._out)
        os.close(self._in)


class Checks:
    def __init__(self) -> None:
        self.failed = 0

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        self.failed += not ok
        print(f"{'PASS' if ok else 'FAIL'}: {name}" + (f" ({detail})" if detail else ""), flush=True)
        return ok


_SETTLE = "new Promise(resolve => setTimeout(resolve, 200))"


def check_with_devtools(checks: Checks, chromium: str, profile: Path, url: str, records: list[dict[str, Any]],
                        screenshot: Path | None) -> None:
    browser = Browser(chromium, profile)
    try:
        browser.open(url)
        checks.check("page loads", browser.eval("document.title") == "OccuBench report")
        captions = browser.eval("Array.from(document.querySelectorAll('caption')).map(c => c.textContent)")
        leaderboard_rows = browser.eval("document.querySelectorAll('#leaderboard tbody tr').length")
        checks.check("tables are shown", "Leaderboard" in captions and leaderboard_rows == 3
                     and any(c.startswith("Completion by fault level") for c in captions)
                     and "a1__sim__E0: by category" in captions,
                     f"{len(captions)} tables, {leaderboard_rows} leaderboard rows")
        images = browser.eval("Array.from(document.images).map(i => [i.complete, i.naturalWidth, "
                              "i.src.slice(0, 22)])")
        checks.check("charts are decoded from data URIs", len(images) == 3 and all(
            done and width > 0 and src == "data:image/png;base64," for done, width, src in images), str(images))
        listed = browser.eval("document.querySelectorAll('#task-list a').length")
        checks.check("every result is listed", listed == len(records), f"{listed} of {len(records)}")
        errors = sum(r["status"] == "error" for r in records)
        browser.eval("(() => { const s = document.getElementById('f-outcome'); s.value = 'error'; "
                     "s.dispatchEvent(new Event('change')); })()")
        shown = browser.eval("document.querySelectorAll('#task-list a').length")
        checks.check("the error filter shows only errors", shown == errors, f"{shown} shown, {errors} errors")
        browser.eval("(() => { const s = document.getElementById('f-outcome'); s.value = ''; "
                     "s.dispatchEvent(new Event('change')); })()")

        key = "2/1/0"  # a1__sim__E1, task 1: two tool calls, the second faulted, and the planted answer
        browser.eval(f"document.querySelector('#task-list a[data-key=\"{key}\"]').click()")
        browser.eval(_SETTLE)
        detail = browser.eval("document.getElementById('task-detail').innerText")
        checks.check("clicking a task opens its trajectory",
                     browser.eval("location.hash") == "#task=" + quote(key, safe="")
                     and "Task 1 · Order audit 1" in detail and detail.count("lookup_order") == 2
                     and "HTTP 500 Internal Server Error" in detail and "checked the order" in detail,
                     detail[:120].replace("\n", " | "))
        checks.check("the faulted call is marked", browser.eval(
            "Array.from(document.querySelectorAll('#task-detail .call.faulted')).map(c => c.innerText)"
            ".join(' ').includes('fault: explicit / http_500')"))
        checks.check("model output is shown as text", EVIL_ANSWER in detail)
        exceptions = [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"]
        checks.check("no injected script ran and no script error",
                     browser.eval("typeof window.__pwned") == "undefined" and not exceptions,
                     f"{len(exceptions)} exception(s)")
        if screenshot:
            browser.eval("document.getElementById('trajectories').scrollIntoView()")
            png = base64.b64decode(browser.send("Page.captureScreenshot", {"format": "png"})["data"])
            screenshot.write_bytes(png)
            checks.check(f"screenshot written to {screenshot}", png.startswith(b"\x89PNG"))
    finally:
        browser.close()


def check_with_dump_dom(checks: Checks, chromium: str, profile: Path, url: str) -> None:
    key = "0/3/0"  # a1__sim__E0, task 3
    done = subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                           f"{url}#task={quote(key, safe='')}"],
                          capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    detail = done.stdout.split('<div id="task-detail">', 1)[-1]
    checks.check("a #task= link opens that trajectory on load", done.returncode == 0
                 and "<h3>Task 3 · Order audit 3" in detail and "<strong>lookup_order</strong>" in detail
                 and "Order O-3 verified." in detail, f"exit {done.returncode}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chromium", default="/usr/bin/chromium", help="browser binary (default: /usr/bin/chromium)")
    parser.add_argument("--keep", type=Path, help="build the runs and the report in DIR and keep them")
    parser.add_argument("--screenshot", type=Path, help="save a PNG of the trajectory viewer")
    args = parser.parse_args()
    if not os.access(args.chromium, os.X_OK):
        print(f"FAIL: no Chromium at {args.chromium} (apt-get install -y chromium)")
        return 2
    checks = Checks()
    with tempfile.TemporaryDirectory(prefix="occubench-browser-") as tmp:
        root = args.keep or Path(tmp) / "runs"
        root.mkdir(parents=True, exist_ok=True)
        report, records = build_report(root)
        checks.check("report built", report.stat().st_size > 0, f"{report}, {report.stat().st_size:,} bytes")
        url = report.resolve().as_uri()
        try:
            check_with_devtools(checks, args.chromium, Path(tmp) / "profile-cdp", url, records, args.screenshot)
        except (RuntimeError, TimeoutError, OSError, StopIteration) as exc:
            checks.check("drive the page over the DevTools protocol", False, str(exc))
        check_with_dump_dom(checks, args.chromium, Path(tmp) / "profile-dump", url)
    print(f"{'FAIL' if checks.failed else 'PASS'}: {checks.failed} check(s) failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
