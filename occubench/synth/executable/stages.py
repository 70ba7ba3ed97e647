"""The five stages of an executable world, as the model is asked for them: the tasks, the schema, the seed rows, the
tools, and per task the checks with a reference and a wrong solution. Each answer is then executed (see
:mod:`occubench.synth.executable.pipeline`); what fails comes back in the inputs of the next ask, as
``previous_answer`` and ``problems``."""

from __future__ import annotations

from typing import Any

from occubench.core.task import CATEGORY_ABBREVIATIONS
from occubench.executable.validate import MIN_CALLS, MIN_ROWS, MIN_TOOLS
from occubench.synth.engine import Stage

_COMMON = """You are building an executable environment for evaluating AI agents at professional work: a SQLite \
database, tools that are Python functions over it, and tasks whose outcome code checks in the database. Everything \
you write is executed: tables created, rows inserted, tools called, checks run.
If the input holds `problems`, your `previous_answer` failed with them when it was executed: reply with the whole \
answer again, corrected."""

_ID = "^[a-z][a-z0-9_]{2,47}$"


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": list(properties), "properties": properties}


def _text(limit: int) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": limit}


def _list(items: dict[str, Any], most: int, least: int = 1) -> dict[str, Any]:
    return {"type": "array", "items": items, "minItems": least, "maxItems": most}


_CALLS = _list(_object({"tool": _text(100), "arguments": {"type": "object"}}), 30)

TASKS = Stage(
    name="tasks", max_asks=3,
    instructions=f"""{_COMMON}

Stage 1 of 5: from the scenario, design one environment and the tasks users will ask agents to do in it.
- name: the environment's identifier, snake_case, 3 to 48 characters (its folder name).
- category: one of OccuBench's ten (`category` if the input gives one); domain: the profession or sector.
- description: one or two sentences on what the environment holds and what happens in it.
- tasks: exactly `tasks` tasks with the `difficulties` given, in that order. Each: id (snake_case), difficulty \
(1: one change after a lookup; 2: several related changes, or a choice among records by a rule; 3: a policy applied \
across records, with exceptions), requirement: what the user asks for, concretely, as a functional requirement. \
Every task changes the stored state (a read alone is not a task) in a way that can be checked in the database.
When the input gives `variant` of `variants`, make this variant clearly different from the others (another \
organisation, other workflows).""",
    schema=_object({
        "name": {"type": "string", "pattern": _ID},
        "category": {"type": "string", "enum": list(CATEGORY_ABBREVIATIONS)},
        "domain": _text(100),
        "description": _text(1000),
        "tasks": _list(_object({"id": {"type": "string", "pattern": _ID},
                                "difficulty": {"type": "integer", "minimum": 1, "maximum": 3},
                                "requirement": _text(2000)}), 30),
    }))

SCHEMA = Stage(
    name="schema", max_asks=3,
    instructions=f"""{_COMMON}

Stage 2 of 5: write the SQLite schema that holds everything the tasks read and change.
- tables: 3 to 10, each as its name and `ddl`, one CREATE TABLE statement (no other statement: no index, trigger or \
view). Give every table a primary key; TEXT ids with a readable prefix (e.g. 'CLM-1001') for records people name; \
NOT NULL where a value is required, CHECK (... IN (...)) for enumerations, REFERENCES for foreign keys.
- main_tables: the tables at the heart of the tasks; each will be seeded with at least {MIN_ROWS} rows.""",
    schema=_object({
        "tables": _list(_object({"name": {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_]{0,62}$"},
                                 "ddl": _text(10_000)}), 20),
        "main_tables": _list({"type": "string"}, 6),
    }))

_SCALAR = {"type": ["string", "number", "integer", "boolean", "null"], "maxLength": 2000}

SEED = Stage(
    name="seed", max_asks=3,
    instructions=f"""{_COMMON}

Stage 3 of 5: write the rows the database starts with.
- tables: per table its name, `columns` and `rows` (each row the values of those columns, in order). Every main \
table gets at least `min_rows` rows; the others as many as make sense. Realistic, varied values; every reference \
points at a row that exists; every constraint holds. Each row is inserted on its own: when more than 10 % fail, the \
whole seed is asked for again.
- Include the records each task needs in the state BEFORE the task is done: the data must not already satisfy any \
task (a claim to approve is still open), or its checks would pass for an agent that does nothing.""",
    schema=_object({
        "tables": _list(_object({"table": _text(100), "columns": _list({"type": "string"}, 60),
                                 "rows": _list(_list(_SCALAR, 60), 300, 0)}), 20),
    }))

