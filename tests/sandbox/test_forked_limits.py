"""What a worker forked from a zygote uses is its own: a hostile world that fills its /tmp, starts threads without
end, holds memory no mapping shows, or reads the worlds' folders, gets only its own share, while a sibling world's
worker goes on answering and writing; and what it left in its /tmp is gone once it ends. Each hostile world attacks
at its application's import; the harness measures the effect from outside (its /proc, its control group)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from occubench.sandbox import cgroups
from occubench.sandbox.forking import ForkedProcess, Forking
from occubench.sandbox.pool import DEFAULT_LIMITS, Worker
from occubench.sandbox.provider import Limits
from tests.sandbox.test_forking import NOTES, SECONDS, SERVICE, _loaded, _notes, notes_world

#: Held by the attacks' globals, so what they got stays theirs while the test measures it.
FILLS = '''
import os
HELD = []
def _fill(folder):
    number = 0
    while True:
        path = os.path.join(folder, f"fill-{number}")
        try:
            file = open(path, "wb", buffering=0)
        except OSError:
            return
        with file:
            try:
                while True:
                    file.write(b"x" * (1 << 20))
            except OSError:
                pass
        if os.path.getsize(path) == 0:
            return
        number += 1
for folder in ("/tmp", os.getcwd(), os.environ.get("TMPDIR", "/tmp")):
    _fill(folder)
'''
THREADS = '''
import threading
HELD = threading.Event()
STARTED = 0
for _ in range(6000):
    try:
        threading.Thread(target=HELD.wait, daemon=True).start()
    except RuntimeError:
        break
    STARTED += 1
'''
MEMORY = '''
import ctypes, mmap, os
HELD = []
libc = ctypes.CDLL(None, use_errno=True)
try:
    fd = os.memfd_create("hoard")
    for _ in range(512):
        os.write(fd, b"x" * (1 << 20))
    HELD.append(fd)
except OSError:
    pass
IPC_CREAT, IPC_PRIVATE = 0o1000, 0
segment = libc.shmget(IPC_PRIVATE, 512 << 20, IPC_CREAT | 0o600)
if segment >= 0:
    address = libc.shmat(segment, None, 0)
    ctypes.memset(address, 1, 512 << 20)
    libc.shmdt(address)
queue = libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600)
if queue >= 0:
    message = ctypes.create_string_buffer(8 + 8192)
    message[0] = 1
    while libc.msgsnd(queue, message, 8192, 0o4000) == 0:
        pass
'''
#: A world's tool that shows what the IPC namespace its zygote's children share holds.
PROBE = NOTES + '''

@app.get("/ipc", operation_id="ipc")
def ipc():
    return {name: open(f"/proc/sysvipc/{name}").read().splitlines()[1:] for name in ("shm", "msg")}
'''
SECRET = "other-scenario-check-7f3e"
LEAK = NOTES + '''

@app.get("/leak", operation_id="leak")
def leak():
    """Every file it can list under the worlds' root or /tmp, and each scenario's checks by the path it would have."""
    paths = [f"/worlds/0/worlds/{name}/verifiers.json" for name in ("victim", "hostile")]
    for top in ("/worlds", "/worlds/0", "/worlds/0/worlds", "/tmp"):
        paths += [os.path.join(folder, name) for folder, _, names in os.walk(top) for name in names][:1000]
    found = {}
    for path in paths:
        try:
            with open(path, "rb") as file:
                found[path] = file.read(1 << 16).decode(errors="replace")
        except OSError:
            pass
    return {"found": found}
'''


def _started(zygote: Forking, folder: Path) -> Worker:
    """A worker that loaded the world of ``folder`` (the attack ran at its import), with no instance open."""
    worker = Worker(zygote, SERVICE, [folder], Limits(cpu_seconds=30, memory_bytes=1 << 30))
    worker.request("load", {"folder": worker.path(0)}, SECONDS)
    return worker


def _process(worker: Worker) -> ForkedProcess:
    process = worker._process
    assert isinstance(process, ForkedProcess) and process.host_pid is not None
    return process


def _status(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        return int(next(line for line in status if line.startswith(f"{field}:")).split()[1])


def test_a_world_that_fills_its_tmp_fills_only_its_own(zygote: Forking, tmp_path: Path) -> None:
    sibling, instance = _loaded(zygote, notes_world(tmp_path, "notes", NOTES))
    try:
        hostile = _started(zygote, notes_world(tmp_path, "hostile", FILLS + NOTES))
        process = _process(hostile)
        home = Path(f"/proc/{process.host_pid}/root{process.home}")
        room = os.statvfs(home)
        used = (room.f_blocks - room.f_bfree) * room.f_frsize
        assert DEFAULT_LIMITS.tmp_bytes // 2 < used <= DEFAULT_LIMITS.tmp_bytes  # it filled its own, and only that
        # The sibling's next write, and a new world's database, still have room.
        sibling.request("call", {"instance": instance, "tool": "add_note", "arguments": {"body": "second"}}, SECONDS)
        assert _notes(sibling, instance) == ["first", "second"]
        fresh, fresh_instance = _loaded(zygote, tmp_path / "worlds" / "notes")
        fresh.kill()
        hostile.kill()
        # Once it has ended, its home is gone (seen through the sibling's view of the same sandbox).
        assert not Path(f"/proc/{_process(sibling).host_pid}/root{process.home}").exists()
        assert _process(sibling).home != process.home
    finally:
        sibling.kill()


def test_a_world_s_threads_stop_at_its_own_cap(zygote: Forking, tmp_path: Path) -> None:
    if cgroups.pids_root() is None:
        pytest.skip("no pids control group this process can make: as root, run with /sys/fs/cgroup writable")
    sibling, instance = _loaded(zygote, notes_world(tmp_path, "notes", NOTES))
    try:
        hostile = _started(zygote, notes_world(tmp_path, "hostile", THREADS + NOTES))
        process = _process(hostile)
        assert process.group is not None
        assert 1 < _status(process.host_pid, "Threads") <= DEFAULT_LIMITS.processes
        assert int((process.group / "pids.current").read_text()) <= DEFAULT_LIMITS.processes
        # Its siblings still start threads: FastAPI runs each call of theirs on one.
        sibling.request("call", {"instance": instance, "tool": "add_note", "arguments": {"body": "second"}}, SECONDS)
        assert _notes(sibling, instance) == ["first", "second"]
        group = process.group
        hostile.kill()
        assert not group.exists()  # its group is removed with it
    finally:
        sibling.kill()


def test_a_world_holds_no_memory_its_limit_does_not_count(zygote: Forking, tmp_path: Path) -> None:
    probe, instance = _loaded(zygote, notes_world(tmp_path, "probe", PROBE))
    try:
        hostile = _started(zygote, notes_world(tmp_path, "hostile", MEMORY + NOTES))
        pid = _process(hostile).host_pid
        held = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        assert not [link for link in held if link.startswith("/memfd:")]
        # The zygote's children share one IPC namespace: a sibling sees any segment or queue the hostile one made.
        found = probe.request("call", {"instance": instance, "tool": "ipc", "arguments": {}}, SECONDS)
        assert found == {"shm": [], "msg": []}
        hostile.kill()
    finally:
        probe.kill()


def test_a_world_reads_its_own_scenario_only(zygote: Forking, tmp_path: Path) -> None:
    victim = notes_world(tmp_path, "victim", NOTES)
    (victim / "verifiers.json").write_text(json.dumps({"pure": {"0": f"# {SECRET}"}}))
    victim_worker, _ = _loaded(zygote, victim)
    try:
        hostile_folder = notes_world(tmp_path, "hostile", LEAK)
        (hostile_folder / "verifiers.json").write_text(json.dumps({"pure": {"0": "# its own check"}}))
        hostile, instance = _loaded(zygote, hostile_folder)
        reply = json.dumps(hostile.request("call", {"instance": instance, "tool": "leak", "arguments": {}}, SECONDS))
        hostile.kill()
        assert "its own check" in reply  # what the tool can send the agent: its own folder, nothing of another's
        assert SECRET not in reply
    finally:
        victim_worker.kill()


def test_a_worker_forked_with_the_default_limits_gets_them(zygote: Forking, tmp_path: Path) -> None:
    worker = Worker(zygote, SERVICE, [notes_world(tmp_path, "notes", NOTES)], Limits())
    try:
        process = _process(worker)
        home = os.statvfs(f"/proc/{process.host_pid}/root{process.home}")
        assert home.f_blocks * home.f_frsize == DEFAULT_LIMITS.tmp_bytes  # its /tmp is a tmpfs of the default size
        if cgroups.pids_root() is not None:
            assert process.group is not None and int((process.group / "pids.max").read_text()) == Limits().processes
    finally:
        worker.kill()
