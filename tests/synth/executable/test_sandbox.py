"""Generated code is refused before it is imported when it reaches for files, processes, the network or the
interpreter's internals, and what runs is confined to a child process: an endless loop, a memory bomb and a hang are
stopped there, and the parent carries on."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from occubench.executable.registry import _WORLDS
from occubench.synth.executable.parts import function_problems
from occubench.synth.sandbox import Limits, check_source, run_confined

REFUSED = {
    "open('/etc/passwd').read()": "the builtin 'open' is not allowed",
    "import socket": "`import socket` is not allowed",
    "import os\nos.system('id')": "`import os` is not allowed",
    "from subprocess import run": "import from 'subprocess' is not allowed",
    "from importlib import import_module": "import from 'importlib' is not allowed",
    "eval('1 + 1')": "the builtin 'eval' is not allowed",
    "exec('x = 1')": "the builtin 'exec' is not allowed",
    "compile('1', 'f', 'eval')": "the builtin 'compile' is not allowed",
    "__import__('os')": "the name '__import__' is not allowed",
    "getattr(db, 'execute')": "the builtin 'getattr' is not allowed",
    "globals()['x']": "the builtin 'globals' is not allowed",
    "x = ().__class__.__bases__": "the attribute '__bases__' is not allowed",
    "'{0.__class__}'.format(db)": "the attribute 'format' is not allowed",
    "db.set_authorizer(None)": "the attribute 'set_authorizer' is not allowed",
    "import sqlite3\nsqlite3.connect('/tmp/x.db')": "the attribute 'connect' is not allowed",
    "from json import decoder": "json.decoder is not allowed",
    "from pathlib import Path\nPath('/etc/passwd')": "Path may be used only as Path(__file__).parent",
    "def f(x: 'os.system(1)'): pass": "an annotation may not hold a string",
    "class A: pass": "classes are not allowed",
    "import json\njson.dumps = repr": "json.dumps may be read, not assigned or deleted",
    "def f():\n    global world": "global are not allowed",
    "def g():\n    yield frame": "generators are not allowed",
    "def f(type: str) -> str:\n    return type\n\ndef g(x):\n    return type(x)": "line 5: the builtin 'type'",
    "for open in []:\n    pass\nopen('/etc/passwd')": "line 1: the builtin 'open' is not allowed",
    "open = print\ndel open\ndef f():\n    return open('/etc/passwd')": "the builtin 'open' is not allowed",
}


@pytest.mark.parametrize("source", REFUSED)
def test_the_allow_list_refuses_what_reaches_outside(source: str) -> None:
    problems = [str(problem) for problem in check_source(source)]
    assert any(REFUSED[source] in problem for problem in problems), problems


def test_the_allow_list_accepts_every_built_in_world_and_plain_tool_code() -> None:
    for path in sorted(_WORLDS.glob("*/__init__.py")):
        assert check_source(path.read_text(encoding="utf-8")) == [], path
    tool = textwrap.dedent('''
        def set_status(db: sqlite3.Connection, case_id: str, status: Literal["open", "closed"],
                       type: str | None = None) -> dict[str, Any]:
            """Set a case's status."""
            case = found(db, "SELECT * FROM cases WHERE case_id = ?", case_id, missing=f"no {case_id}")
            total = sum(row["amount"] for row in rows(db, "SELECT amount FROM cases"))
            return {"case": case, "total": round(math.fsum([total]), 2), "kind": type}
        ''')
    assert check_source(tool) == []


@pytest.mark.parametrize("junk", ["def f(:\n", "x = 1\x00", "(" * 5000 + ")" * 5000, "x = '" + "a" * 300_000 + "'",
                                  "\ud800", 'def f(db: sqlite3.Connection) -> dict:\n    return {}'])
def test_junk_in_place_of_a_tool_gives_problems_and_never_raises(junk: str) -> None:
    problems = function_problems(junk, "get_case", ("db",), tool=True)
    assert problems and all(isinstance(problem, str) for problem in problems)


@pytest.fixture
def hostile_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module the child can import (its folder is on the path the child inherits)."""
    (tmp_path / "hostile_jobs.py").write_text(textwrap.dedent('''
        import os
        import time

        def echo(job):
            return {"job": job, "environment": sorted(os.environ)}

        def endless(job):
            while True:
                pass

        def c_loop(job):
            return 10 ** (10 ** 10) > 0  # one C call: no Python-level interrupt can stop it

        def memory_bomb(job):
            return len([0] * (10 ** 9))  # 8 GB

        def hang(job):
            time.sleep(600)
        '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    return "hostile_jobs"


LIMITS = Limits(cpu_seconds=2, memory_bytes=1 << 30, wall_seconds=20)


def test_a_confined_run_returns_its_result_and_sees_no_secret(hostile_module: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    outcome = run_confined(f"{hostile_module}:echo", {"n": [1, 2]}, LIMITS)
    assert outcome.error is None and outcome.result["job"] == {"n": [1, 2]}
    assert "OPENAI_API_KEY" not in outcome.result["environment"]


@pytest.mark.parametrize(("job", "stopped"), [("endless", "used more than 2 s of CPU time"),
                                              ("c_loop", "used more than 2 s of CPU time"),
                                              ("memory_bomb", "MemoryError"),
                                              ("hang", "did not finish within 3 s")])
def test_hostile_code_is_stopped_in_the_child_and_the_parent_carries_on(hostile_module: str, job: str,
                                                                       stopped: str) -> None:
    limits = Limits(cpu_seconds=2, memory_bytes=1 << 30, wall_seconds=3) if job == "hang" else LIMITS
    outcome = run_confined(f"{hostile_module}:{job}", {}, limits)
    assert outcome.result is None and outcome.error is not None and stopped in outcome.error
    assert run_confined(f"{hostile_module}:echo", 1, LIMITS).result["job"] == 1  # and the next run is fine
