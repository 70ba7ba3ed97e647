"""Workers start side by side: many episodes starting at once on a cold pool each get a working worker of their
own, whether forked from the zygote or in a sandbox each; a start that hangs or crashes, or a world that takes every
thread it can, holds up no other start and stops no running worker; and a bubblewrap worker outlives the thread that
asked for it (its sandbox is spawned from the process's starter thread)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from occubench.sandbox import Provider
from occubench.sandbox.forking import CHILDREN, Forking
from occubench.sandbox.pool import Pool, Worker, WorkerFailed
from occubench.sandbox.provider import Limits
from tests.conftest import extra_reason
from tests.sandbox.test_forking import NOTES as FORKING_NOTES
from tests.sandbox.test_forking import notes_world

SERVICE, SECONDS = "occubench.awm.service", 60.0
#: Generous: a loaded machine shares its cores with other sessions' tests. Proves "not forever", not speed.
DEADLINE = 600.0
LIMITS = Limits(cpu_seconds=60, memory_bytes=1 << 30)
#: test_forking's notes application, and a token drawn as a worker loads it: one per worker process.
NOTES = FORKING_NOTES + '''
TOKEN = os.urandom(16).hex()


@app.get("/me", operation_id="me")
def me():
    return {"token": TOKEN, "session": os.getsid(0) == os.getpid()}
'''
#: The word that ends a hanging load: a file the test makes in the world's folder.
_GO = "import os, sys, time\ngo = os.path.join(os.path.dirname(sys._getframe().f_code.co_filename), 'go')\n"
#: Loads that go on until the test's word: one spins, one sleeps.
HANGS = {"spins": _GO + "while not os.path.exists(go):\n    pass\n",
         "sleeps": _GO + "while not os.path.exists(go):\n    time.sleep(0.01)\n"}
#: Loads that end the worker: it exits, or is killed by its own signal.
CRASHES = {"exits": "import os\nos._exit(3)\n",
           "segfaults": "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"}
#: Takes 5,000 threads (past the 4,096 the zygote's sandbox allows, where the kernel enforces that cap: not for root)
#: and keeps them, so that the zygote may be unable to fork.
HOARDS = """
import _thread, threading, time
threading.stack_size(1 << 16)
for _ in range(5000):
    try:
        _thread.start_new_thread(time.sleep, (3600,))
    except RuntimeError:
        break
