"""`occubench tasks` and `occubench suites` at 80 columns, not in a terminal: every task id, environment and task
family name is printed whole, never cut with "…"."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def _occubench(*args: str) -> str:
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "occubench", *args], env=env, capture_output=True, text=True,
                          check=True).stdout


def test_tasks_and_suites_never_cut_a_name_at_80_columns() -> None:
    tasks = json.loads(_occubench("tasks", "--suite", "executable", "--json"))
    listing = _occubench("tasks", "--suite", "executable")
    assert tasks and all(task["task_id"] in listing for task in tasks)
    assert max(len(line) for line in listing.splitlines()) <= 80
    listings = json.loads(_occubench("suites", "--json"))
    names = [item["name"] for item in [*listings["executable"]["listing"],
                                       *listings["workplace"]["listing"]["families"]]]
    suites = _occubench("suites")
    assert names and all(name in suites for name in names)
