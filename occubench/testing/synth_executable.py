"""The mock server's answers to the executable-world synthesis stages (see :mod:`occubench.testing.synth`).

Whatever the scenario, the mock builds one kind of world: a case desk with ``cases`` (16 rows), ``staff`` (15) and
``notes``, six tools (search, read, list staff; assign, resolve, set priority) and tasks cycling through three
templates: resolve a case with a note (difficulty 1), assign a case (2), escalate a case — high priority and an owner
(3). Task ``k`` works on case ``CASE-{1000 + k}`` (wrapping at 16) and staff member ``ST-{k:02d}`` (wrapping at 15).
Everything follows from the inputs, so it passes ``occubench validate`` unless the script says otherwise.

Faults, switched on by keys of the script. Each applies to the first ask of its stage and is corrected when the
inputs carry ``problems`` (the pipeline's feedback round), unless the fault is listed in ``"uncorrected"``:

- ``"invalid_ddl": true``: the ``cases`` statement has a syntax error (schema stage);
- ``"failing_inserts": true``: 5 of 36 seed rows break a CHECK constraint (over 10 %: the seed is asked again);
  ``"few"``: 2 of 33 do (under 10 %: those rows are left out and the seed kept);
- ``"raising_tool": true``: ``get_case`` reads a column that does not exist and raises (tools stage);
- ``"hostile": "open_file" | "socket" | "endless_loop" | "memory_bomb" | "environ_escape"``: ``get_case`` opens
  /etc/passwd, imports socket, loops for ever, allocates 8 GB, or reads the environment through a module held in a
  list (tools stage);
- ``"leak": text``: ``get_case`` raises a tool error saying ``text`` (tools stage), as code that found a secret
  would report it;
- ``"passes_initially": true | [task numbers]``: those tasks' checks look only at what already holds in the seed
  data, so they pass on the untouched initial database (checks stage);
- ``"wrong_passes": true | [task numbers]``: the wrong solution is the reference one, so it passes;
- ``"uncorrected": ["raising_tool", ...]``: these faults stay in every answer, so the item is dropped.
"""

from __future__ import annotations

import re
from typing import Any

from occubench.testing.synth import Handler

CASES, STAFF = 16, 15
_KINDS = {1: "resolve_case", 2: "assign_case", 3: "escalate_case"}


def _fault(name: str, inputs: dict[str, Any], script: dict[str, Any]) -> Any:
    """The fault's scripted value if it applies to this ask, else None."""
    value = script.get(name)
    if not value or ("problems" in inputs and name not in script.get("uncorrected", ())):
        return None
    return value


def _tasks(inputs: dict[str, Any], script: dict[str, Any]) -> dict[str, Any]:
    scenario = str(inputs.get("scenario") or "world")
    name = re.sub(r"[^a-z0-9]+", "_", scenario.lower()).strip("_")[:40]
    name = name if re.fullmatch(r"[a-z][a-z0-9_]{2,}", name) else f"world_{name}"
    if inputs.get("variant"):
        name = f"{name}_v{inputs['variant']}"
    tasks = []
    for number, difficulty in enumerate(inputs.get("difficulties") or [1, 2, 3], start=1):
        case, staff = _targets(number)
        what = {1: f"Resolve {case} and leave a note saying what was done.",
                2: f"Assign {case} to {staff}.",
                3: f"Escalate {case}: set its priority to high and assign it to {staff}."}[difficulty]
        tasks.append({"id": f"{_KINDS[difficulty]}_{number}", "difficulty": difficulty, "requirement": what})
    return {"name": name, "category": inputs.get("category") or "Business & Enterprise", "domain": "Case handling",
            "description": f"A case desk for {scenario}: cases to assign, escalate and resolve.", "tasks": tasks}


def _targets(number: int) -> tuple[str, str]:
    return f"CASE-{1000 + (number - 1) % CASES + 1}", f"ST-{(number - 1) % STAFF + 1:02d}"


