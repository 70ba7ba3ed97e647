"""Majority voting: unparsable votes are re-asked and never counted as FAIL; votes share one request with `n`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from occubench.core.verifier import RubricVerifier
from occubench.errors import VerifierError
from occubench.llm import LLMClient, Model
from occubench.llm.ledger import open_ledger
from occubench.testing import MockLLMServer

SECTIONS = [("Task given to the agent", "Refill RX-100."), ("Agent trajectory", "[Agent Final Response]: done")]


def verdict(ok: bool) -> str:
    return f'Reasoning.\n<verdict>{{"feedback": "looked {ok}", "is_correct": {str(ok).lower()}}}</verdict>'


def reasks(request: dict) -> int:
    """How many times this vote was already asked again."""
    return sum("could not be read" in str(m.get("content")) for m in request["messages"])


@contextmanager
def judge(vote: Callable[[int, int], str], votes: int = 3,
          support_n: bool = True) -> Iterator[tuple[MockLLMServer, RubricVerifier]]:
    """A judge whose vote ``i`` answers ``vote(i, number of re-asks so far)``."""
    def responder(request: dict, index: int) -> str:
        return vote(index, reasks(request))
    with MockLLMServer(responder, support_n=support_n) as server:
        yield server, RubricVerifier(Model(LLMClient("k", server.base_url), "judge", role="verifier"),
                                     num_votes=votes)


def test_majority_wins_every_vote_is_kept_and_votes_share_one_request() -> None:
    with judge(lambda i, _: verdict(i != 1)) as (server, verifier), open_ledger() as ledger:
        result = verifier.judge(SECTIONS)
    assert result.is_correct is True
    assert [v.is_correct for v in result.votes] == [True, False, True]
    assert result.feedback == "looked True"
    assert server.stats.requests == 1 and server.requests[0]["n"] == 3
    spent = ledger.by_role["verifier"]
    assert spent.calls == 1 and spent.prompt_tokens == server.stats.total_prompt_tokens
    prompt = server.requests[0]["messages"][1]["content"]
    assert "## Task given to the agent\nRefill RX-100." in prompt and "## Agent trajectory" in prompt


def test_endpoints_without_n_get_separate_requests_and_the_probe_is_remembered() -> None:
    with judge(lambda i, _: verdict(True), support_n=False) as (server, verifier):
        with open_ledger() as ledger:
            first = verifier.judge(SECTIONS)
        second = verifier.judge(SECTIONS)
    assert first.is_correct and second.is_correct and len(second.votes) == 3
    assert server.stats.requests == 1 + 3 + 3  # one rejected probe with n, then single requests only
    assert ledger.by_role["verifier"].calls == 3  # the parallel single requests count in the episode's ledger


def test_a_malformed_vote_is_asked_again_not_counted_as_fail() -> None:
    def reply(i: int, again: bool) -> str:
        return "I refuse to format." if i == 0 and not again else verdict(i != 2)

    with judge(reply) as (server, verifier):
        result = verifier.judge(SECTIONS)
    assert result.is_correct is True
    assert [(v.is_correct, v.attempts) for v in result.votes] == [(True, 2), (True, 1), (False, 1)]
    assert server.stats.requests == 2


def test_a_vote_that_stays_unparsable_is_left_out() -> None:
    with judge(lambda i, again: "never a verdict" if i == 0 else verdict(True)) as (server, verifier):
        result = verifier.judge(SECTIONS)
    assert result.is_correct is True
    assert result.votes[0].is_correct is None and result.votes[0].attempts == 3
    assert server.stats.requests == 3  # the shared first request and two re-asks of vote 1


def test_no_majority_is_a_verifier_error_not_a_fail() -> None:
    # Counting the unparsable vote as FAIL would turn this tie into a silent failure of the agent.
    with judge(lambda i, again: "x" if i == 0 else verdict(i == 1)) as (server, verifier), open_ledger() as ledger, \
            pytest.raises(VerifierError, match="no majority: 1 pass, 1 fail, 1 unparsable") as error:
        verifier.judge(SECTIONS)
    assert [(v.is_correct, v.attempts) for v in error.value.votes] == [(None, 3), (True, 1), (False, 1)]
    # The tokens the votes spent are in the episode's ledger all the same, so the run still counts them.
    assert ledger.by_role["verifier"].calls == server.stats.requests
    assert ledger.by_role["verifier"].prompt_tokens == server.stats.total_prompt_tokens


def test_string_verdicts_are_understood() -> None:
    with judge(lambda i, _: '<verdict>{"feedback": "ok", "is_correct": "PASS"}</verdict>', votes=1) as (_, verifier):
        assert verifier.judge(SECTIONS).is_correct is True
