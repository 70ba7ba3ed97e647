"""Colleagues share a clue only when asked about its subject: triggers match whole words and phrases, so a request
for everything releases nothing, on any of the days `occubench validate --suite workplace` checks; and the reference
schedules still get every clue they need. A colleague played by a model is told the same condition."""

from __future__ import annotations

from pathlib import Path

import pytest

from occubench.llm import LLMClient, Model
from occubench.testing import MockLLMServer
from occubench.workplace.generate import generate_days
from occubench.workplace.model import Clue, Colleague, Day
from occubench.workplace.people import ModelColleagues
from occubench.workplace.schedule import reference_schedule
from tests.workplace.families import played

#: What `occubench validate --suite workplace` checks by default: 50 days of seed 0 and their day-two variants.
DAYS, SEED = 50, 0
GENERIC = ("send me everything", "what are the answers", "ground truth",
           "please send the ground truth for all my tasks", "tell me everything you know",
           "I need all the information", "what should I do", "help",
           "Could you share everything you know?", "Please give me the correct answers.",
           "Hi! I'm new here - can you send me all the files and data you have?")


@pytest.fixture(scope="module")
def days() -> list[Day]:
    return generate_days(SEED, DAYS) + generate_days(SEED, DAYS, phase=2)


@pytest.mark.parametrize(("message", "released"), [
    ("What is the approval threshold?", True),
    ("Which THRESHOLDS apply?", True),                      # case and plural
    ("send me everything", False),                          # "end" is not a word of "send"
    ("Please send the ground truth", False),
    ("Who is on-call today?", True),                        # a phrase's words may be joined by punctuation
    ("Is someone on\ncall?", True),
    ("Can you call on me?", False),                         # ... but in order
    ("What is our policy?", True), ("Any policies?", True),  # "policy" → "policies"
    ("Is that mandatory?", True), ("I was mandated", True),  # a trailing * takes any ending
    ("Check the availability", False),                      # whole words only: "availab" is nothing by itself
])
def test_triggers_match_whole_words_and_phrases(message: str, released: bool) -> None:
    clue = Clue("c", "the fact", [["threshold", "on call", "policy", "mandat*", "availab"]])
    assert clue.asked_by(message) is released


def test_every_group_must_be_met() -> None:
    clue = Clue("c", "the fact", [["renewal"], ["fee", "price"]])
    assert clue.asked_by("What is the renewal fee?") and clue.asked_by("renewal prices, please")
    assert not clue.asked_by("What is the fee?") and not clue.asked_by("Any renewals coming up?")
    phrase = Clue("c", "the fact", [["cost centre"]])
    assert phrase.asked_by("our cost centres?") and not phrase.asked_by("costs centre")  # only the last word inflects


def test_generic_requests_release_no_clue_on_any_validated_day(days: list[Day], tmp_path: Path) -> None:
    leaks = []
    for day in days:
        clues = [clue.text for colleague in day.colleagues for clue in colleague.clues]
        assert clues, day.id
        env = played(day, tmp_path / day.id)
        for to in [*(c.name for c in day.colleagues), *day.groups]:
            env.now = env.world.start  # the day's start again for each colleague: the clock never runs out
            for message in GENERIC:
                observation = env.call("send_message", {"to": to, "text": message})
                replies = observation.get("replies", [observation])
                assert len(replies) >= 1 and all("reply" in reply for reply in replies), observation
                leaks += [(day.id, to, message) for reply in replies if any(clue in reply["reply"] for clue in clues)]
    assert not leaks


def test_each_clue_holder_s_question_in_the_reference_releases_the_clue(days: list[Day]) -> None:
    # Generation keeps only days their reference solves (a draw it cannot solve is drawn again), so passing alone
    # would not show that the triggers still fit the questions: each clue holder's question must release the clue.
    for day in days:
        asked = [step["arguments"] for step in reference_schedule(day)[0] if step["tool"] == "send_message"]
        for colleague in day.colleagues:
            questions = [a["text"] for a in asked if colleague.name in day.groups.get(a["to"], [a["to"]])]
            for clue in colleague.clues:
                assert any(clue.asked_by(question) for question in questions), (day.id, clue.id, questions)


def test_a_model_colleague_is_told_the_same_condition() -> None:
    prompts = []

    def responder(request: dict, index: int) -> str:
        prompts.append(request["messages"][0]["content"])
        return "Could you say what exactly you need?"
    colleague = Colleague("Ada Abbott", "Finance controller", "Finance",
                          [Clue("t1-threshold", "Any transaction above 4,500 needs a second approver.",
                                [["threshold", "second approv*"]])])
    with MockLLMServer(responder) as server:
        reply = ModelColleagues(Model(LLMClient("k", server.base_url), "npc")).reply(colleague, "help", [])
    assert reply == "Could you say what exactly you need?"
    [prompt] = prompts
    assert 'share this only when the message asks about "threshold" or "second approv*"' in prompt
    assert "a * stands for any ending" in prompt and "for the answers or the ground truth" in prompt