_DDL = {
    "staff": "CREATE TABLE staff (staff_id TEXT PRIMARY KEY, name TEXT NOT NULL, team TEXT NOT NULL, "
             "open_cases INTEGER NOT NULL)",
    "cases": "CREATE TABLE cases (case_id TEXT PRIMARY KEY, title TEXT NOT NULL, category TEXT NOT NULL CHECK "
             "(category IN ('billing', 'access', 'hardware')), priority TEXT NOT NULL CHECK (priority IN ('low', "
             "'normal', 'high')), status TEXT NOT NULL CHECK (status IN ('open', 'resolved', 'closed')), owner_id "
             "TEXT REFERENCES staff(staff_id), amount REAL NOT NULL)",
    "notes": "CREATE TABLE notes (note_id INTEGER PRIMARY KEY AUTOINCREMENT, case_id TEXT NOT NULL REFERENCES "
             "cases(case_id), text TEXT NOT NULL)",
}


def _schema(inputs: dict[str, Any], script: dict[str, Any]) -> dict[str, Any]:
    tables = [{"name": name, "ddl": ddl} for name, ddl in _DDL.items()]
    if _fault("invalid_ddl", inputs, script):
        tables[1]["ddl"] = tables[1]["ddl"].replace("PRIMARY KEY,", "PRIMARY KEY,,")
    return {"tables": tables, "main_tables": ["cases", "staff"]}


def _seed(inputs: dict[str, Any], script: dict[str, Any]) -> dict[str, Any]:
    teams = ("billing", "access", "hardware")
    staff = [[f"ST-{i:02d}", f"Staff member {i}", teams[i % 3], i % 4] for i in range(1, STAFF + 1)]
    cases = [[f"CASE-{1000 + i}", f"Case {i}", teams[i % 3], "normal", "open", None, 100.0 * i]
             for i in range(1, CASES + 1)]
    failing = _fault("failing_inserts", inputs, script)
    if failing:  # status 'pending' breaks the CHECK constraint
        cases += [[f"CASE-{2000 + i}", "Bad", "billing", "normal", "pending", None, 1.0]
                  for i in range(2 if failing == "few" else 5)]
    columns = {"staff": ["staff_id", "name", "team", "open_cases"],
               "cases": ["case_id", "title", "category", "priority", "status", "owner_id", "amount"]}
    return {"tables": [{"table": "staff", "columns": columns["staff"], "rows": staff},
                       {"table": "cases", "columns": columns["cases"], "rows": cases}]}


