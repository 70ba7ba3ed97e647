"""Workers forked from one zygote are kept apart: a hostile world's worker cannot kill, change or read a sibling
world's worker, nor the zygote. Each attack runs at the hostile application's import, after a sibling world has an
instance with a row of its own; then the sibling must still answer with exactly its rows, and the zygote must still
fork a worker that loads a world."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from occubench.sandbox import Provider
from occubench.sandbox.forking import Forking
from occubench.sandbox.pool import Worker, WorkerFailed
from occubench.sandbox.provider import Limits

SERVICE, SECONDS = "occubench.awm.service", 60.0
SECRET = "sibling-secret-5c1d"
NOTES = '''
import os
from fastapi import FastAPI
from sqlalchemy import create_engine, text

engine = create_engine(os.environ["DATABASE_PATH"], connect_args={"check_same_thread": False})
app = FastAPI()


@app.get("/notes", operation_id="list_notes")
def list_notes():
    with engine.connect() as connection:
        return {"notes": [row[0] for row in connection.execute(text("SELECT body FROM notes ORDER BY id"))]}


@app.post("/notes", operation_id="add_note")
def add_note(body: str):
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO notes (body) VALUES (:body)"), {"body": body})
    return {"added": body}
'''
#: Every path a sibling's files could be reached by: the shared /tmp, and each process's links in /proc.
_PATHS = '''
import glob, os
paths = glob.glob("/tmp/**", recursive=True)
for pid in filter(str.isdigit, os.listdir("/proc")):
    if int(pid) != os.getpid():
        paths += glob.glob(f"/proc/{pid}/cwd/**", recursive=True) + glob.glob(f"/proc/{pid}/fd/*")
        paths += [f"/proc/{pid}/environ", f"/proc/{pid}/cmdline"]
'''
ATTACKS = {
    "signals": '''
import os, signal
for pid in filter(str.isdigit, os.listdir("/proc")):
    for number in (signal.SIGKILL, signal.SIGSTOP, signal.SIGTERM):
        try:
            os.kill(int(pid), number) if int(pid) != os.getpid() else None
        except OSError:
            pass
''',
    "tampers": _PATHS + '''
for path in paths:
    for change in (lambda p: open(p, "r+b").write(b"\\0" * 4096), os.unlink, os.rmdir):
        try:
            change(path)
        except (OSError, ValueError):
            pass
''',
    "reads": _PATHS + f'''
found = []
for path in paths:
    try:
        with open(path, "rb") as file:
            if os.path.isfile(path) and b"{SECRET}" in file.read(64 << 20):
                found.append(path)
    except (OSError, ValueError):
        pass
raise RuntimeError(f"read the secret from {{found}}")
''',
}


def notes_world(root: Path, name: str, code: str) -> Path:
    folder = root / "worlds" / name
    folder.mkdir(parents=True)
    (folder / "app.py").write_text(code)
    (folder / "schema.json").write_text(json.dumps({"tables": [
        {"ddl": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)"}]}))
    (folder / "seed.json").write_text(json.dumps({"tables": [
        {"insert_statements": ["INSERT INTO notes (body) VALUES ('first')"]}]}))
    (folder / "verifiers.json").write_text("{}")
    return folder


def _notes(worker: Worker, instance: int) -> list[str]:
    return worker.request("call", {"instance": instance, "tool": "list_notes", "arguments": {}}, SECONDS)["notes"]


def _loaded(provider: Provider, folder: Path) -> tuple[Worker, int]:
    worker = Worker(provider, SERVICE, [folder], Limits(cpu_seconds=30, memory_bytes=1 << 30))
    worker.request("load", {"folder": worker.path(0)}, SECONDS)
    return worker, worker.request("open", {"folder": worker.path(0)}, SECONDS)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_forked_worker_cannot_touch_its_siblings_or_the_zygote(attack: str, zygote: Forking,
                                                                 tmp_path: Path) -> None:
    sibling, instance = _loaded(zygote, notes_world(tmp_path, "notes", NOTES))
    try:
        sibling.request("call", {"instance": instance, "tool": "add_note", "arguments": {"body": SECRET}}, SECONDS)
        hostile = Worker(zygote, SERVICE, [notes_world(tmp_path, "hostile", ATTACKS[attack] + NOTES)], Limits())
        try:
            hostile.request("load", {"folder": hostile.path(0)}, SECONDS)
            said = ""
        except WorkerFailed as failed:
            said = str(failed)
        finally:
            hostile.kill()
        if attack == "reads":  # it ran to its end and found nothing of the sibling's database or memory
            assert "read the secret from []" in said
        assert _notes(sibling, instance) == ["first", SECRET]  # the sibling runs, its database whole
        fresh, fresh_instance = _loaded(zygote, tmp_path / "worlds" / "notes")  # the zygote still forks
        assert _notes(fresh, fresh_instance) == ["first"]
        fresh.kill()
    finally:
        sibling.kill()


def test_a_forked_worker_sees_only_folders_under_the_zygote_s_root(zygote: Forking, tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    with pytest.raises(WorkerFailed, match="only folders under"):
        Worker(zygote, SERVICE, [outside], Limits())
