"""The typed result record: core fields cannot be overwritten, old files still load, bad values do not break a file."""

from __future__ import annotations

from occubench.core.results import RESULT_FIELDS, ErrorInfo, FaultEvent, Result
from occubench.core.trajectory import Step, ToolCall
from occubench.core.verifier import Vote
from occubench.llm.types import Usage


def test_round_trip_keeps_order_and_types() -> None:
    result = Result(task_id=11, category="Healthcare & Life Sciences", is_correct=True,
                    votes=[Vote(True, "fine")], usage={"agent": Usage(10, 5, 1)}, error=None,
                    steps=[Step("thinking", [ToolCall("look", "{}", {"x": 1}, call_index=0)])],
                    fault_events=[FaultEvent(1, "look", "explicit", "http_500", "HTTP 500")],
                    env_info={"finished_at": "17:00"}, verdict_details={"checks": []})
    data = result.to_dict()
    assert list(data)[:len(RESULT_FIELDS)] == list(RESULT_FIELDS)
    assert Result.from_dict(data) == result


def test_sections_keep_world_keys_away_from_core_fields() -> None:
    result = Result(task_id=1, is_correct=False, env_info={"is_correct": True, "status": "hacked"},
                    verdict_details={"task_id": 99})
    data = result.to_dict()
    assert (data["is_correct"], data["status"], data["task_id"]) == (False, "ok", 1)
    assert data["env_info"] == {"is_correct": True, "status": "hacked"}


def test_keys_of_another_harness_are_written_back_as_they_were() -> None:
    other = {"task_id": "insurance_claims/t1", "status": "ok", "is_correct": True, "checks": [{"name": "c"}],
             "custom_field": 3}
    result = Result.from_dict(other)
    assert (result.verdict_details, result.extra) == ({}, {"checks": [{"name": "c"}], "custom_field": 3})
    assert result.to_dict()["custom_field"] == 3 and result.to_dict()["checks"] == [{"name": "c"}]


def test_original_harness_records_and_bad_values_load() -> None:
    original = {"task_id": 5, "task_scenario_name": "S", "category": "C", "domain": "D", "difficulty_level": 2,
                "agent_model": "a", "world_model": "w", "env_mode": "E1", "fault_count": 2, "fault_duration": 2,
                "with_plan": False, "is_correct": False, "feedback": "f", "step_count": 3, "trajectory": "t"}
    result = Result.from_dict(original)
    assert result.ok and not result.passed and result.difficulty_level == 2
    broken = Result.from_dict({"task_id": 6, "usage": "oops", "votes": [1, {"is_correct": True}], "steps": None,
                               "error": {"kind": "infrastructure", "message": "down"}, "status": "error",
                               "duration_s": "slow"})
    assert broken.usage == {} and broken.votes == [Vote(True, "")] and broken.steps == []
    assert broken.error == ErrorInfo("infrastructure", "down") and broken.duration_s == 0.0
