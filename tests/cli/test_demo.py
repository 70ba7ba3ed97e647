"""`occubench demo`: the quick start's real evaluation, offline and without a key, as a newcomer runs it: through a
pipe and on a terminal, 80 columns wide."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from occubench.store import RESULTS_FILE, read_results
from tests.conftest import BUILTIN_TASKS

#: What a terminal reads as control, not text: colour and style sequences.
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_a_terminal(args: list[str], cwd: Path, env: dict[str, str], columns: int) -> tuple[int, str]:
    """Run ``args`` with its stdout on a pseudo-terminal ``columns`` wide (stderr to a file); its exit status and
    what the terminal showed, its control sequences left out."""
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    with open(cwd / "stderr.log", "wb") as stderr:
        process = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=side, stderr=stderr)
    os.close(side)
    shown = bytearray()
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the program closed its end
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    return process.wait(timeout=600), _CONTROL.sub("", shown.decode()).replace("\r\n", "\n")


def leaderboard(output: str) -> list[str]:
    """The leaderboard's lines: from its title to its bottom border."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "Leaderboard")
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("└"))
    return lines[start:end + 1]


def assert_one_line_per_run(output: str, runs: list[str]) -> None:
    """At 80 columns: no line of the table is wider, and each run is one row holding its whole name."""
    table = leaderboard(output)
    assert all(len(line) <= 80 for line in table), "\n".join(table)
    rows = [line for line in table if line.startswith("│")]
    assert len(rows) == len(runs) and all(any(run in row for row in rows) for run in runs), "\n".join(table)


@pytest.mark.slow
def test_the_demo_evaluates_both_kinds_of_world_offline_and_writes_the_report(tmp_path: Path) -> None:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OCCUBENCH_"))}, "COLUMNS": "80"}
    done = subprocess.run([sys.executable, "-m", "occubench", "demo"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    folders = sorted(p for p in (tmp_path / "results").iterdir() if p.is_dir())
    assert [p.name.rsplit("__", 1)[0] for p in folders] == ["mock-agent__mock-world__E0", "reference__executable__E0"]
    records = {p.name: read_results(p / RESULTS_FILE) for p in folders}
    assert [len(r) for r in records.values()] == [3, BUILTIN_TASKS]
    assert all(r["status"] == "ok" for rs in records.values() for r in rs)
    assert all(r["is_correct"] for r in records[folders[1].name])  # the reference solutions pass every check
    assert_one_line_per_run(done.stdout, [p.name for p in folders])
    # Progress lines in a log are never broken: each run's folder is found whole.
    assert {f"results/{p.name}" for p in folders} <= set(re.findall(r"Run directory: (\S+)", done.stderr))
    html = (tmp_path / "results" / "demo-report.html").read_text()
    assert all(p.name in html for p in folders)
    # Run again, on a terminal, it resumes: nothing is evaluated twice, and the leaderboard still fits.
    status, shown = on_a_terminal([sys.executable, "-m", "occubench", "demo"], tmp_path, {**env, "TERM": "xterm"},
                                  80)
    assert status == 0 and (tmp_path / "stderr.log").read_text().count("0 to run") == 2
    assert_one_line_per_run(shown, [p.name for p in folders])
