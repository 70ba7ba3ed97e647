"""The harness believes nothing a worker says: every reply crosses one boundary that checks it against what was
asked, and a name the worker gives is never a path.

A lying worker is made as an attacker would make one: world code that got past the allow-list (here: the allow-list
left out, :mod:`occubench.testing.unchecked`) changes what its worker reports. Through the CLI, the workers serve
that service in place of the usual one. Each test looks for the attack's effect on disk: the file the lie names does
not exist, and nothing was written outside the output folder.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from occubench.cli import main
from occubench.errors import ConfigError, WorldError
from occubench.executable import isolated
from occubench.executable.isolated import describe, load_isolated
from occubench.executable.registry import _WORLDS, load_world
from occubench.sandbox import Provider
from occubench.sandbox.boundary import Boundary, path_name, probe_problem
from occubench.testing import MockLLMServer
from occubench.testing.responders import make_scripted_responder

UNCHECKED = "occubench.testing.unchecked"
BASE = "insurance_claims"

#: World code that makes the worker report ``LIE`` as the world's name: the worker's own check of the name against
#: the folder's is fooled by a string that is never unequal.
NAME_LIE = """
class _Name(str):
    def __ne__(self, other):
        return False


world.name = _Name(LIE)
"""
#: The first tool reported under the name ``LIE``.
TOOL_LIE = """
import dataclasses

_first = world.tools.pop(next(iter(world.tools)))
world.tools[LIE] = dataclasses.replace(_first, spec=dataclasses.replace(_first.spec, name=LIE))
"""
#: A description of 200,000 characters (data, which the allow-list has no reason to stop).
LONG_LIE = "\nworld.description = 'x' * 200_000\n"
#: The worker's replies no longer made safe JSON, and a reference solution's arguments nested 200 deep.
DEEP_LIE = """
import dataclasses
import json
import occubench.sandbox.protocol as _protocol

_protocol.dumps = json.dumps
_deep = {}
for _ in range(200):
    _deep = {"a": _deep}
