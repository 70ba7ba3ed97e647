"""Live hints end to end, as a person gives them: a real `occubench run --suite workplace --live-hints` in a
subprocess against the mock server (whose agent calls a cheap tool until an observation carries a hint, then
finishes its day), `occubench view` in another, and the viewer's page in headless Chromium driven by Playwright: the
person opens the URL the viewer printed, picks tier 2, types a hint and their name, and sends it. The hint is in the
agent's next request and in results.jsonl; a request without the token is refused; no page holds the token.

Every wait is on a condition (a line printed, a file written, a request received), under a generous deadline."""

from __future__ import annotations

import datetime
import http.client
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, TypeVar
from urllib.parse import urlsplit

from occubench.core.hints import HINTS_DIR, STEPS_DIR
from occubench.testing import MockLLMServer
from occubench.testing.responders import make_scripted_responder
from tests.conftest import CHROMIUM_ARGS

DEADLINE_S = 120.0
HINT = "Ask Dana in finance for the Q3 numbers before you write the summary."
NAME = "Ana Tester"
T = TypeVar("T")


def agent_requests(requests: list[dict]) -> list[dict]:
    """The agent's requests of the episode: they carry tools and start with its system prompt."""
    return [r for r in requests if r.get("tools") and r["messages"][0]["role"] == "system"]


def wait_for(check: Callable[[], T | None], what: str) -> T:
    deadline = time.monotonic() + DEADLINE_S
    while not (value := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return value


class Output:
    """The lines a process prints, collected by a thread as they come."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: list[str] = []
        self._changed = threading.Condition()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()

    def line(self, starting: str) -> str:
        with self._changed:
            found = self._changed.wait_for(lambda: next((x for x in self.lines if x.startswith(starting)), None),
                                           timeout=DEADLINE_S)
        assert found, f"no line starting {starting!r} in {self.lines}"
        return found


def post_hint(url: str, body: dict[str, Any], headers: dict[str, str]) -> int:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        connection.request("POST", "/api/hint", body=json.dumps(body),
                           headers={"Content-Type": "application/json", **headers})
        return connection.getresponse().status
    finally:
        connection.close()


def get(url: str) -> bytes:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        connection.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""))
        return connection.getresponse().read()
    finally:
        connection.close()


def test_a_hint_typed_in_the_viewer_reaches_the_agent_and_the_results(tmp_path: Path, browser: str) -> None:
    from playwright.sync_api import sync_playwright

    out, run_dir = tmp_path / "results", tmp_path / "results" / "r"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OCCUBENCH_DATA"))}
    processes: list[subprocess.Popen[str]] = []
    with MockLLMServer(make_scripted_responder(until_hint=True), latency_s=0.05) as server:
        try:
            run = subprocess.Popen(
                [sys.executable, "-m", "occubench", "run", "--suite", "workplace", "--days", "1", "--seed", "4",
                 "--agent-model", "mock-agent", "--base-url", server.base_url, "--api-key", "k", "--live-hints",
                 "--max-steps", "5000", "--history-window", "6", "--output-dir", str(out), "--run-name", "r"],
                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            processes.append(run)
            run_errors = Output(run.stderr)  # type: ignore[arg-type]
            steps = wait_for(lambda: next((run_dir / "live" / STEPS_DIR).glob("*.jsonl"), None)
                             if (run_dir / "live" / STEPS_DIR).is_dir() else None, "the episode to start")
            view = subprocess.Popen([sys.executable, "-m", "occubench", "view", str(run_dir), "--port", "0"],
                                    env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)
            processes.append(view)
            printed = Output(view.stdout)  # type: ignore[arg-type]
            live_url = printed.line("live hints for r: ").split(": ", 1)[1]
            token = (run_dir / "live" / "token").read_text().strip()
            assert live_url.endswith(f"/?token={token}")
            base = live_url.split("?", 1)[0]

            # Served pages never hold the token, even the one asked for with it.
            assert all(token.encode() not in get(url) for url in (base, live_url, base + "viewer.js",
                                                                   base + "api/state"))
            # Without the token (or with a wrong one), nothing is written.
            hints = run_dir / "live" / HINTS_DIR / steps.name
            body = {"run": 0, "episode": steps.stem, "tier": 2, "text": "sneaky", "name": "Mallory"}
            assert post_hint(base, body, {}) == 403
            assert post_hint(base, body, {"X-Occubench-Token": "x" * len(token)}) == 403
            assert not hints.exists()

            with sync_playwright() as playwright:
                context = playwright.chromium.launch_persistent_context(
                    str(tmp_path / "profile"), executable_path=browser, args=CHROMIUM_ARGS, headless=True)
                try:
                    page = context.new_page()
                    page.goto(live_url)
                    form = page.locator(f".live-episode[data-key='{steps.stem}'] form.hint-form")
                    form.wait_for(timeout=DEADLINE_S * 1000)
                    assert token not in page.url and token not in page.content()
                    form.locator("select[name=tier]").select_option("2")
                    form.locator("textarea[name=text]").fill(HINT)
                    form.locator("input[name=name]").fill(NAME)
                    before = len(server.requests)
                    with page.expect_response(lambda r: r.url.endswith("/api/hint")) as answer:
                        form.locator("button[type=submit]").click()
                    assert answer.value.status == 200, answer.value.text()
                    sent_at = datetime.datetime.now(datetime.timezone.utc)
                finally:
                    context.close()

            # The agent's next request carries it (none before it was sent did).
            wait_for(lambda: any(HINT in json.dumps(r) for r in agent_requests(server.requests[before:])) or None,
                     "an agent request with the hint")
            assert not any(HINT in json.dumps(r) for r in server.requests[:before])
            assert run.wait(timeout=DEADLINE_S) == 0, "\n".join(run_errors.lines[-30:])
        finally:
            for process in processes:
                if process.poll() is None:
                    process.terminate()
                    process.wait(timeout=30)

    [record] = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    [delivered] = record["live_hints"]
    assert (delivered["who"], delivered["tier"], delivered["text"]) == (NAME, 2, HINT)
    at = datetime.datetime.fromisoformat(delivered["at"])
    assert abs((at - sent_at).total_seconds()) < 600 and delivered["step"] >= 1
    assert HINT in record["env_info"]["day_notes"]  # the agent finished its day as the hint said
    observation = record["steps"][delivered["step"] - 1]["tool_calls"][0]["observation"]
    assert observation["hint"] == [{"tier": 2, "text": HINT}]
    assert [json.loads(line)["who"] for line in hints.read_text().splitlines()] == [NAME]