_HEAD = '''def get_case(db: sqlite3.Connection, case_id: str) -> dict[str, Any]:
    """Everything recorded about one case, with its notes.

    Args:
        case_id: Case identifier, e.g. CASE-1001.
    """
'''
_GET_CASE = {
    None: '''    case = found(db, "SELECT * FROM cases WHERE case_id = ?", case_id, missing=f"case {case_id} not found")
    return {**case, "notes": rows(db, "SELECT text FROM notes WHERE case_id = ? ORDER BY note_id", case_id)}
''',
    "raising_tool": '''    case = found(db, "SELECT * FROM cases WHERE case_id = ?", case_id, missing="no such case")
    return {"case_id": case_id, "escalation": case["escalation_level"]}
''',
    "open_file": '''    secrets = open("/etc/passwd").read()
    return {"case_id": case_id, "secrets": secrets}
''',
    "socket": '''    import socket
    return {"case_id": case_id, "host": socket.gethostname()}
''',
    "endless_loop": '''    while True:
        case_id = case_id + ""
''',
    "memory_bomb": '''    blob = [0] * (10 ** 9)
    return {"case_id": case_id, "size": len(blob)}
''',
    "environ_escape": '''    import json
    return {"case_id": case_id, "environment": str([json][0].codecs.sys.modules["os"].environ)}
''',
}
_TOOLS = [
    ("search_cases", False, {"status": "open"}, '''def search_cases(db: sqlite3.Connection, status: str | None = None,
                 category: str | None = None) -> dict[str, Any]:
    """List cases, optionally filtered.

    Args:
        status: open, resolved or closed.
        category: billing, access or hardware.
    """
    found_rows = rows(db, "SELECT case_id, title, category, priority, status, owner_id, amount FROM cases "
                          "WHERE (? IS NULL OR status = ?) AND (? IS NULL OR category = ?) ORDER BY case_id",
                      status, status, category, category)
    return {"cases": found_rows, "count": len(found_rows)}
'''),
    ("list_staff", False, {}, '''def list_staff(db: sqlite3.Connection, team: str | None = None) -> dict[str, Any]:
    """Staff members with their team and current number of open cases.

    Args:
        team: billing, access or hardware.
    """
    return {"staff": rows(db, "SELECT * FROM staff WHERE (? IS NULL OR team = ?) ORDER BY staff_id", team, team)}
'''),
    ("assign_case", True, {"case_id": "CASE-1016", "staff_id": "ST-01"}, '''def assign_case(db: sqlite3.Connection,
                case_id: str, staff_id: str) -> dict[str, Any]:
    """Make a staff member responsible for a case; their open-case count goes up by one.

    Args:
        case_id: The case to assign.
        staff_id: The staff member, e.g. ST-01.
    """
    case = found(db, "SELECT * FROM cases WHERE case_id = ?", case_id, missing=f"case {case_id} not found")
    found(db, "SELECT 1 FROM staff WHERE staff_id = ?", staff_id, missing=f"staff member {staff_id} not found")
    if case["owner_id"] == staff_id:
        return {"case_id": case_id, "owner_id": staff_id, "changed": False}
    if case["owner_id"]:
        db.execute("UPDATE staff SET open_cases = open_cases - 1 WHERE staff_id = ?", (case["owner_id"],))
    db.execute("UPDATE staff SET open_cases = open_cases + 1 WHERE staff_id = ?", (staff_id,))
    db.execute("UPDATE cases SET owner_id = ? WHERE case_id = ?", (staff_id, case_id))
    return {"case_id": case_id, "owner_id": staff_id, "changed": True}
'''),
    ("resolve_case", True, {"case_id": "CASE-1016", "note": "Fixed."}, '''def resolve_case(db: sqlite3.Connection,
                 case_id: str, note: str) -> dict[str, Any]:
    """Resolve an open case, recording a note on what was done.

    Args:
        case_id: The case to resolve.
        note: What was done.
    """
    case = found(db, "SELECT * FROM cases WHERE case_id = ?", case_id, missing=f"case {case_id} not found")
    if case["status"] != "open":
        raise ToolError(f"case {case_id} is {case['status']}, not open")
    db.execute("UPDATE cases SET status = 'resolved' WHERE case_id = ?", (case_id,))
    db.execute("INSERT INTO notes (case_id, text) VALUES (?, ?)", (case_id, note))
    return {"case_id": case_id, "status": "resolved"}
'''),
    ("set_priority", True, {"case_id": "CASE-1016", "priority": "high"}, '''def set_priority(db: sqlite3.Connection,
                 case_id: str, priority: Literal["low", "normal", "high"]) -> dict[str, Any]:
    """Change a case's priority.

    Args:
        case_id: The case.
        priority: low, normal or high.
    """
    found(db, "SELECT 1 FROM cases WHERE case_id = ?", case_id, missing=f"case {case_id} not found")
    db.execute("UPDATE cases SET priority = ? WHERE case_id = ?", (priority, case_id))
    return {"case_id": case_id, "priority": priority}
'''),
]


def _tools(inputs: dict[str, Any], script: dict[str, Any]) -> dict[str, Any]:
    fault = _fault("hostile", inputs, script) or ("raising_tool" if _fault("raising_tool", inputs, script) else None)
    leak = _fault("leak", inputs, script)
    get_case = _HEAD + (f"    raise ToolError({str(leak)!r})\n" if leak else _GET_CASE[fault])
    tools = [("get_case", False, {"case_id": "CASE-1001"}, get_case), *_TOOLS]
    return {"tools": [{"name": name, "writes": writes, "source": source, "sample_arguments": sample}
                      for name, writes, sample, source in tools]}


