"""An AWM application whose database write fills its disk: the call is the world's failure (the worker reports it
exhausted and is replaced), never the HTTP 500 observation an agent was judged on; the endpoint's other failures
stay a tool_failed observation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from occubench.sandbox import Provider
from occubench.sandbox.pool import Worker, WorkerFailed
from occubench.sandbox.provider import Limits
from tests.conftest import extra_reason

SERVICE = "occubench.awm.service"

#: A log table that grows by a megabyte a row until its database's disk (the sandbox's /tmp) or file limit stops it.
APPLICATION = '''
import os
from fastapi import FastAPI
from sqlalchemy import create_engine, text

engine = create_engine(os.environ["DATABASE_PATH"])
app = FastAPI()

@app.post("/log", operation_id="write_log")
def write_log():
    for _ in range(1000):
        with engine.begin() as connection:
            connection.execute(text("INSERT INTO log (entry) VALUES (zeroblob(1048576))"))
    return {"written": True}

@app.get("/broken", operation_id="broken")
def broken():
    return {"value": 1 / 0}
'''


def test_a_database_write_that_fills_the_disk_is_the_world_s_failure(tmp_path: Path, sandbox: Provider) -> None:
    pytest.importorskip("sqlalchemy", reason=extra_reason("awm"))
    folder = tmp_path / "worlds" / "logger"
    folder.mkdir(parents=True)
    (folder / "app.py").write_text(APPLICATION)
    schema = {"tables": [{"ddl": "CREATE TABLE log (id INTEGER PRIMARY KEY, entry BLOB)"}]}
    (folder / "schema.json").write_text(json.dumps(schema))
    (folder / "verifiers.json").write_text("{}")
    worker = Worker(sandbox, SERVICE, [tmp_path / "worlds"], Limits())
    try:
        worker.request("load", {"folder": f"{worker.path(0)}/logger"}, 60)
        instance = worker.request("open", {"folder": f"{worker.path(0)}/logger"}, 60)
        call = {"folder": f"{worker.path(0)}/logger", "instance": instance, "arguments": {}}
        # A bug of the application's is still a failed call the agent sees.
        assert worker.request("call", {**call, "tool": "broken"}, 60)["error"] == "tool_failed"
        with pytest.raises(WorkerFailed) as failed:
            worker.request("call", {**call, "tool": "write_log"}, 60)
        assert failed.value.kind == "exhausted", failed.value
        assert "write_log: the application ran out of" in str(failed.value)
        assert worker.broken  # replaced: its full disk serves no other episode
    finally:
        worker.kill()
