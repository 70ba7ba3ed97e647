"""Majority voting: unparsable votes are re-asked and never counted as FAIL."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from occubench.errors import VerifierError
from occubench.llm import LLMClient, Model
from occubench.testing import MockLLMServer
from occubench.verifier import RubricVerifier

SECTIONS = [("Task given to the agent", "Refill RX-100."), ("Agent trajectory", "[Agent Final Response]: done")]


def verdict(ok: bool) -> str:
    return f'Reasoning.\n<verdict>{{"feedback": "looked {ok}", "is_correct": {str(ok).lower()}}}</verdict>'


@contextmanager
def judge_with(*replies: str, votes: int = 3) -> Iterator[tuple[MockLLMServer, RubricVerifier]]:
    """A judge whose successive requests get ``replies`` in order."""
    queue, lock = iter(replies), threading.Lock()

    def responder(request: dict, index: int) -> str:
        with lock:
            return next(queue)
    with MockLLMServer(responder) as server:
        yield server, RubricVerifier(Model(LLMClient("k", server.base_url), "judge"), num_votes=votes)


def test_majority_wins_and_every_vote_is_kept() -> None:
    with judge_with(verdict(True), verdict(False), verdict(True)) as (server, verifier):
        result = verifier.judge(SECTIONS)
    assert result.is_correct is True
    assert [v.is_correct for v in result.votes] == [True, False, True]
    assert result.feedback == "looked True"
    assert result.usage.calls == 3
    prompt = server.requests[0]["messages"][1]["content"]
    assert "## Task given to the agent\nRefill RX-100." in prompt and "## Agent trajectory" in prompt


def test_a_malformed_vote_is_asked_again_not_counted_as_fail() -> None:
    with judge_with("I refuse to format.", verdict(True), verdict(True), verdict(False)) as (server, verifier):
        result = verifier.judge(SECTIONS)
    assert result.is_correct is True
    assert [(v.is_correct, v.attempts) for v in result.votes] == [(True, 2), (True, 1), (False, 1)]
    assert "could not be read" in server.requests[1]["messages"][-1]["content"]


def test_a_vote_that_stays_unparsable_is_left_out() -> None:
    # Vote 1 never parses (3 attempts); votes 2 and 3 pass. Counting the bad vote as FAIL would still pass here,
    # so the next test checks the case where it would flip the verdict.
    with judge_with("x", "y", "z", verdict(True), verdict(True)) as (server, verifier):
        result = verifier.judge(SECTIONS)
    assert result.is_correct is True
    assert result.votes[0].is_correct is None and result.votes[0].attempts == 3


def test_no_majority_is_a_verifier_error_not_a_fail() -> None:
    with judge_with("x", "y", "z", verdict(True), verdict(False)) as (server, verifier), \
            pytest.raises(VerifierError, match="no majority: 1 pass, 1 fail, 1 unparsable") as error:
        verifier.judge(SECTIONS)
    assert [v["is_correct"] for v in error.value.votes] == [None, True, False]


def test_string_verdicts_are_understood() -> None:
    with judge_with('<verdict>{"feedback": "ok", "is_correct": "PASS"}</verdict>', votes=1) as (_, verifier):
        assert verifier.judge(SECTIONS).is_correct is True
