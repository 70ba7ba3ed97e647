"""The tool contract every world shares: specs and schemas from signatures, strict argument checking, one error
shape, a time limit that interrupts Python loops and SQLite queries, and environment failures that propagate.

No test here measures time: a call that never ends and a small limit must come back as a timeout, however long that
takes on a loaded machine.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import pytest

import occubench.executable
from occubench.core.environment import Environment, JSONObject
from occubench.core.tools import (
    TimeLimitExceeded,
    ToolError,
    ToolSpec,
    call_with_time_limit,
    derive_schema,
    json_arguments,
    schema_problem,
    spec_of,
    time_is_up,
    tool_error,
)
from occubench.errors import ConfigError, LLMUnavailableError, WorldError
from occubench.executable import ExecutableEnvironment, World, load_world
from occubench.executable.registry import world_names
from occubench.simulated import SimulatedEnvironment, WorldModelRegistry, create_client
from occubench.testing import MockLLMServer
from occubench.workplace.generate import generate_day
from tests.workplace.families import played

KINDS = {"unknown_tool", "invalid_arguments", "tool_error", "tool_failed", "timeout"}
NEVER_ENDS = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n"


def spec(**properties: Any) -> ToolSpec:
    return ToolSpec("t", "A tool.", {"type": "object", "properties": properties, "additionalProperties": False})


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def test_specs_come_from_signatures_skipping_the_first_parameter() -> None:
    def move(db: object, source: str, qty: int, note: str | None = None,
             mode: Literal["fast", "safe"] = "safe") -> dict[str, Any]:
        """Move stock.

        Args:
            source: Where from.
            qty: How many.
        """
        return {}

    moved = spec_of(move, "move", writes=True)
    assert (moved.name, moved.description, moved.writes) == ("move", "Move stock.", True)
    assert moved.parameters == {"type": "object", "additionalProperties": False, "required": ["source", "qty"],
                                "properties": {"source": {"type": "string", "description": "Where from."},
                                               "qty": {"type": "integer", "description": "How many."},
                                               "note": {"type": "string"},
                                               "mode": {"type": "string", "enum": ["fast", "safe"]}}}
    assert derive_schema(move, "move") == moved.schema() == {
        "type": "function", "function": {"name": "move", "description": "Move stock.", "parameters": moved.parameters}}
    assert spec_of(move, "move").writes is None
    # The executable worlds' public names are the same objects.
    assert occubench.executable.derive_schema is derive_schema and occubench.executable.ToolError is ToolError


def test_types_are_strict() -> None:
    counted, measured, flagged = spec(n={"type": "integer"}), spec(x={"type": "number"}), spec(b={"type": "boolean"})
    assert counted.check({"n": 3}) is None and counted.check({"n": 10 ** 30}) is None
    assert counted.check({"n": 1.0}) == "n: 1.0 is not of type 'integer'"
    assert counted.check({"n": True}) == "n: True is not of type 'integer'"
    assert measured.check({"x": 1}) is None and measured.check({"x": 2.5}) is None
    assert measured.check({"x": 10 ** 400}) is None  # beyond any float, still a JSON number
    assert measured.check({"x": False}) == "x: False is not of type 'number'"
    assert flagged.check({"b": 1}) == "b: 1 is not of type 'boolean'"
    assert "NaN" in str(measured.check({"x": float("nan")})) and "NaN" in str(measured.check({"x": float("inf")}))


def test_problems_name_each_argument_and_non_objects_are_refused() -> None:
    booking = ToolSpec("book", "", {"type": "object", "required": ["room", "slots"], "additionalProperties": False,
                                    "properties": {"room": {"type": "string"},
                                                   "slots": {"type": "array", "items": {"type": "integer"}}}})
    assert booking.check({"room": 5, "slots": [1, "2"], "x": 0}) == (
        "arguments: Additional properties are not allowed ('x' was unexpected); room: 5 is not of type 'string'; "
        "slots.1: '2' is not of type 'integer'")
    assert booking.check({"slots": []}) == "arguments: 'room' is a required property"
    for value, name in (([], "an array"), ("x", "a string"), (None, "null"), (3, "a number")):
        assert booking.check(value) == f"the arguments must be a JSON object, not {name}"


@pytest.mark.parametrize("value", ["\ud800", float("nan"), 10 ** 5000, nested(100_000), {1, 2}, b"x"],
                         ids=["lone-surrogate", "nan", "5000-digit-int", "100000-deep", "set", "bytes"])
def test_arguments_that_are_not_json_are_refused_whatever_the_schema(value: object) -> None:
    free = ToolSpec("t", "", {"type": "object"})
    problem = free.check({"payload": {"inner": value}})
    assert problem is not None and problem.startswith("the arguments ")


def test_a_declared_schema_that_is_not_json_schema_is_not_enforced() -> None:
    for broken in ({"type": "text"}, {"type": "object", "properties": {"a": {"type": 5}}},
                   {"type": "object", "required": "a"}, {"type": "object", "$ref": "#/$defs/missing"}):
        tool = ToolSpec("t", "", broken)
        assert tool.check({"a": 1}) is None, broken
        assert tool.check([1]) is not None  # still one JSON object


# -- regular expressions and references in schemas ----------------------------------------------------------------

#: Against ``^(a+)+$``, 34 a's and a "!" take Python's re hours, holding the GIL: every episode would stall.
EVIL, SLOW = "^(a+)+$", "a" * 34 + "!"
#: Where a schema's regular expression can sit, with arguments that reach it.
REGEX_PLACES = {
    "pattern": ({"properties": {"code": {"type": "string", "pattern": EVIL}}}, {"code": SLOW}),
    "patternProperties": ({"patternProperties": {EVIL: {"type": "integer"}}, "additionalProperties": False},
                          {SLOW: 1}),
    "propertyNames": ({"propertyNames": {"pattern": EVIL}}, {SLOW: 1}),
    "a subschema naming its dialect": ({"properties": {"code": {"$schema": "http://json-schema.org/draft-07/schema#",
                                                                "pattern": EVIL}}}, {"code": SLOW}),
}
#: A simulated world from a config (as OccuBench's data and synthesized worlds carry schemas), one call checked.
_CALL = """
import json, sys
from occubench.simulated import SimulatedEnvironment, WorldModelConfig, create_client
config, base_url, arguments = json.loads(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
env = SimulatedEnvironment(WorldModelConfig.from_dict(config, "config"), create_client("k", base_url), "world")
print(json.dumps(env.call("find", arguments)))
"""


def _simulated_call(parameters: JSONObject, arguments: JSONObject, base_url: str) -> JSONObject:
    """The observation of one call in a simulated world whose tool has ``parameters``, from a process of its own
    that must finish within a generous deadline: were the check to hang, it would hold its GIL, not this one."""
    config = {"environment_name": "env", "world_model_system_prompt": "You simulate a registry.",
              "action_set_definitions": [{"name": "find", "description": "Find a record.",
                                          "parameters": {"type": "object", **parameters}}],
              "state_description": {"records": "the records"}, "task_initial_state": {"records": []}}
    done = subprocess.run([sys.executable, "-c", _CALL, json.dumps(config), base_url, json.dumps(arguments)],
                          capture_output=True, text=True, timeout=30, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("place", REGEX_PLACES)
def test_a_catastrophic_pattern_is_checked_promptly_as_an_ordinary_invalid_call(place: str,
                                                                                server: MockLLMServer) -> None:
    parameters, arguments = REGEX_PLACES[place]
    observation = _simulated_call(parameters, arguments, server.base_url)
    assert observation["error"] == "invalid_arguments" and set(observation) == {"error", "message"}
    assert server.requests == []  # refused before the simulator was asked


def test_patterns_still_match_and_mismatch(server: MockLLMServer) -> None:
    code = spec(code={"type": "string", "pattern": r"^[A-Z]{3}-\d{4}$"})
    assert code.check({"code": "CLM-1004"}) is None and code.check({"code": "x CLM-1004"}) is not None
    named = ToolSpec("t", "", {"type": "object", "patternProperties": {"^x_": {"type": "integer"}},
                               "additionalProperties": False})
    assert named.check({"x_a": 1}) is None
    assert named.check({"x_a": "1"}) is not None and named.check({"y": 1}) is not None
    # A subschema naming its dialect is checked by the same strict validator: 1.0 is no integer there either.
    dialect = spec(n={"$schema": "http://json-schema.org/draft-07/schema#", "type": "integer"})
    assert dialect.check({"n": 1.0}) is not None
    assert _simulated_call({"properties": {"code": {"type": "string", "pattern": EVIL}}}, {"code": "aaa"},
                           server.base_url).get("error") != "invalid_arguments"
    assert server.requests  # a fitting argument reached the simulator


def lookup(db: sqlite3.Connection, code: str) -> str:
    """Look a code up."""
    return code


@pytest.mark.parametrize("parameters", [
    {"type": "object", "properties": {"code": {"type": "string", "pattern": "(a)\\1"}}},  # a backreference
    {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(?!x)"}}},  # a lookahead
    {"type": "object", "patternProperties": {"^a": {}}, "unevaluatedProperties": False},
    {"type": "object", "properties": {"code": {"type": 5}}},
])
def test_a_schema_the_harness_cannot_check_is_refused_by_a_world_and_never_hangs(
        tmp_path: Path, parameters: JSONObject) -> None:
    assert schema_problem(parameters) is not None
    assert ToolSpec("t", "", parameters).check({"code": SLOW}) is None  # from a simulated world: not enforced
    world = World("registry", scenario="Registry", category="Business & Enterprise", domain="Registry",
                  description="Registry.", directory=tmp_path, main_tables=())
    with pytest.raises(ConfigError) as refused:
        world.tool(schema=parameters)(lookup)
    assert "registry" in str(refused.value) and "lookup" in str(refused.value) and world.tools == {}


def test_a_schema_reference_reaches_nothing_outside_the_schema(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"const": "s3cret-file-content"}')
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    for reference in (secret.as_uri(), f"http://127.0.0.1:{port}/schema.json"):
        problem = spec(code={"$ref": reference}).check({"code": 1})
        assert "s3cret" not in str(problem)
    with pytest.raises(BlockingIOError):
        listener.accept()  # no connection came
    listener.close()


def test_huge_arguments_come_back_clipped() -> None:
    problem = spec(n={"type": "integer"}).check({"n": "x" * 1_000_000})
    assert problem is not None and len(problem) < 1_000 and problem.endswith("is not of type 'integer'")
    assert len(tool_error("tool_error", "y" * 1_000_000)["message"]) < 3_000


def test_json_arguments() -> None:
    assert json_arguments("") == {} and json_arguments('{"a": [1, 2.5]}') == {"a": [1, 2.5]}
    for text, reason in (("{a: 1", "not valid JSON"), ("[1]", "not a JSON object but an array"),
                         ('"x"', "not a JSON object but a string"), ('{"a": NaN}', "NaN"),
                         ('{"a": -Infinity}', "Infinity"), ("1" * 5000, "too large"),
                         ("[" * 100_000 + "]" * 100_000, "too deep")):
        with pytest.raises(ValueError, match=reason):
            json_arguments(text)


class Toy(Environment):
    """Every way a tool can end."""

    def __init__(self, time_limit: float | None = None) -> None:
        self.time_limit = time_limit
        self.ran: list[str] = []

    def tools(self) -> list[ToolSpec]:
        return [ToolSpec(name, "", {"type": "object", "properties": {"n": {"type": "integer"}}}, writes=False)
                for name in TOY_TOOLS]

    def _call(self, name: str, arguments: JSONObject) -> Any:
        self.ran.append(name)
        return TOY_TOOLS[name]()


def _spin() -> None:
    while True:
        pass


def _stubborn() -> None:
    # Tool code that catches everything and raises something else: still a timeout.
    try:
        _spin()
    except BaseException:  # noqa: BLE001 - the point: even this does not escape the time limit
        raise RuntimeError("cleanup failed") from None


def _swallowing() -> None:
    # ``except Exception`` cannot swallow the interrupt.
    while True:
        try:
            _spin()
        except Exception:  # noqa: BLE001
            pass


def _raise(exc: BaseException) -> Callable[[], Any]:
    def tool() -> Any:
        raise exc
    return tool


TOY_TOOLS: dict[str, Callable[[], Any]] = {
    "listing": lambda: [1, 2], "record": lambda: {"ok": True}, "domain": _raise(ToolError("no such record")),
    "broken": _raise(KeyError("n")), "nan": lambda: {"x": float("nan")}, "bytes": lambda: {"x": b"raw"},
    "spin": _spin, "stubborn": _stubborn, "swallowing": _swallowing,
    "world": _raise(WorldError("the simulator stayed unparsable")), "endpoint": _raise(LLMUnavailableError("down")),
}


def test_one_error_shape() -> None:
    env = Toy(time_limit=0.2)
    assert env.call("listing", {}) == {"result": [1, 2]} and env.call("record", {"n": 1}) == {"ok": True}
    assert env.call("domain", {}) == {"error": "tool_error", "message": "no such record"}
    assert env.call("broken", {}) == {"error": "tool_failed", "message": "KeyError: 'n'"}
    # What reaches the agent is strict JSON: values JSON cannot hold are replaced, marked, not sent as they are.
    assert env.call("nan", {}) == {"x": "NaN"} and env.call("bytes", {}) == {"x": "b'raw'"}
    for name in ("spin", "stubborn", "swallowing"):
        assert env.call(name, {}) == {"error": "timeout", "message": f"{name}: the call did not finish within 0.2 s"}
    assert env.call("record", {}) == {"ok": True}  # the episode goes on
    assert env.call("nope", {}) == {"error": "unknown_tool", "message": "there is no tool named 'nope'; available: "
                                    "broken, bytes, domain, endpoint, listing, nan, record, spin, stubborn, "
                                    "swallowing, world"}
    assert env.call("record", {"n": "1"})["error"] == "invalid_arguments"
    assert env.call("record", [])["error"] == "invalid_arguments"  # type: ignore[arg-type]
    assert "nope" not in env.ran and env.ran.count("record") == 2


def test_environment_failures_propagate() -> None:
    env = Toy(time_limit=5)
    with pytest.raises(WorldError, match="unparsable"):
        env.call("world", {})
    with pytest.raises(LLMUnavailableError):
        env.call("endpoint", {})


def test_a_slow_sqlite_query_is_interrupted() -> None:
    db = sqlite3.connect(":memory:")
    db.set_progress_handler(time_is_up, 1000)
    db.execute("CREATE TABLE t (x)")
    with pytest.raises(TimeLimitExceeded):
        with db:  # as an executable world runs a tool: in a transaction
            call_with_time_limit(lambda: (db.execute("INSERT INTO t VALUES (1)"), db.execute(NEVER_ENDS).fetchall()),
                                 0.2)
    assert db.execute("SELECT COUNT(*) FROM t").fetchone() == (0,)  # rolled back
    assert not time_is_up() and db.execute("SELECT 1 + 1").fetchone() == (2,)


def test_an_interrupt_never_lands_after_the_call_returned() -> None:
    # Limits so short that many expire just as the call ends: each call returns or times out, and nothing is left
    # pending to surface later in the caller's own code.
    outcomes: set[object] = set()
    for _ in range(300):
        try:
            outcomes.add(call_with_time_limit(lambda: sum(range(3_000)), 0.0001))
        except TimeLimitExceeded:
            outcomes.add("timeout")
        assert sum(range(3_000)) == 4_498_500  # Python code of the caller's, where a stray interrupt would land
    assert outcomes <= {4_498_500, "timeout"}
    assert call_with_time_limit(lambda: "done", None) == "done"


def test_a_limited_call_inside_another_runs_under_the_outer_limit() -> None:
    with pytest.raises(TimeLimitExceeded, match="0.2 s"):
        call_with_time_limit(lambda: call_with_time_limit(_spin, 3600), 0.2)
    assert not time_is_up()


def test_time_limits_are_per_thread() -> None:
    results: dict[str, Any] = {}

    def run(name: str, function: Callable[[], Any], limit: float) -> None:
        try:
            results[name] = call_with_time_limit(function, limit)
        except TimeLimitExceeded:
            results[name] = "timeout"

    threads = [threading.Thread(target=run, args=("spin", _spin, 0.2)),
               threading.Thread(target=run, args=("quick", lambda: "ok", 60))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {"spin": "timeout", "quick": "ok"}


# -- every tool of every world, with wrong arguments ---------------------------------------------------------------

WRONG = [123, 1.0, True, None, [], {}, "x", "", float("nan"), 10 ** 40, "\ud800", "y" * 1_000_000, nested(10_000),
         {"deep": nested(50)}]


def _valid(schema: dict[str, Any]) -> Any:
    if "enum" in schema:
        return schema["enum"][0]
    samples: dict[Any, Any] = {"integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {}}
    return samples.get(schema.get("type"), "x")


def hostile_calls(tool: ToolSpec) -> Iterator[Any]:
    properties: dict[str, Any] = tool.parameters.get("properties", {})
    good = {name: _valid(schema) for name, schema in properties.items()}
    yield from ({}, {**good, "unexpected": 1}, [], "x", None, [good])
    for name in properties:
        yield {key: value for key, value in good.items() if key != name}
        for value in WRONG:
            yield {**good, name: value}


def assert_contract(env: Environment) -> None:
    """Every answer to a hostile call is an observation (a JSON object), and every error has the contract's shape."""
    tools = env.tools()
    assert tools and all(isinstance(tool, ToolSpec) for tool in tools)
    for tool in tools:
        for arguments in hostile_calls(tool):
            env.reset()  # each call on a fresh world: a finished day or a closed record would hide the next ones
            observation = env.call(tool.name, arguments)
            assert isinstance(observation, dict)
            json.dumps(observation, allow_nan=False)
            if "error" in observation:
                assert set(observation) == {"error", "message"} and observation["error"] in KINDS, \
                    (tool.name, observation)
    assert env.call("no_such_tool", {})["error"] == "unknown_tool"


def test_every_workplace_tool_answers_wrong_arguments_with_an_observation(tmp_path: Path) -> None:
    env = played(generate_day(3, 2), tmp_path / "day")
    assert_contract(env)
    read = next(tool for tool in env.tools() if tool.name == "read_file")
    for arguments in hostile_calls(read):  # rejected calls cost no time
        before = env.now
        if env.call("read_file", arguments).get("error") == "invalid_arguments":
            assert env.now == before


@pytest.mark.parametrize("name", world_names())
def test_every_executable_tool_answers_wrong_arguments_with_an_observation(name: str) -> None:
    assert_contract(ExecutableEnvironment(load_world(name)))


def test_every_simulated_tool_answers_wrong_arguments_with_an_observation(small_data: Path,
                                                                           server: MockLLMServer) -> None:
    registry = WorldModelRegistry(small_data / "world_model_configs")
    for name in registry.list_environments():
        assert_contract(SimulatedEnvironment(registry.get(name), create_client("k", server.base_url), "world"))
