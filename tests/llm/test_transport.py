"""A server that misbehaves on the wire: whatever it does, the lean transport raises only its contract's errors
(a failed connection, the HTTP library's error kept as the cause), the client retries it as transient, and a run
records an infrastructure error for the task, never an agent's failure or an unhandled exception."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

import aiohttp
import pytest

from occubench.cli import main as cli
from occubench.errors import LLMRequestError, LLMUnavailableError
from occubench.llm import LLMClient, RetryPolicy
from occubench.llm.ledger import open_ledger
from occubench.llm.transport import ConnectionFailed, LeanTransport
from occubench.store import RESULTS_FILE, read_results
from tests.llm.rawserver import RawServer, http_answer

HEAD = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
#: What a broken server, proxy or network makes of an answer.
MISBEHAVIOURS: dict[str, bytes | None] = {
    "body cut short": f'{HEAD}Content-Length: 100\r\n\r\n{{"id":'.encode(),
    "garbled chunked encoding": f"{HEAD}Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n".encode(),
    "closed without an answer": b"",
    "connection reset": None,
    "garbled status line": b"HELLO THERE\r\n\r\n",
    "garbled header": f"{HEAD}A header line without a colon\r\nContent-Length: 2\r\n\r\n{{}}".encode(),
    "content length not a number": f"{HEAD}Content-Length: many\r\n\r\n{{}}".encode(),
    "body not the gzip it claims": f"{HEAD}Content-Encoding: gzip\r\nContent-Length: 9\r\n\r\nnot gzip!".encode(),
    "redirect loop": http_answer(307, headers={"Location": "/v1/chat/completions"}),
    "redirect to no URL": http_answer(307, headers={"Location": "http://[::1"}),
    "redirect to another scheme": http_answer(307, headers={"Location": "ftp://127.0.0.1/file"}),
}
FAST = RetryPolicy(budget_s=0.5, base_delay_s=0.01, max_delay_s=0.05)
HELLO = [{"role": "user", "content": "hello"}]


async def _post_once(base_url: str) -> bytes:
    transport = LeanTransport(base_url, "k", 4)
    try:
        return await transport.post(b"{}", 10)
    finally:
        await transport.close()


@pytest.mark.parametrize("answer", MISBEHAVIOURS.values(), ids=MISBEHAVIOURS.keys())
@pytest.mark.slow
def test_a_misbehaving_server_is_a_failed_connection_retried_until_the_budget_ends(answer: bytes | None) -> None:
    with RawServer(lambda request: answer) as server:
        with pytest.raises(ConnectionFailed) as raised:
            asyncio.run(_post_once(server.url + "/v1"))
        assert isinstance(raised.value.__cause__, aiohttp.ClientError)
        sent = len(server.requests)
        with open_ledger() as ledger, pytest.raises(LLMUnavailableError, match="retry budget: cannot connect"):
            LLMClient("k", server.url + "/v1", retry=FAST).chat("m", HELLO)
    assert len(server.requests) > sent + 1
    assert ledger.by_role["model"].retries["connection"] >= 1


def test_an_invalid_url_is_a_failed_connection() -> None:
    with pytest.raises(ConnectionFailed) as raised:
        asyncio.run(_post_once("http://127.0.0.1:99999/v1"))
    assert isinstance(raised.value.__cause__, aiohttp.InvalidURL)


def test_an_error_answer_in_a_charset_that_is_no_text_encoding_is_still_read() -> None:
    body = json.dumps({"error": {"message": "unknown parameter", "param": "top_k"}}).encode()
    with RawServer(lambda request: http_answer(400, body, {"Content-Type": "application/json; charset=base64"})) \
            as server, pytest.raises(LLMRequestError, match="HTTP 400: Error code: 400 - unknown parameter") as raised:
        LLMClient("k", server.url + "/v1", retry=FAST).chat("m", HELLO)
    assert raised.value.param == "top_k"


def test_a_run_against_a_misbehaving_server_records_infrastructure_errors(small_data: Path, tmp_path: Path) -> None:
    answers = itertools.cycle(MISBEHAVIOURS.values())
    with RawServer(lambda request: next(answers)) as server:
        code = cli(["run", "--agent-model", "a", "--world-model", "w", "--base-url", server.url + "/v1",
                    "--data-dir", str(small_data), "--output-dir", str(tmp_path), "--run-name", "r",
                    "--skip-preflight", "--retry-budget", "1", "--max-workers", "3"])
    assert code == 1
    results = read_results(tmp_path / "r" / RESULTS_FILE)
    assert sorted(r["task_id"] for r in results) == [1, 2, 3]
    assert {(r["status"], r["error"]["kind"]) for r in results} == {("error", "infrastructure")}
    assert all("cannot connect" in r["error"]["message"] for r in results)
    assert all(r["usage"]["agent"]["retries"]["connection"] >= 1 for r in results)
