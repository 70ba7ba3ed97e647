"""``python -m occubench.sandbox.limited LIMITS COMMAND``: put the limits (JSON: the worker's rlimit names, see
:data:`occubench.sandbox.worker.RLIMITS`) on this process, for good, then become ``sh -c COMMAND``: a shell command
of an agent's, whose every process inherits them."""

from __future__ import annotations

import json
import os
import sys

from occubench.sandbox.worker import limit


def main(limits: str, command: str) -> None:
    limit(json.loads(limits))
    os.execv("/bin/sh", ["sh", "-c", command])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