_call = type(world.tasks[0].reference[0])
world.tasks[0] = dataclasses.replace(world.tasks[0], reference=[_call("search_claims", _deep)])
"""


def lying_world(root: Path, lie: str = "", value: str = "") -> Path:
    """``root``/insurance_claims, a copy of the built-in world with ``lie`` (``LIE`` standing for ``value``) at the
    end of its code."""
    folder = root / BASE
    shutil.copytree(_WORLDS / BASE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    with (folder / "__init__.py").open("a") as code:
        code.write(lie.replace("LIE", repr(value)))
    return folder


def files_under(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*") if path.is_file()) if folder.exists() else []


# -- the boundary itself ---------------------------------------------------------------------------------------------

def _described() -> dict[str, Any]:
    return describe(load_world(BASE))


def _set(path: str, value: Any) -> Any:
    def change(reply: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = reply
        for step in parents:
            target = target[int(step)] if step.isdigit() else target[step]
        target[int(last) if last.isdigit() else last] = value
    return change


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


HOSTILE_DESCRIPTIONS = {
    "another world's name": _set("name", "clinic_scheduling"),
    "an absolute path as its name": _set("name", "/tmp/escaped"),
    "a relative path as its name": _set("name", "../../escaped"),
    "markup as its name": _set("name", "[link=https://example.com]x[/link]"),
    "a name of 65 characters": _set("name", "a" * 65),
    "a tool named as a path": _set("tools.0.name", "../x"),
    "a task id with a newline": _set("tasks.0.id", "t\n1"),
    "a table named as a path": lambda reply: reply["state"].update({"../t": reply["state"].popitem()[1]}),
    "a description of 200,000 characters": _set("description", "x" * 200_000),
    "arguments nested 200 deep": _set("tasks.0.reference.0.arguments", _nested(200)),
    "a tool schema that is not JSON Schema": _set("tools.0.parameters", {"type": 7}),
    "two tools of one name": lambda reply: reply["tools"].append(reply["tools"][0]),
    "a difficulty that is text": _set("tasks.0.difficulty", "1"),
    "a field too many": _set("extra", 1),
    "a row holding an object": _set("state.claims.rows.0.status", {"a": 1}),
    "not an object": lambda reply: reply.clear(),
}


@pytest.mark.parametrize("change", list(HOSTILE_DESCRIPTIONS.values()), ids=list(HOSTILE_DESCRIPTIONS))
def test_a_hostile_description_is_refused_naming_the_folder(change: Any, tmp_path: Path) -> None:
    reply = _described()
    Boundary(tmp_path / BASE).world(copy.deepcopy(reply))  # the honest description passes
    change(reply)
    with pytest.raises(ConfigError) as refused:
        Boundary(tmp_path / BASE).world(reply)
    assert str(refused.value).startswith(f"{tmp_path / BASE}: ")
    assert "escaped" not in str(refused.value) and "\n" not in str(refused.value)  # the lie is not repeated


def test_every_built_in_world_passes_its_boundary() -> None:
    for name in sorted(p.name for p in _WORLDS.iterdir() if (p / "__init__.py").is_file()):
        assert Boundary(_WORLDS / name).world(describe(load_world(name)))["name"] == name


@pytest.mark.parametrize(("kind", "reply"), [
    ("open", "../x"), ("open", -1), ("call", ["not", "an", "object"]), ("call", _nested(100)),
    ("verify", {"checks": [{"name": "c", "passed": "yes", "message": ""}], "diff": {}}),
    ("verify", {"checks": [], "diff": {"claims": {"inserted": "x", "deleted": [], "updated": []}}}),
    ("diff", {"../claims": {"inserted": [], "deleted": [], "updated": []}}),
    ("sizes", {"claims": 1.0}), ("sizes", {"claims": True}), ("sizes", {"/etc/passwd": 3}),
])
def test_an_episodes_hostile_replies_are_environment_errors(kind: str, reply: Any, tmp_path: Path) -> None:
    with pytest.raises(WorldError, match=f"^{BASE}: the request: the worker's reply is refused"):
        Boundary(tmp_path / BASE).reply(kind, reply, "the request")


def test_a_probes_reply_speaks_only_of_what_it_was_given() -> None:
    seed = {"kind": "seed", "rows": [["t", ["a"], [1]]] * 3}
    assert probe_problem(seed, {"problems": [], "failed": [2]}) is None
    assert probe_problem(seed, {"problems": [], "failed": [3]}) is not None
    assert probe_problem({"kind": "validate"}, {"world": [], "tasks": {"t1": []}}, ["t1"]) is None
    assert probe_problem({"kind": "validate"}, {"world": [], "tasks": {"t2": ["x"]}}, ["t1"]) is not None
    assert probe_problem({"kind": "tools"}, {"problems": [], "specs": [{"name": "../x", "description": "",
                                                                        "parameters": {}, "writes": False}]})


@pytest.mark.parametrize("name", ["/tmp/x", "../x", "a/b", "", ".", "x\n", "é"])
def test_no_path_is_named_after_anything_but_a_plain_name(name: str) -> None:
    with pytest.raises(ConfigError):
        path_name(name)
    assert path_name("plain_name_1") == "plain_name_1"


# -- lying workers -----------------------------------------------------------------------------------------------

LIES = {
    "another name": (NAME_LIE, "clinic_scheduling"),
    "an absolute path": (NAME_LIE, "/ABSOLUTE"),
    "a relative path": (NAME_LIE, "../../escaped"),
    "a tool named as a path": (TOOL_LIE, "../../escaped"),
    "an oversized description": (LONG_LIE, ""),
    "nesting past the bound": (DEEP_LIE, ""),
}


@pytest.mark.parametrize("lie", list(LIES), ids=list(LIES))
def test_a_world_whose_worker_lies_does_not_load(lie: str, tmp_path: Path, sandbox: Provider) -> None:
    code, value = LIES[lie]
    folder = lying_world(tmp_path / "worlds", code, value.replace("/ABSOLUTE", str(tmp_path / "escaped")))
    with pytest.raises(ConfigError) as refused:
        load_isolated(tmp_path / "worlds", [folder], sandbox, service=UNCHECKED)
    assert str(refused.value).startswith(f"{folder}: ")


@pytest.fixture
def lying_workers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, sandbox: Provider) -> Path:
    """Every world folder's worker serves worlds past no allow-list; the user cache is ``tmp_path``/cache."""
    monkeypatch.setattr(isolated, "SERVICE", UNCHECKED)
    monkeypatch.setenv("OCCUBENCH_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "outside").mkdir()  # where an absolute name points: a folder the user can write
    return tmp_path


@pytest.mark.parametrize("name", ["absolute", "../../escaped", "../../../outside/escaped"])
def test_twin_derive_writes_no_file_a_lying_worker_names(name: str, lying_workers: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    tmp_path = lying_workers
    target = str(tmp_path / "outside" / "escaped") if name == "absolute" else name
    worlds, out = tmp_path / "worlds", tmp_path / "run" / "out"
    lying_world(worlds, NAME_LIE, target)
    assert main(["twin", "derive", "--worlds-dir", str(worlds), "--out", str(out)]) == 2
    assert "Traceback" not in capsys.readouterr().err
    assert [path for path in files_under(tmp_path) if not path.is_relative_to(worlds)] == []  # nothing written
    honest = lying_world(tmp_path / "honest")  # the same command on the honest world writes its twin in --out only
    assert main(["twin", "derive", "--worlds-dir", str(honest.parent), "--out", str(out)]) == 0
    written = [path.relative_to(out).as_posix() for path in files_under(tmp_path)
               if not path.is_relative_to(worlds) and not path.is_relative_to(honest)]
    assert f"world_model_configs/{BASE}.json" in written and len(written) == 3


def test_a_twin_run_writes_no_file_a_lying_worker_names_in_the_twins_cache(lying_workers: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    tmp_path = lying_workers
    run = ["run", "--suite", "twin", "--world-model", "simulator", "--agent",
           "reference", "--output-dir", str(tmp_path / "runs"), "--run-name", "twin", "--limit", "1"]
    for number, target in enumerate((str(tmp_path / "outside" / "escaped"), "../../escaped")):
        worlds = lying_world(tmp_path / f"worlds{number}", NAME_LIE, target).parent
        with MockLLMServer(make_scripted_responder(twin=0.0)) as server:
            assert main([*run, "--worlds-dir", str(worlds), "--base-url", server.base_url]) == 2
        assert "Traceback" not in capsys.readouterr().err
        assert [path for path in files_under(tmp_path) if "worlds" not in path.relative_to(tmp_path).parts[0]] == []
    honest = lying_world(tmp_path / "honest")  # the honest world runs, its twin derived into the cache
    with MockLLMServer(make_scripted_responder(twin=0.0)) as server:
        assert main([*run, "--worlds-dir", str(honest.parent), "--base-url", server.base_url]) == 0
    cached = [path.name for path in files_under(tmp_path / "cache")]
    assert f"{BASE}.json" in cached
    record = json.loads((tmp_path / "runs" / "twin" / "results.jsonl").read_text().splitlines()[0])
    assert record["status"] == "ok"
