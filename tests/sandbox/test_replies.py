"""A world whose code writes its own reply straight to the protocol's descriptor, past the worker's encoder: the
harness holds each reply to its bounds before building it, so its memory, the other threads of the process and the
call's deadline hold, the call is an environment error, and the worker is replaced (a later instance of the world
answers as a control one did)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from occubench.sandbox import Provider
from occubench.sandbox.pool import GRACE_SECONDS
from tests.sandbox.corpus import Attack, make_corpus_world

#: The body of ``attack()`` (run at the start of get_claim): ``BODY`` written, with its length, to the worker's
#: end of the protocol (the one pipe open for writing past stderr).
_WRITE = ('import fcntl, os, stat, struct\n'
          '    body = BODY\n'
          '    for fd in range(3, 256):\n'
          '        try:\n'
          '            mode, flags = os.fstat(fd).st_mode, fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE\n'
          '        except OSError:\n'
          '            continue\n'
          '        if stat.S_ISFIFO(mode) and flags == os.O_WRONLY:\n'
          '            data = memoryview(struct.pack(">I", len(body)) + body)\n'
          '            while data:\n'
          '                data = data[os.write(fd, data):]\n'
          '            return\n')

REPLIES = {
    # What was found: 64 MiB of empty lists, 22 million objects to build.
    "64_mib_of_lists": 'b\'{"ok":[\' + b"[]," * ((64 << 20) // 3 - 4) + b\'[]]}\'',
    # Under a call's bytes, over its values: 1.4 million lists.
    "values_past_the_bound": 'b\'{"ok":[\' + b"[]," * ((4 << 20) // 3 - 4) + b\'[]]}\'',
    "nested_100_000_deep": 'b\'{"ok":\' + b"[" * 100_000 + b"]" * 100_000 + b"}"',
    # A well-formed reply ahead of the worker's own, which would then answer the next request: it is not the
    # answer to the request sent (it lacks its number), so the worker is stopped there.
    "a_reply_ahead": 'b\'{"ok":{"forged":true},"cpu":0}\'',
}

HARNESS = """
import json, sys, threading, time
from pathlib import Path
from occubench.errors import WorldError
from occubench.executable.isolated import load_isolated
from occubench.sandbox import detect

root = Path(sys.argv[1])
[world] = load_isolated(root, [root / "insurance_claims"], detect().provider, service="occubench.testing.unchecked")
control = world.environment()
expected = control.call("list_adjusters", {})
control.close()
Path("/proc/self/clear_refs").write_text("5")  # the peak resident memory counts from here
gap, stop = [0.0], threading.Event()

def watchdog():  # another episode's thread: how long it went without the interpreter's lock
    last = time.monotonic()
    while not stop.wait(0.01):
        now = time.monotonic()
        gap[0], last = max(gap[0], now - last), now

thread = threading.Thread(target=watchdog)
thread.start()
env = world.environment(time_limit=2)
outcome, started = [], time.monotonic()
for _ in range(2):
    try:
        outcome.append(env.call("get_claim", {"claim_id": "CLM-1004"}))
    except WorldError as exc:
        outcome.append(str(exc))
        break
seconds = time.monotonic() - started
env.close()
stop.set()
thread.join()
peak = int(next(line for line in open("/proc/self/status") if line.startswith("VmHWM")).split()[1]) << 10
again = world.environment()
print(json.dumps({"outcome": outcome, "seconds": seconds, "gap": gap[0], "peak": peak,
                  "same": again.call("list_adjusters", {}) == expected}))
again.close()
"""


@pytest.mark.parametrize("reply", sorted(REPLIES))
def test_a_reply_written_past_the_encoder_costs_the_harness_nothing_and_is_an_environment_error(
        reply: str, tmp_path: Path, sandbox: Provider) -> None:
    make_corpus_world(tmp_path, Attack(_WRITE.replace("BODY", REPLIES[reply]), when="tool"), mark=tmp_path / "m",
                      port=9, harness=0)
    # A process of its own: its peak memory and its threads are the harness's alone.
    done = subprocess.run([sys.executable, "-c", HARNESS, str(tmp_path)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    [refused] = found["outcome"]  # the first call already: no reply of the world's own is taken
    assert refused.startswith("insurance_claims: tool get_claim: protocol:"), refused
    assert found["peak"] < 300 << 20
    assert found["gap"] < 1.0
    assert found["seconds"] < 2 + GRACE_SECONDS + 10  # the tool's limit and the grace: a generous "by its deadline"
    assert found["same"]  # a fresh worker serves the world as before