_VERIFY = {
    1: '''    case = one(final, "SELECT * FROM cases WHERE case_id = ?", "@CASE") or {}
    notes = rows(final, "SELECT text FROM notes WHERE case_id = ?", "@CASE")
    return [
        Check("@CASE resolved", case.get("status") == "resolved", f"status is {case.get('status')}"),
        Check("one note on @CASE", len(notes) == 1, f"{len(notes)} notes"),
        only_changed(initial, final, "cases", "case_id", {"@CASE"}),
    ]
''',
    2: '''    case = one(final, "SELECT * FROM cases WHERE case_id = ?", "@CASE") or {}
    before = scalar(initial, "SELECT open_cases FROM staff WHERE staff_id = ?", "@STAFF")
    after = scalar(final, "SELECT open_cases FROM staff WHERE staff_id = ?", "@STAFF")
    return [
        Check("@CASE assigned to @STAFF", case.get("owner_id") == "@STAFF", f"owner is {case.get('owner_id')}"),
        Check("@STAFF has one more open case", after == before + 1, f"{before} -> {after}"),
        only_changed(initial, final, "cases", "case_id", {"@CASE"}),
    ]
''',
    3: '''    case = one(final, "SELECT * FROM cases WHERE case_id = ?", "@CASE") or {}
    return [
        Check("@CASE has high priority", case.get("priority") == "high", f"priority is {case.get('priority')}"),
        Check("@CASE assigned to @STAFF", case.get("owner_id") == "@STAFF", f"owner is {case.get('owner_id')}"),
        only_changed(initial, final, "cases", "case_id", {"@CASE"}),
    ]
''',
}
#: Checks that hold already in the seed data: every case is open or resolved, whatever the agent does.
_VERIFY_ALREADY_TRUE = '''    case = one(final, "SELECT * FROM cases WHERE case_id = ?", "@CASE") or {}
    return [Check("@CASE exists", case.get("status") in ("open", "resolved"), f"status is {case.get('status')}")]
'''


def _checks(inputs: dict[str, Any], script: dict[str, Any]) -> dict[str, Any]:
    task = inputs.get("task") or {}
    difficulty = int(task.get("difficulty") or 1)
    number = int(re.sub(r"\D", "", str(task.get("id"))) or 1)
    case, staff = _targets(number)
    other = _targets(number + 1)[1]

    def faulty(name: str) -> bool:
        value = _fault(name, inputs, script)
        return value is True or isinstance(value, list) and number in value

    body = _VERIFY_ALREADY_TRUE if faulty("passes_initially") else _VERIFY[difficulty]
    source = (f"def verify_{task.get('id')}(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) "
              f"-> list[Check]:\n" + body.replace("@CASE", case).replace("@STAFF", staff))
    look = [{"tool": "get_case", "arguments": {"case_id": case}}, {"tool": "list_staff", "arguments": {}}]
    if difficulty == 1:
        reference = [*look, {"tool": "search_cases", "arguments": {"status": "open"}},
                     {"tool": "resolve_case", "arguments": {"case_id": case, "note": "Issue fixed and confirmed."}}]
        wrong = [*look, {"tool": "resolve_case", "arguments": {"case_id": _targets(number + 1)[0], "note": "Done."}}]
    elif difficulty == 2:
        reference = [*look, {"tool": "search_cases", "arguments": {"status": "open"}},
                     {"tool": "assign_case", "arguments": {"case_id": case, "staff_id": staff}}]
        wrong = [*look, {"tool": "assign_case", "arguments": {"case_id": case, "staff_id": other}}]
    else:
        high = {"tool": "set_priority", "arguments": {"case_id": case, "priority": "high"}}
        reference = [*look, high, {"tool": "assign_case", "arguments": {"case_id": case, "staff_id": staff}}]
        wrong = [*look, high]
    return {"instruction": task.get("requirement") or f"Handle {case}.", "verify_source": source,
            "reference": reference, "answer": f"Done: {case} is handled.",
            "wrong": reference if faulty("wrong_passes") else wrong, "wrong_answer": f"Done: {case} is handled.",
            "rubric": f"{case} must end as the task asks; no other case may change."}


STAGES: dict[str, Handler] = {"tasks": _tasks, "schema": _schema, "seed": _seed, "tools": _tools, "checks": _checks}
