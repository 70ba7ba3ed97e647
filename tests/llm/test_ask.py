"""The parse-and-re-ask loop every role shares, through a loopback server and the real openai SDK: an unusable reply
goes back (its end, or whole) with what was wrong, and the outcome says what happened."""

from __future__ import annotations

from functools import partial
from typing import Any

from occubench.llm import LLMClient, Model, Reply, Unusable, ask_json, extract_tagged_json
from occubench.llm.budget import REASK_CHARS
from occubench.llm.ledger import open_ledger
from occubench.testing import MockLLMServer

ASK = [{"role": "system", "content": "Answer between <o> and </o>."}, {"role": "user", "content": "Go."}]


def correction(problems: list[str]) -> str:
    return "Fix: " + " | ".join(problems)


def serving(*replies: str) -> Any:
    """A responder answering ``replies`` in turn (the last one from then on)."""
    asked = iter(range(len(replies) - 1))

    def respond(request: dict[str, Any], index: int) -> str:
        return replies[next(asked, len(replies) - 1)]
    return respond


def test_an_unusable_reply_goes_back_as_its_end_with_the_problem_until_one_parses() -> None:
    ramble = "start " + "x" * 10_000
    with MockLLMServer(serving(ramble, '<o>{"a": 1}</o>')) as server, open_ledger() as ledger:
        model = Model(LLMClient("k", server.base_url), "m", role="world")
        parsed = ask_json(model, ASK, partial(extract_tagged_json, tag="o"), reasks=2, correction=correction,
                          label="[TEST] Unparsable")
    assert (parsed.value, parsed.attempts, parsed.problems) == ({"a": 1}, 2, [])
    echoed, told = server.requests[1]["messages"][-2:]
    assert server.requests[1]["messages"][:2] == ASK
    assert echoed["role"] == "assistant" and echoed["content"].endswith("x" * REASK_CHARS)
    assert "start" not in echoed["content"]  # only its end, which the context budget leaves room for
    assert told == {"role": "user", "content": "Fix: the reply has no <o> tag"}
    assert ledger.by_role["world"].calls == 2


def test_every_problem_is_told_the_reply_can_go_back_whole_and_the_last_one_is_reported() -> None:
    def parse(text: str | None) -> dict[str, Any]:
        raise Unusable(["too short", "no title"])

    long_answer = "<o>" + "y" * 10_000 + "</o>"
    with MockLLMServer(serving(long_answer)) as server:
        model = Model(LLMClient("k", server.base_url), "m")
        parsed = ask_json(model, ASK, parse, reasks=1, correction=correction, label="[TEST] Unusable",
                          echo_whole=True)
    assert (parsed.value, parsed.attempts, parsed.reason, parsed.reply) == (None, 2, "too short; no title",
                                                                          long_answer)
    assert server.stats.requests == 2
    assert server.requests[1]["messages"][-2:] == [{"role": "assistant", "content": long_answer},
                                                   {"role": "user", "content": "Fix: too short | no title"}]


def test_a_reply_in_hand_is_parsed_first_and_only_re_asks_are_requested() -> None:
    with MockLLMServer(serving('<o>{"b": 2}</o>')) as server:
        model = Model(LLMClient("k", server.base_url), "m")
        parse = partial(extract_tagged_json, tag="o")
        kept = ask_json(model, ASK, parse, reasks=2, correction=correction, label="[TEST]",
                        first=Reply('<o>{"a": 1}</o>'))
        assert server.stats.requests == 0
        mended = ask_json(model, ASK, parse, reasks=2, correction=correction, label="[TEST]", first=Reply(None),
                          sample=1)
    assert (kept.value, kept.attempts) == ({"a": 1}, 1)
    assert (mended.value, mended.attempts) == ({"b": 2}, 2)
    assert server.stats.requests == 1
    assert server.requests[0]["messages"][-2:] == [{"role": "assistant", "content": ""},
                                                   {"role": "user", "content": "Fix: the reply was empty"}]
