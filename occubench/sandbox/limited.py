"""``python -m occubench.sandbox.limited LIMITS COMMAND [CHANNEL]``: put the limits (JSON: the worker's rlimit
names, see :data:`occubench.sandbox.worker.RLIMITS`) on this process, for good, then become ``sh -c COMMAND``: a
shell command of an agent's, whose every process inherits them.

With ``CHANNEL`` (a Unix socket's descriptor, from the harness), the workspace is a file system of the sandbox's
own: before any of the agent's code runs, the launcher hands the harness its ``/workspace``, open, to copy the
host's folder into (and, once the command is over, back out), and waits for the harness's word that the copy is
done."""

from __future__ import annotations

import json
import os
import socket
import sys

from occubench.sandbox.worker import limit


def main(limits: str, command: str, channel: str | None = None) -> None:
    if channel is not None:
        with socket.socket(fileno=int(channel)) as harness:
            workspace = os.open("/workspace", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            socket.send_fds(harness, [b"w"], [workspace])
            os.close(workspace)
            if harness.recv(1) != b"g":  # the harness gave up: nothing of the agent's runs
                sys.exit(1)
    limit(json.loads(limits))
    os.execv("/bin/sh", ["sh", "-c", command])


if __name__ == "__main__":
    main(*sys.argv[1:])
