"""`occubench tasks`, `suites` and `validate` at 80 columns, not in a terminal: every task id, environment and task
family name is printed whole, never cut with "…" nor split across lines; what does not fit is left out, and said."""

from __future__ import annotations

import json
import os
import re
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


def _rows(output: str) -> list[str]:
    """The lines of the tables in ``output`` (the lines around them are never broken, so may be longer)."""
    return [line for line in output.splitlines() if line[:1] in ("┏", "┃", "┡", "│", "├", "└")]


def _words(table: str) -> set[str]:
    """The words a table shows, borders apart."""
    return set(re.findall(r"[^\s│┃]+", table))


def test_validate_tables_fit_80_columns_and_wrap_only_between_words() -> None:
    listing = _occubench("validate", "--suite", "executable")
    tasks = [task["task_id"] for task in json.loads(_occubench("tasks", "--suite", "executable", "--json"))]
    assert max(len(line) for line in _rows(listing)) <= 80
    assert all(re.search(rf"│ {re.escape(task)} +│ .* valid +│", listing) for task in tasks), listing
    days = _occubench("validate", "--suite", "workplace", "--days", "2")
    families = {family["name"] for family in json.loads(_occubench("suites", "--json"))["workplace"]["listing"]
                ["families"]}
    shown = {word.rstrip(",") for word in _words(days)}
    assert max(len(line) for line in _rows(days)) <= 80
    assert len([line for line in _rows(days) if line.startswith("│")]) > 4  # 4 days, their families wrapped
    assert {word for word in shown if "_" in word} <= families, days  # and no family name is cut in two


def test_columns_that_do_not_fit_are_left_out_and_named() -> None:
    listing = _occubench("tasks", "--suite", "executable")
    assert "Left out at 80 columns: Environment, Category, Scenario" in " ".join(listing.split())
    wide = subprocess.run([sys.executable, "-m", "occubench", "tasks", "--suite", "executable"],
                          env={**os.environ, "COLUMNS": "200"}, capture_output=True, text=True, check=True).stdout
    assert "Left out" not in wide and {"Environment", "Category", "Scenario"} <= _words(wide)
