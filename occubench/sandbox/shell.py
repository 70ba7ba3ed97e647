"""An agent's shell command over a day's workspace, run by the sandbox provider (:meth:`Provider.run_in`): in
bubblewrap's namespaces (no network, nothing of the host but the system's read-only files and the workspace,
writable), under the kernel filter and the limits on memory, CPU, file size, open files and processes, and a
deadline after which its whole process group is killed. Its output is read up to a cap and the rest drained, so a
command that prints without end costs the harness no memory. In bubblewrap its workspace is a file system of its
own, as large as the quota (:attr:`Limits.workspace_bytes`), copied from and back to the day's folder."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path

from occubench.sandbox import cgroups
from occubench.sandbox.provider import Limits, Provider
from occubench.util.openfiles import readable

#: Characters of output kept; the rest is counted, not kept.
MAX_OUTPUT = 10_240
#: What a shell command may use: less than a worker (it is one call of an episode), as many processes as a build
#: may start.
COMMAND_LIMITS = Limits(cpu_seconds=30, memory_bytes=1 << 30, file_bytes=64 << 20, open_files=256, processes=64,
                        workspace_bytes=256 << 20)


@dataclass(frozen=True)
class CommandResult:
    #: The exit status (negative: the signal that ended it); None when the deadline ended it.
    exit_code: int | None
    output: str
    #: Bytes of output past :data:`MAX_OUTPUT` that were left out.
    left_out: int
    #: What of the workspace the command left was not kept, past its quota ("" when everything was).
    not_kept: str = ""


def run_command(provider: Provider, workspace: Path, command: str, seconds: float,
                limits: Limits = COMMAND_LIMITS) -> CommandResult:
    # As root the process limit binds no one (see occubench.sandbox.cgroups): a control group caps them instead.
    with cgroups.capped(limits.processes, "shell") if os.geteuid() == 0 else contextlib.nullcontext() as group:
        with provider.run_in(workspace, command, limits, group) as running:
            result = _run(running.process, provider, seconds)
    return replace(result, not_kept=running.not_kept)


def _run(process: subprocess.Popen[bytes], provider: Provider, seconds: float) -> CommandResult:
    stdout = process.stdout
    assert stdout is not None
    kept, left_out = bytearray(), 0
    deadline = time.monotonic() + seconds
    timed_out = False
    try:
        while True:
            wait = deadline - time.monotonic()
            if wait <= 0:
                timed_out = True
                break
            if not readable(stdout.fileno(), wait):
                continue
            chunk = os.read(stdout.fileno(), 1 << 16)
            if not chunk:
                break
            room = max(0, MAX_OUTPUT * 4 - len(kept))  # bytes: a character is at most four
            kept += chunk[:room]
            left_out += len(chunk) - min(room, len(chunk))
    finally:
        provider.kill(process)  # the command's group: whatever it left running in the background goes too
        stdout.close()
        code = process.wait()
    text = kept.decode("utf-8", "replace")
    left_out += len(text[MAX_OUTPUT:].encode())
    return CommandResult(None if timed_out else code, text[:MAX_OUTPUT], left_out)
