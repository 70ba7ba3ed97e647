"""`occubench run --suite traineebench`: a config in the reference's format run end to end on the day engine with
the project's mock as agent, the day generated from the seed, the agent's shell command run in the sandbox, each
task scored in the reference's points (the day's ``task_scores``) and the run's figures in the workplace tables."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from occubench import load_results
from occubench.cli import main
from occubench.sandbox import Provider
from occubench.testing import MockLLMServer
from occubench.traineebench.families.transactions import MANUAL, REPORT
from occubench.workplace.record import DayRecord
from occubench.workplace.report import workplace_tables
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


def scripted(calls: list[tuple[str, dict]], answer: str = "done.") -> Callable[[dict, int], str | dict]:
    """An agent that makes ``calls`` one a turn, then answers ``answer``."""
    def reply(request: dict, index: int) -> str | dict:
        made = sum(1 for message in request["messages"] if message.get("role") == "tool")
        if made == len(calls):
            return f"Final answer: {answer}"
        name, arguments = calls[made]
        return {"content": None, "tool_calls": [{"name": name, "arguments": arguments}]}
    return reply


#: An agent that does the review as the manual says: the two manuals, a script over the table, done.
intern = scripted(CALLS, "the review report is written.")


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
    [score] = result.verdict_details["task_scores"]
    assert (score["task_id"], score["family"], score["points"], score["full"], score["score"], score["success"]) == (
        "t1", "Transaction Data Review", 3.0, 3.0, 1.0, True)
    record = DayRecord.from_result(result)
    assert record is not None and (record.day_score, record.n_tasks, record.phase) == (1.0, 1, 1)
    assert result.is_correct is True
    overall, _, levels = workplace_tables([result])  # Tables 2, 3 and 4
    # Days, tasks, SR and CS of the one day, and its task among the easy ones.
    assert overall.rows[0][:5] == ["intern", "1", "1", "100.0%", "100.0%"]
    assert overall.rows[0][6] == f"{len(CALLS):.1f}" and levels.rows == [["intern", "1", "100.0%", "100.0%", "0",
                                                                          "-", "-"]]


def reference_folder(tmp_path: Path) -> Path:
    reference = tmp_path / "reference"
    (reference / "schemas" / "templates").mkdir(parents=True)
    (reference / "schemas" / "templates" / "manuals_for_intern.md").write_text("stand-in intern manual")
    stand_in(SimpleNamespace(reference=reference))
    return reference


def write_config(tmp_path: Path, days: list[list[dict]]) -> Path:
    config = tmp_path / "traineebench_config.json"
    config.write_text(json.dumps({"scenarios": [{"name": "scenario_a", "days": [
        {"name": f"day_{n}", "tasks": tasks} for n, tasks in enumerate(days, start=1)]}]}))
    return config


MONITOR = {"name": "Website Monitor", "arguments": {}, "deadline": "2025-10-01T20:00:00"}
COLLEAGUE_REPLY = "Ask me again tomorrow \ud800 please."  # a lone surrogate, as a model may send


def office(request: dict, index: int) -> str | dict:
    """The agent asks the HR Manager who keeps the website, writes its report and stops; the colleague model
    answers; the judge says yes to every question it is asked."""
    if request["model"] == "colleague":
        return COLLEAGUE_REPLY
    if request["model"] == "judge":
        return "yes"
    results = [json.loads(m["content"]) for m in request["messages"] if m.get("role") == "tool"]
    if not results:
        return {"content": None, "tool_calls": [{"name": "list_users", "arguments": {}}]}
    if len(results) == 1:
        hr = next(u["name"] for u in results[0]["users"] if u["position"] == "HR Manager")
        return {"content": None, "tool_calls": [{"name": "send_message", "arguments": {
            "to": hr, "text": "Who maintains the company website? I need to find them."}}]}
    if len(results) == 2:
        return {"content": None, "tool_calls": [{"name": "execute_command", "arguments": {
            "command": "echo 'The /blog page loads slowly.' > website_analysis_report.md"}}]}
    return "Final answer: done."


def test_colleagues_are_played_by_the_npc_model_and_judged_checks_by_the_verifier(tmp_path: Path,
                                                                                  sandbox: Provider) -> None:
    config = write_config(tmp_path, [[MONITOR]])
    common = ["run", "--suite", "traineebench", "--traineebench-config", str(config), "--reference-dir",
              str(reference_folder(tmp_path)), "--agent-model", "intern", "--api-key", "k",
              "--output-dir", str(tmp_path / "out"), "--seed", "3"]
    with MockLLMServer(office) as server:
        assert main([*common, "--base-url", server.base_url, "--run-name", "models", "--npc-model", "colleague",
                     "--verifier-model", "judge"]) == 0
        asked = [r for r in server.requests if r["model"] == "colleague" and len(r["messages"]) > 1]  # not preflight
        assert main([*common, "--base-url", server.base_url, "--run-name", "offline"]) == 0
    [played] = load_results(tmp_path / "out" / "models" / "results.jsonl")
    [offline] = load_results(tmp_path / "out" / "offline" / "results.jsonl")
    # The colleague's model was told who it is and its reply rule; the agent got its reply as sent.
    [request] = asked
    hr = json.loads(played.tool_calls[1].arguments)["to"]
    assert hr in request["messages"][0]["content"] and "maintains the company website" in request["messages"][0][
        "content"]
    assert request["messages"][-1]["content"] == "Who maintains the company website? I need to find them."
    assert played.tool_calls[1].observation["reply"].startswith("Ask me again tomorrow")
    assert offline.tool_calls[1].observation["reply"] != played.tool_calls[1].observation["reply"]
    # The judge's yes earns the report's point and the HR chat's; without a judge neither scores.
    [judged], [unjudged] = played.verdict_details["task_scores"], offline.verdict_details["task_scores"]
    assert (judged["points"], judged["full"]) == (2.0, 5.0)
    assert unjudged["points"] == 0.0 and any("No judge" in note for note in unjudged["notes"])


def idle(request: dict, index: int) -> str | dict:
    """An agent that ends each day at once."""
    if any(m.get("role") == "tool" for m in request["messages"]):
        return "Final answer: nothing done."
    return {"content": None, "tool_calls": [{"name": "done", "arguments": {}}]}


def test_with_mentor_feedback_each_day_starts_with_the_notes_on_the_day_before(tmp_path: Path,
                                                                                sandbox: Provider) -> None:
    task = {"name": "Transaction Data Review", "deadline": "2025-10-01T20:00:00",
            "arguments": {"num_normal_transactions": 3, "num_abnormal_transactions": 2}}
    config = write_config(tmp_path, [[task], [task]])
    with MockLLMServer(idle) as server:
        assert main(["run", "--suite", "traineebench", "--traineebench-config", str(config), "--reference-dir",
                     str(reference_folder(tmp_path)), "--agent-model", "intern", "--base-url", server.base_url,
                     "--api-key", "k", "--output-dir", str(tmp_path / "out"), "--run-name", "r",
                     "--mentor-feedback"]) == 0
        openings = [r["messages"][1]["content"] for r in server.requests if len(r["messages"]) == 2]
    first, second = sorted(load_results(tmp_path / "out" / "r" / "results.jsonl"), key=lambda r: str(r.task_id))
    assert (first.task_id, second.task_id) == ("scenario_a/day_1", "scenario_a/day_2")
    notes = first.verdict_details["task_scores"][0]["notes"]
    assert notes and "Mentor's feedback" not in openings[0]
    assert "Mentor's feedback" in openings[1] and all(note in openings[1] for note in notes)
    assert first.verdict_details["day_feedback"] in openings[1]
    # The day two is filed as the day after day one, in the arm told the mentor's feedback.
    record = DayRecord.from_result(second)
    assert record is not None and (record.phase, record.arm, record.day_one) == (2, "notes", "scenario_a/day_1")


def test_the_paper_s_day_two_repeats_the_first_day_s_tasks_with_new_arguments(tmp_path: Path,
                                                                              sandbox: Provider) -> None:
    task = {"name": "Transaction Data Review", "deadline": "2025-10-01T20:00:00",
            "arguments": {"num_normal_transactions": 3, "num_abnormal_transactions": 2}}
    resume = {"name": "Resume Select", "deadline": "2025-10-01T20:00:00", "arguments": {}}
    config = write_config(tmp_path, [[task, task], [resume]])  # the config's own day 2 is not used
    with MockLLMServer(idle) as server:
        assert main(["run", "--suite", "traineebench", "--traineebench-config", str(config), "--reference-dir",
                     str(reference_folder(tmp_path)), "--agent-model", "intern", "--base-url", server.base_url,
                     "--api-key", "k", "--output-dir", str(tmp_path / "out"), "--run-name", "r", "--paper-day-two",
                     "--mentor-feedback"]) == 0
        openings = [r["messages"][1]["content"] for r in server.requests if len(r["messages"]) == 2]
    first, second = sorted(load_results(tmp_path / "out" / "r" / "results.jsonl"), key=lambda r: str(r.task_id))
    assert second.task_id == "scenario_a/day_2"
    assert [row["family"] for row in second.verdict_details["task_scores"]] == ["Transaction Data Review"] * 2
    assert "Resume Select" not in openings[1] and "Mentor's feedback" in openings[1]


def looker(request: dict, index: int) -> str | dict:
    """An agent that looks at the first heatmap, then ends its day."""
    made = sum(1 for message in request["messages"] if message.get("role") == "tool")
    calls = [("read_image", {"file_path": "ads_strategy/target_user_density_college_students_18_25.png"}),
             ("done", {})]
    if made == len(calls):
        return "Final answer: looked."
    name, arguments = calls[made]
    return {"content": None, "tool_calls": [{"name": name, "arguments": arguments}]}


@pytest.mark.parametrize("images", [True, False], ids=["image content", "text fallback"])
def test_a_heatmap_reaches_the_agent_as_an_image_or_as_its_text_named_in_the_results(
        tmp_path: Path, sandbox: Provider, images: bool) -> None:
    ads = {"name": "ADs Strategy Plan", "deadline": "2025-10-01T20:00:00",
           "arguments": {"task_params": {"city": "Shenzhen", "difficulty": "very_easy"}}}
    config = write_config(tmp_path, [[ads]])
    with MockLLMServer(looker) as server:
        assert main(["run", "--suite", "traineebench", "--traineebench-config", str(config), "--reference-dir",
                     str(reference_folder(tmp_path)), "--agent-model", "intern", "--base-url", server.base_url,
                     "--api-key", "k", "--output-dir", str(tmp_path / "out"), "--run-name", "r",
                     *(["--agent-images"] if images else [])]) == 0
        last = server.requests[-1]["messages"]
    [result] = load_results(tmp_path / "out" / "r" / "results.jsonl")
    shown = result.tool_calls[0].observation["image"]["$image"]
    assert shown["delivered_as"] == ("image" if images else "text") and shown["media_type"] == "image/png"
    parts = [part for message in last if isinstance(message.get("content"), list) for part in message["content"]]
    tool_text = next(m["content"] for m in last if m.get("role") == "tool")
    if images:
        assert any(part.get("type") == "image_url" and part["image_url"]["url"].startswith("data:image/png;base64,")
                   for part in parts)
        assert "grid_j=" not in tool_text
    else:
        assert not parts and "grid_j=0: " in tool_text and "grid_j=0: " in shown["text"]
    assert "base64" not in (tmp_path / "out" / "r" / "results.jsonl").read_text()