""" + NOTES


def _call(worker: Worker, instance: int, tool: str, **arguments: str) -> dict[str, object]:
    return worker.request("call", {"instance": instance, "tool": tool, "arguments": arguments}, SECONDS)


def _opened(worker: Worker) -> int:
    worker.request("load", {"folder": worker.path(0)}, SECONDS)
    return int(worker.request("open", {"folder": worker.path(0)}, SECONDS))


def _at_once(count: int, work: Callable[[int], object]) -> list[object]:
    """``work(i)`` for each i, every call begun at once on a thread of its own: what each returned or raised."""
    ready = threading.Barrier(count)
    outcomes: list[object] = [None] * count

    def run(number: int) -> None:
        ready.wait()
        try:
            outcomes[number] = work(number)
        except Exception as exc:  # noqa: BLE001 - each outcome is checked by the test
            outcomes[number] = exc

    threads = [threading.Thread(target=run, args=(number,), daemon=True) for number in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE)
    assert not any(thread.is_alive() for thread in threads), "a start never ended"
    return outcomes


@pytest.mark.slow
def test_episodes_started_at_once_on_a_cold_pool_each_get_a_working_worker_of_their_own(worker_sandbox: Provider,
                                                                                       tmp_path: Path) -> None:
    # Past one request's worth of forks; fewer in a sandbox each, whose start costs an interpreter and its imports.
    count = CHILDREN + 6 if isinstance(worker_sandbox, Forking) else 12
    cold = Pool(worker_sandbox, SERVICE, [notes_world(tmp_path, "notes", NOTES)], LIMITS)
    held = threading.Barrier(count)

    def episode(number: int) -> tuple[int, object]:
        worker = cold.lease()
        try:
            instance = _opened(worker)
            _call(worker, instance, "add_note", body=f"note {number}")
            me = _call(worker, instance, "me")
            notes = _call(worker, instance, "list_notes")["notes"]
            held.wait(DEADLINE)  # every worker is lent at once: none could serve two of these episodes
            return me["token"], me["session"], notes
        finally:
            cold.release(worker)

    try:
        outcomes = _at_once(count, episode)
    finally:
        cold.close()
    # Each its own instance, in a process of its own
    assert [notes for _, _, notes in outcomes] == [["first", f"note {number}"] for number in range(count)]
    assert len({token for token, _, _ in outcomes}) == count
    # that leads a session of its own, as a sandbox each does (bubblewrap's --new-session): where the kernel shares
    # CPU time out by session, as many starts as there are get as many shares, not one between them
    if isinstance(worker_sandbox, Forking):
        assert all(session for _, session, _ in outcomes)


@pytest.mark.slow
@pytest.mark.parametrize("failing", [*HANGS, *CRASHES])
def test_a_start_that_hangs_or_crashes_holds_up_no_other_start(failing: str, worker_sandbox: Provider,
                                                               tmp_path: Path) -> None:
    bad_folder = notes_world(tmp_path, failing, {**HANGS, **CRASHES}[failing] + NOTES)
    good = Pool(worker_sandbox, SERVICE, [notes_world(tmp_path, "notes", NOTES)], LIMITS)
    bad = Pool(worker_sandbox, SERVICE, [bad_folder], LIMITS)
    count, lock = 4, threading.Lock()
    seen = {"good left": count // 2, "bad ended": 0, "bad ended before the word": -1}

    def episode(number: int) -> object:
        if number % 2:  # the bad world's start: its deadline is far beyond anything else here
            with bad.leased() as worker:
                try:
                    worker.request("load", {"folder": worker.path(0)}, DEADLINE)
                    outcome = "loaded"
                except WorkerFailed as failed:
                    outcome = failed.kind
            with lock:
                seen["bad ended"] += 1
            return outcome
        try:
            with good.leased() as worker:
                return _call(worker, _opened(worker), "list_notes")["notes"]
        finally:
            with lock:
                seen["good left"] -= 1
                if not seen["good left"]:  # every good start has ended: the hanging loads may end now
                    seen["bad ended before the word"] = seen["bad ended"]
                    (bad_folder / "go").touch()

    try:
        outcomes = _at_once(count, episode)
    finally:
        good.close()
        bad.close()
    assert outcomes[0::2] == [["first"]] * (count // 2)
    if failing in HANGS:  # each still loading when every good start had ended, then loaded at the test's word
        assert (seen["bad ended before the word"], outcomes[1::2]) == (0, ["loaded"] * (count // 2))
    else:
        assert outcomes[1::2] == ["crashed"] * (count // 2)


@pytest.mark.slow
@pytest.mark.parametrize("worker_sandbox", ["forked"], indirect=True)
def test_a_world_that_takes_every_thread_it_can_stops_no_running_worker_nor_later_starts(worker_sandbox: Provider,
                                                                                        tmp_path: Path) -> None:
    notes = notes_world(tmp_path, "notes", NOTES)
    sibling = Worker(worker_sandbox, SERVICE, [notes], LIMITS)
    try:
        instance = _opened(sibling)
        _call(sibling, instance, "add_note", body="mine")
        hoarder = Worker(worker_sandbox, SERVICE, [notes_world(tmp_path, "hoards", HOARDS)], Limits())
        _opened(hoarder)

        def start(_: int) -> object:
            try:
                worker = Worker(worker_sandbox, SERVICE, [notes], LIMITS)
            except WorkerFailed as failed:
                return failed.kind
            try:
                return _call(worker, _opened(worker), "list_notes")["notes"]
            finally:
                worker.kill()

        # Each start while the threads are taken works or is refused (an environment error), none waits for ever.
        assert set(map(str, _at_once(8, start))) <= {"crashed", "['first']"}
        assert _call(sibling, instance, "list_notes")["notes"] == ["first", "mine"]  # the running worker serves on
        hoarder.kill()
        assert start(0) == ["first"]  # and the zygote forks again once the hoarder is gone
    finally:
        sibling.kill()


def test_a_bubblewrap_worker_outlives_the_thread_that_asked_for_it(sandbox: Provider, tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy", reason=extra_reason("awm"))
    started: list[Worker] = []
    thread = threading.Thread(target=lambda: started.append(Worker(sandbox, SERVICE,
                                                                    [notes_world(tmp_path, "notes", NOTES)], LIMITS)))
    thread.start()
    thread.join(DEADLINE)
    [worker] = started  # its thread has ended; had bubblewrap been spawned from it, the worker would have died with it
    try:
        assert _call(worker, _opened(worker), "list_notes")["notes"] == ["first"]
    finally:
        worker.kill()