TOOLS = Stage(
    name="tools", max_asks=3,
    instructions=f"""{_COMMON}

Stage 4 of 5: write the tools agents use, at least {MIN_TOOLS}, covering every task's reads and writes: searches \
and lists with filters, reading one record, and the actions that change state (at least one tool that reads and one \
that writes). Each tool is one Python function, in its own `source`, for example:

def approve_claim(db: sqlite3.Connection, claim_id: str, amount: float, reason: str | None = None) -> dict[str, Any]:
    \"\"\"Approve an open claim for a payable amount.

    Args:
        claim_id: The claim, e.g. CLM-1001.
        amount: The amount to pay.
        reason: Why it is approved.
    \"\"\"
    claim = found(db, "SELECT * FROM claims WHERE claim_id = ?", claim_id, missing=f"claim {{claim_id}} not found")
    if claim["status"] != "open":
        raise ToolError(f"claim {{claim_id}} is {{claim['status']}}, not open")
    db.execute("UPDATE claims SET status = 'approved', approved_amount = ? WHERE claim_id = ?", (amount, claim_id))
    return {{"claim_id": claim_id, "status": "approved", "approved_amount": amount}}

Rules:
- the first parameter is `db`, the database connection (rows come back as sqlite3.Row); every other parameter is \
typed (str, int, float, bool, list[str], Literal["a", "b"], or X | None = None when optional) and described under \
Args:; return a dict. `writes` is true for a tool that changes the database, false for one that only reads.
- SQL is parameterised (? placeholders), never built from arguments. Raise ToolError(message) for a domain failure \
(a record not found, a rule broken): the agent sees the message.
- Use only: sqlite3, re, math, json, datetime, Any, Literal, ToolError, the other tools by name, and the helpers \
rows(db, sql, *params) -> list of dicts, one(db, sql, *params) -> dict or None, found(db, sql, *params, \
missing=message) -> dict (or ToolError), scalar(db, sql, *params) -> one value, next_id(db, table, column, prefix, \
start) -> the next id such as 'CLM-1017'. No imports, no classes, no open, eval, exec, getattr or other \
introspection, no name or attribute beginning with an underscore, no str.format (use f-strings), no \
db.commit/rollback/close (each call is its own transaction).
- sample_arguments: arguments with which the tool succeeds on the seed data; each tool is called once with them, \
on a fresh copy of the database.""",
    schema=_object({
        "tools": _list(_object({"name": {"type": "string", "pattern": "^[a-z][a-z0-9_]{1,47}$"},
                                "writes": {"type": "boolean"}, "source": _text(20_000),
                                "sample_arguments": {"type": "object"}}), 40),
    }))

CHECKS = Stage(
    name="checks", max_asks=3,
    instructions=f"""{_COMMON}

Stage 5 of 5, for one task: the instruction the agent gets, code that verifies the outcome, a reference solution and \
a plausible wrong one.
- instruction: the task as the user asks it, with the concrete ids and values of the seed data.
- verify_source: one function `verify_<task id>(initial: sqlite3.Connection, final: sqlite3.Connection, answer: \
str) -> list[Check]`, comparing the database before and after the agent's work (and its final answer where the \
task asks for information). Each Check(name, passed, message) is one thing that must hold, e.g. \
Check("CLM-1004 approved", claim["status"] == "approved", f"status is {{claim['status']}}"). Helpers: rows, one, \
scalar (as for the tools), only_changed(initial, final, table, key_column, allowed_keys) -> a Check that no other \
row of the table changed, mentions_number(answer, value) -> whether the answer states the number. The same rules \
as for the tools: no imports, no underscores, no str.format.
- The checks must FAIL on the untouched initial database (even with the reference answer), PASS after the reference \
solution, and FAIL after doing nothing and after the wrong solution.
- reference: at least {MIN_CALLS} tool calls (look things up, then change them), each of which succeeds, then \
`answer`, the final reply. wrong: the calls of a plausible mistake (the wrong record, the wrong amount, a rule \
ignored), then `wrong_answer`.
- rubric: one or two sentences for a human judge: what must be true at the end, and why.""",
    schema=_object({
        "instruction": _text(3000), "verify_source": _text(20_000), "reference": _CALLS, "answer": _text(3000),
        "wrong": _CALLS, "wrong_answer": _text(3000), "rubric": _text(2000),
    }))
