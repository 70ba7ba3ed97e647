"""`occubench run --suite traineebench`: a config in the reference's format run end to end with the project's mock
as agent, the day generated from the seed, the agent's shell command run in the sandbox, and the task scored in the
reference's points."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from occubench import load_results
from occubench.cli import main
from occubench.sandbox import Provider
from occubench.testing import MockLLMServer
from occubench.traineebench.families.transactions import MANUAL, REPORT
from occubench.traineebench.scoring import reference_tables
from tests.traineebench.families.test_transactions import stand_in

SCRIPT = f"""import json, sqlite3
rows = sqlite3.connect("transactions.db").execute(
    "SELECT DISTINCT supplier_name FROM transactions WHERE coalesce(supplier_rating, '') = ''")
json.dump({{"abnormal_suppliers": [row[0] for row in rows]}}, open("{REPORT}", "w"))
"""
CALLS = [("download_file", {"file_path": "manuals_for_intern.md", "target_path": "manuals_for_intern.md"}),
         ("download_file", {"file_path": f"financial/{MANUAL}", "target_path": MANUAL}),
         ("execute_command", {"command": f"python - <<'EOF'\n{SCRIPT}EOF"}),
         ("done", {})]


def intern(request: dict, index: int) -> str | dict:
    """An agent that does the review as the manual says: the two manuals, a script over the table, done."""
    made = sum(1 for message in request["messages"] if message.get("role") == "tool")
    if made == len(CALLS):
        return "Final answer: the review report is written."
    name, arguments = CALLS[made]
    return {"content": None, "tool_calls": [{"name": name, "arguments": arguments}]}


def test_a_config_day_runs_end_to_end_and_earns_the_reference_s_points(tmp_path: Path, sandbox: Provider) -> None:
    reference = tmp_path / "reference"
    (reference / "schemas" / "templates").mkdir(parents=True)
    (reference / "schemas" / "templates" / "manuals_for_intern.md").write_text("stand-in intern manual")
    stand_in(SimpleNamespace(reference=reference))  # the family's manual and forms
    task = {"name": "Transaction Data Review", "deadline": "2025-10-01T20:00:00",
            "arguments": {"num_normal_transactions": 3, "num_abnormal_transactions": 2}}
    config = tmp_path / "traineebench_config.json"
    config.write_text(json.dumps({"scenarios": [{"name": "scenario_a", "days": [{"name": "day_1", "tasks": [task]}]}],
                                  "version": "Ver.1"}))
    with MockLLMServer(intern) as server:
        assert main(["run", "--suite", "traineebench", "--traineebench-config", str(config), "--reference-dir",
                     str(reference), "--agent-model", "intern", "--base-url", server.base_url, "--api-key", "k",
                     "--output-dir", str(tmp_path / "out"), "--run-name", "r", "--seed", "3"]) == 0
    [result] = load_results(tmp_path / "out" / "r" / "results.jsonl")
    assert result.task_id == "scenario_a/day_1" and [c.name for c in result.tool_calls] == [n for n, _ in CALLS]
    assert result.tool_calls[2].observation["exit_code"] == 0
    [score] = result.verdict_details["reference_scores"]
    assert (score["family"], score["points"], score["full"]) == ("Transaction Data Review", 3.0, 3.0)
    assert result.is_correct is True
    [table] = reference_tables([result])
    assert table.title == "Trainee-Bench (reference scoring)" and table.rows[0][3:] == ["100.0%", "100.0%"]
