"""One run at a time in a directory; a lock left by a killed process is taken over."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from occubench.errors import ConfigError
from occubench.util.lock import LOCK_FILE, DirectoryLock


def test_second_lock_refuses_naming_the_holder(tmp_path: Path) -> None:
    holder = DirectoryLock(tmp_path / "run").acquire()
    try:
        # flock is per open file description: a second acquire in this process is refused like another process.
        with pytest.raises(ConfigError, match=rf"in use by process {os.getpid()} "):
            DirectoryLock(tmp_path / "run").acquire()
    finally:
        holder.release()
    with DirectoryLock(tmp_path / "run") as again:
        assert again.taken_over is None  # a released lock leaves no one to take over from


def test_lock_of_a_killed_process_is_taken_over(tmp_path: Path) -> None:
    code = ("import sys, time; from pathlib import Path; from occubench.util.lock import DirectoryLock; "
            "DirectoryLock(Path(sys.argv[1])).acquire(); print('locked', flush=True); time.sleep(600)")
    child = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "run")], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "locked"
        with pytest.raises(ConfigError, match=f"process {child.pid}"):
            DirectoryLock(tmp_path / "run").acquire()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert (tmp_path / "run" / LOCK_FILE).read_text()  # the dead process's record is still there
    with DirectoryLock(tmp_path / "run") as lock:
        assert lock.taken_over == child.pid
