"""The executable-world contract: schemas from signatures, isolated instances, validated arguments, transactional
tools (a failing or timed-out one changes nothing), state diffs, and databases that reach no file and call no SQL
function, PRAGMA or virtual table outside their allow-lists."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Literal

import pytest

from occubench.errors import ConfigError
from occubench.executable import (
    ExecutableEnvironment,
    ToolError,
    World,
    derive_schema,
    found,
    mentions_number,
    next_id,
    one,
    rows,
    scalar,
)
from occubench.synth.executable import probe


def make_world(tmp_path: Path) -> World:
    (tmp_path / "schema.sql").write_text("CREATE TABLE stock (sku TEXT PRIMARY KEY, qty INTEGER NOT NULL);"
                                         "CREATE TABLE log (id INTEGER PRIMARY KEY AUTOINCREMENT, note TEXT);")
    (tmp_path / "seed.sql").write_text("INSERT INTO stock VALUES ('A', 5), ('B', 0);")
    world = World("toy", scenario="Toy Stock", category="Transportation & Logistics", domain="Warehousing",
                  description="two SKUs", directory=tmp_path, main_tables=("stock",))

    @world.tool
    def get(db: sqlite3.Connection, sku: str) -> dict[str, Any]:
        """Read one SKU.

        Args:
            sku: The SKU code.
        """
        found = rows(db, "SELECT * FROM stock WHERE sku = ?", sku)
        if not found:
            raise ToolError(f"no SKU {sku}")
        return found[0]

    @world.tool(writes=True)
    def move(db: sqlite3.Connection, source: str, target: str, qty: int) -> dict[str, Any]:
        """Move units between SKUs; fails after the first update when the source runs short."""
        db.execute("UPDATE stock SET qty = qty + ? WHERE sku = ?", (qty, target))
        if rows(db, "SELECT qty FROM stock WHERE sku = ?", source)[0]["qty"] < qty:
            raise ToolError("not enough stock")
        db.execute("UPDATE stock SET qty = qty - ? WHERE sku = ?", (qty, source))
        db.execute("INSERT INTO log (note) VALUES (?)", (f"{qty} {source}->{target}",))
        return {"ok": True}

    @world.tool
    def sneaky(db: sqlite3.Connection, path: str) -> dict[str, Any]:
        """A buggy tool that puts its input into SQL text."""
        db.execute(f"ATTACH DATABASE '{path}' AS other")
        return {}

    @world.tool
    def broken(db: sqlite3.Connection) -> list[int]:
        """Raises an unexpected error."""
        return [1 // 0]
    return world


def test_schemas_come_from_signatures_and_docstrings() -> None:
    def tool(db: sqlite3.Connection, name: str, count: int, ratio: float = 1.0, flag: bool | None = None,
             kind: Literal["a", "b"] = "a", tags: list[str] | None = None) -> dict[str, Any]:
        """Do a thing.

        Longer text.

        Args:
            name: The name,
                spanning two lines.
            count: How many.
        """
        return {}
    schema = derive_schema(tool, "tool")["function"]
    assert schema["name"] == "tool" and schema["description"] == "Do a thing."
    parameters = schema["parameters"]
    assert parameters["required"] == ["name", "count"] and parameters["additionalProperties"] is False
    assert parameters["properties"] == {
        "name": {"type": "string", "description": "The name, spanning two lines."},
        "count": {"type": "integer", "description": "How many."}, "ratio": {"type": "number"},
        "flag": {"type": "boolean"}, "kind": {"type": "string", "enum": ["a", "b"]},
        "tags": {"type": "array", "items": {"type": "string"}}}


def test_instances_are_isolated_and_reset(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    first, second = ExecutableEnvironment(world), ExecutableEnvironment(world)
    assert first.call("move", {"source": "A", "target": "B", "qty": 2}) == {"ok": True}
    assert first.call("get", {"sku": "B"})["qty"] == 2 and second.call("get", {"sku": "B"})["qty"] == 0
    assert first.state_diff() == {
        "log": {"inserted": [{"id": 1, "note": "2 A->B"}], "deleted": [], "updated": []},
        "stock": {"inserted": [], "deleted": [],
                  "updated": [{"key": ["A"], "changes": {"qty": [5, 3]}}, {"key": ["B"], "changes": {"qty": [0, 2]}}]}}
    first.reset()
    assert first.call("get", {"sku": "B"})["qty"] == 0 and first.state_diff() == {}
    assert [(t.name, t.writes) for t in first.tools()] == [("get", False), ("move", True), ("sneaky", False),
                                                          ("broken", False)]
    assert first.tools()[0].schema()["function"]["parameters"]["required"] == ["sku"]


def test_every_failure_is_an_observation_and_changes_nothing(tmp_path: Path) -> None:
    env = ExecutableEnvironment(make_world(tmp_path))
    assert env.call("get", {"sku": "Z"}) == {"error": "tool_error", "message": "no SKU Z"}
    assert env.call("nope", {})["error"] == "unknown_tool"
    bad = env.call("move", {"source": "A", "qty": "two", "extra": 1})
    assert bad["error"] == "invalid_arguments"
    assert "'target' is a required property" in bad["message"] and "qty: 'two' is not of type 'integer'" in \
        bad["message"] and "Additional properties are not allowed" in bad["message"]
    assert env.call("move", {"source": "A", "target": "B", "qty": 1.0})["error"] == "invalid_arguments"
    # The first UPDATE ran before the tool failed: the transaction takes it back.
    assert env.call("move", {"source": "B", "target": "A", "qty": 1}) == {"error": "tool_error",
                                                                         "message": "not enough stock"}
    assert env.call("broken", {}) == {"error": "tool_failed",
                                      "message": "ZeroDivisionError: integer division or modulo by zero"}
    assert env.state_diff() == {}


def test_a_timed_out_tool_changes_nothing_and_the_episode_goes_on(tmp_path: Path) -> None:
    world = make_world(tmp_path)

    @world.tool(writes=True)
    def spin(db: sqlite3.Connection, sku: str) -> dict[str, Any]:
        """Empties a SKU, then loops forever in Python."""
        db.execute("UPDATE stock SET qty = 0 WHERE sku = ?", (sku,))
        while True:
            pass

    @world.tool(writes=True)
    def crawl(db: sqlite3.Connection, sku: str) -> dict[str, Any]:
        """Empties a SKU, then runs a query that never ends (C code, out of reach of a Python exception)."""
        db.execute("UPDATE stock SET qty = 0 WHERE sku = ?", (sku,))
        return one(db, "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n") or {}

    env = ExecutableEnvironment(world, time_limit=0.2)
    for tool in ("spin", "crawl"):
        observation = env.call(tool, {"sku": "A"})
        assert observation["error"] == "timeout" and tool in observation["message"], observation
        assert env.state_diff() == {}
        # The next call runs normally: nothing of the interrupt is left over.
        assert env.call("move", {"source": "A", "target": "B", "qty": 1}) == {"ok": True}
        env.reset()


def test_declared_schemas_replace_derived_ones(tmp_path: Path) -> None:
    world = make_world(tmp_path)

    @world.tool(schema={"type": "object", "properties": {"skus": {"type": "array", "items": {"type": "string"}}},
                        "required": ["skus"]})
    def count(db: sqlite3.Connection, skus: list[str]) -> dict[str, Any]:
        """Count SKUs."""
        return {"count": len(skus)}

    env = ExecutableEnvironment(world)
    assert env.call("count", {"skus": ["A", "B"]}) == {"count": 2}
    assert env.call("count", {"skus": [1]}) == {"error": "invalid_arguments",
                                                "message": "skus.0: 1 is not of type 'string'"}


def test_the_database_cannot_reach_files(tmp_path: Path) -> None:
    env = ExecutableEnvironment(make_world(tmp_path))
    target = tmp_path / "stolen.db"
    observation = env.call("sneaky", {"path": str(target)})
    assert observation["error"] == "tool_failed" and "not authorized" in observation["message"]
    assert not target.exists()


def test_vacuum_into_a_file_is_refused(tmp_path: Path) -> None:
    # VACUUM, into a file or not, asks the authorizer for an ATTACH of the file it is to write (as it runs).
    db = make_world(tmp_path).instance()
    with pytest.raises(sqlite3.DatabaseError, match="authorization denied"):
        db.execute("VACUUM INTO ?", (str(tmp_path / "copy.db"),))
    assert not (tmp_path / "copy.db").exists()
    sqlite3.connect(":memory:").execute("VACUUM INTO ?", (str(tmp_path / "plain.db"),))
    assert (tmp_path / "plain.db").exists()  # what is refused: an unguarded database writes the file


REFUSED_SQL = [
    "SELECT fts3_tokenizer('simple')",  # the address of a C struct of function pointers, which a second form sets
    "SELECT load_extension('/tmp/evil.so')",
    "SELECT sqlite_compileoption_get(0)",
    "PRAGMA writable_schema = ON",
    "PRAGMA trusted_schema = ON",
    "CREATE VIRTUAL TABLE docs USING fts5(body)",
    "ATTACH DATABASE ':memory:' AS other",
]


@pytest.mark.parametrize("sql", REFUSED_SQL)
def test_functions_pragmas_and_virtual_tables_outside_the_allow_lists_are_refused(tmp_path: Path, sql: str) -> None:
    db = make_world(tmp_path).instance()
    with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
        db.execute(sql)


def test_a_refused_pragma_changes_nothing(tmp_path: Path) -> None:
    db = make_world(tmp_path).instance()
    db.execute("CREATE TABLE holds (sku TEXT REFERENCES stock (sku))")
    with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
        db.execute("PRAGMA foreign_keys = OFF")
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
        db.execute("INSERT INTO holds VALUES ('no such sku')")


def test_tool_sql_calls_sqlite_functions_on_values(tmp_path: Path) -> None:
    db = make_world(tmp_path).instance()
    row = db.execute("SELECT upper(lower(sku)), round(qty * 1.55, 1), coalesce(NULL, qty), "
                     "date('2024-01-31', '+1 day'), json_extract(json_object('q', qty), '$.q'), printf('%03d', qty), "
                     "rank() OVER (ORDER BY qty) FROM stock WHERE sku LIKE 'a'").fetchone()
    assert tuple(row) == ("A", 7.8, 5, "2024-02-01", 5, "005", 1)
    assert tuple(db.execute("SELECT count(*), sum(qty), group_concat(sku, '+') FROM stock").fetchone()) == (2, 5, "A+B")


@pytest.mark.parametrize(("seed", "refused"), [
    ("SELECT fts3_tokenizer('simple');", "seed.sql: not authorized to use function: fts3_tokenizer"),
    # A DEFAULT clause is never shown to the authorizer: with trusted_schema off it may call only the functions
    # SQLite marks innocuous, and fts5_source_id is not one.
    ("CREATE TABLE made (x DEFAULT (fts5_source_id())); INSERT INTO made DEFAULT VALUES;", "seed.sql: .*fts5_source"),
])
def test_a_world_whose_sql_calls_a_refused_function_does_not_build(tmp_path: Path, seed: str, refused: str) -> None:
    world = make_world(tmp_path)
    (tmp_path / "seed.sql").write_text(seed)
    with pytest.raises(ConfigError, match=refused):
        world.tables()


def test_the_fts3_tokenizer_exploit_is_refused_and_the_process_lives(tmp_path: Path) -> None:
    # Unguarded, the first statement leaks a pointer, and the other two make SQLite call a function at
    # 0x4141414141414141 (SIGSEGV): a child process runs them, from a world's seed.sql and from a tool's SQL.
    exploit = ["SELECT fts3_tokenizer('simple')", "SELECT fts3_tokenizer('simple', x'4141414141414141')",
               "CREATE VIRTUAL TABLE t USING fts3(x, tokenize=simple)"]
    for name, seed in (("plain", ""), ("hostile", ";\n".join(exploit) + ";\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "schema.sql").write_text("CREATE TABLE stock (sku TEXT PRIMARY KEY);")
        (tmp_path / name / "seed.sql").write_text(seed)
    script = textwrap.dedent("""
        import sqlite3, sys
        from occubench.errors import ConfigError
        from occubench.executable.world import World

        def world(folder):
            return World(folder, scenario="s", category="Transportation & Logistics", domain="d", description="d",
                         directory=folder, main_tables=())

        try:
            world(sys.argv[1]).tables()
        except ConfigError as exc:
            print("refused:", str(exc).partition("seed.sql: ")[2])
        db = world(sys.argv[2]).instance()
        for sql in sys.argv[3:]:
            try:
                db.execute(sql)
            except sqlite3.DatabaseError as exc:
                print("refused:", exc)
        """)
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "hostile"), str(tmp_path / "plain"), *exploit],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    refused = "refused: not authorized to use function: fts3_tokenizer"
    assert done.stdout.splitlines() == [refused, refused, refused, "refused: not authorized"]


def test_synthesis_scratch_databases_are_held_to_the_same_authorizer() -> None:
    ddl = "CREATE TABLE t (x TEXT CHECK (fts3_tokenizer('simple') IS NOT NULL))"
    problems = probe.schema({"tables": [["t", ddl]]})["problems"]
    assert problems == ["table t: not authorized to use function: fts3_tokenizer"]


def test_mentions_number() -> None:
    assert mentions_number("Paid $7,850.00 in total", 7850)
    assert mentions_number("ratio 0.42", 0.42) and not mentions_number("paid 785", 7850)
    assert mentions_number("reverse APP-3006 now", 3006) and mentions_number("a loss of -12.5", -12.5)
    assert not mentions_number("raised to SEV1", 1) and not mentions_number("APP-3006", -3006)


def test_query_helpers() -> None:
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row
    db.executescript("CREATE TABLE t (k TEXT, v INTEGER); INSERT INTO t VALUES ('a', 2), ('b', 3);")
    assert scalar(db, "SELECT SUM(v) FROM t") == 5 and scalar(db, "SELECT MAX(v) FROM t WHERE k = 'z'") is None
    assert one(db, "SELECT * FROM t WHERE k = ?", "b") == {"k": "b", "v": 3}
    assert one(db, "SELECT * FROM t WHERE k = ?", "z") is None
    db.execute("CREATE TABLE o (id TEXT)")
    assert next_id(db, "o", "id", "WO-", 3300) == "WO-3301"
    db.executemany("INSERT INTO o VALUES (?)", [("WO-3302",), ("WO-3310",), ("WO-3309",)])
    assert next_id(db, "o", "id", "WO-", 3300) == "WO-3311"
    with pytest.raises(ToolError, match="no row z"):
        found(db, "SELECT * FROM t WHERE k = ?", "z", missing="no row z")


def test_category_must_be_one_of_occubench(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not one of OccuBench's ten"):
        World("x", scenario="x", category="Mining", domain="x", description="x", directory=tmp_path, main_tables=())
