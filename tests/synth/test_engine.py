"""The synthesis engine through a loopback server: answers checked against a schema and a stage's own check, asked
again with what was wrong, stored so that a second run asks nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from occubench.llm import LLMClient, Model
from occubench.llm.ledger import open_ledger
from occubench.synth import Engine, Stage, StageFailed
from occubench.testing import MockLLMServer

SUBTOPICS = Stage(
    name="subtopics", instructions="List non-overlapping sub-topics of the scenario.",
    schema={"type": "object", "required": ["subtopics"], "additionalProperties": False,
            "properties": {"subtopics": {"type": "array", "items": {"type": "string"}, "minItems": 1}}},
    check=lambda answer, inputs: [f"{len(answer['subtopics'])} sub-topics, at most {inputs['limit']}"]
    if len(answer["subtopics"]) > inputs["limit"] else [])


def answering(*replies: str) -> Any:
    """A server answering the stage's requests with ``replies`` in turn (the last one from then on)."""
    asked: list[dict[str, Any]] = []

    def respond(request: dict[str, Any], index: int) -> str:
        asked.append(request)
        return replies[min(len(asked), len(replies)) - 1]
    return respond, asked


def output(value: Any) -> str:
    return f"Here it is.\n<output>{json.dumps(value)}</output>"


def engine(server: MockLLMServer, store: Path) -> Engine:
    return Engine(Model(LLMClient("k", server.base_url), "synth-m"), store)


def test_invalid_answers_are_asked_again_with_their_problems_then_stored(tmp_path: Path) -> None:
    respond, asked = answering("no tags at all", output({"subtopics": "one"}),
                               output({"subtopics": ["a", "b", "c"]}), output({"subtopics": ["a", "b"]}))
    inputs = {"scenario": "Pharmacy discharge reconciliation", "limit": 2}
    with MockLLMServer(respond) as server, open_ledger() as ledger:
        run = engine(server, tmp_path)
        answer = run.run(Stage(**{**SUBTOPICS.__dict__, "max_asks": 4}), inputs)
    assert answer == {"subtopics": ["a", "b"]}
    assert (run.stats["subtopics"].first_try, run.stats["subtopics"].reasked) == (0, 3)
    reasks = [r["messages"][-1]["content"] for r in asked[1:]]
    assert "has no <output> tag" in reasks[0]                     # unparsable
    assert "subtopics: 'one' is not of type 'array'" in reasks[1]  # against the schema
    assert "3 sub-topics, at most 2" in reasks[2]                 # the stage's own check
    assert ledger.by_role["synth:subtopics"].calls == 4


def test_a_second_run_reuses_what_the_first_accepted(tmp_path: Path) -> None:
    respond, asked = answering(output({"subtopics": ["a"]}))
    inputs = {"scenario": "KYC review", "limit": 3}
    with MockLLMServer(respond) as server:
        first = engine(server, tmp_path)
        first.run(SUBTOPICS, inputs)
        again = engine(server, tmp_path)
        assert again.run(SUBTOPICS, inputs) == {"subtopics": ["a"]}
        engine(server, tmp_path).run(SUBTOPICS, {**inputs, "scenario": "Another"})  # other inputs: asked
    assert len(asked) == 2
    assert (first.stats["subtopics"].first_try, again.stats["subtopics"].reused) == (1, 1)


def test_a_stage_that_never_gets_a_usable_answer_fails_with_its_problems(tmp_path: Path) -> None:
    respond, asked = answering(output({"subtopics": []}))
    with MockLLMServer(respond) as server, pytest.raises(StageFailed, match="should be non-empty|is too short"):
        run = engine(server, tmp_path)
        run.run(SUBTOPICS, {"scenario": "x", "limit": 2})
    assert len(asked) == SUBTOPICS.max_asks and run.stats["subtopics"].failed == 1
    assert run.stats["subtopics"].reasked == SUBTOPICS.max_asks - 1
    assert not list(tmp_path.rglob("*.json"))  # nothing stored for a failed stage
