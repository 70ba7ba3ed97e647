"""Rubric verification: independent judge votes on a trajectory, majority wins.

A vote the judge cannot put in the required form is asked again (bounded) and, if it stays unparsable, is
left out of the count — never counted as FAIL. No majority among the parsable votes is a verifier error, recorded
as such, so a broken judge cannot silently fail an agent.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import Any

from occubench.errors import VerifierError
from occubench.llm import Message, Model, Usage, extract_tagged_json

log = logging.getLogger("occubench")

TAG = "verdict"

_SYSTEM = f"""You are a strict reviewer of an AI agent's work in a professional environment. You receive the \
scenario, the environment's initial state and the meaning of its fields, the task the agent was given, a \
verification plan written for this task, and the agent's full trajectory: each tool call, the observation it \
returned, and the agent's final response.

Apply the verification plan to the trajectory step by step. Judge only what the trajectory shows: a number or \
fact in the final response that no observation supports is a hallucination, and the plan decides whether that \
fails the task.

End your reply with exactly one block <{TAG}>{{"feedback": "<why, in a few sentences>", "is_correct": true or \
false}}</{TAG}>."""


@dataclass
class Vote:
    #: None when the judge's reply stayed unparsable; such a vote is not counted.
    is_correct: bool | None
    feedback: str
    attempts: int = 1


@dataclass
class Verdict:
    is_correct: bool
    feedback: str
    votes: list[Vote] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    def votes_json(self) -> list[dict[str, Any]]:
        return [asdict(vote) for vote in self.votes]


def _as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "pass", "passed", "yes", "correct"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "fail", "failed", "no", "incorrect"):
        return False
    raise ValueError('"is_correct" must be true or false')


class RubricVerifier:
    """Asks ``model`` for ``num_votes`` independent verdicts on a set of named sections and takes the majority."""

    def __init__(self, model: Model, num_votes: int = 3, max_reasks: int = 2) -> None:
        if num_votes < 1:
            raise ValueError("num_votes must be at least 1")
        self.model = model
        self.num_votes = num_votes
        self.max_reasks = max_reasks

    def judge(self, sections: list[tuple[str, str]]) -> Verdict:
        prompt = "\n\n".join(f"## {title}\n{body}" for title, body in sections)
        messages: list[Message] = [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": prompt}]
        first = self.model.samples(messages, self.num_votes)
        usage = Usage()
        usage.add(first.usage)
        votes = [self._settle(messages, reply.content, sample, usage) for sample, reply in enumerate(first.replies)]
        passed = sum(vote.is_correct is True for vote in votes)
        failed = sum(vote.is_correct is False for vote in votes)
        log.debug("[VERIFIER] Votes: %d TRUE, %d FALSE%s", passed, failed,
                  f", {len(votes) - passed - failed} UNPARSABLE" if passed + failed < len(votes) else "")
        for number, vote in enumerate(votes, start=1):
            log.debug("[VERIFIER] Vote %d: correct=%s, feedback=%s", number, vote.is_correct, vote.feedback[:200])
        if passed == failed:
            raise VerifierError(f"the verifier reached no majority: {passed} pass, {failed} fail, "
                                f"{len(votes) - passed - failed} unparsable", [asdict(vote) for vote in votes])
        majority = passed > failed
        feedback = next(vote.feedback for vote in votes if vote.is_correct is majority)
        return Verdict(is_correct=majority, feedback=feedback, votes=votes, usage=usage)

    def _settle(self, messages: list[Message], content: str | None, sample: int, usage: Usage) -> Vote:
        """Read one vote, asking that sample again (at most ``max_reasks`` times) while it is unparsable."""
        conversation = list(messages)
        for attempt in range(1, self.max_reasks + 2):
            try:
                verdict = extract_tagged_json(content, TAG)
                return Vote(is_correct=_as_bool(verdict.get("is_correct")),
                            feedback=str(verdict.get("feedback", "")), attempts=attempt)
            except ValueError as exc:
                reason = str(exc)
            if attempt > self.max_reasks:
                break
            conversation += [{"role": "assistant", "content": content or ""},
                             {"role": "user", "content": f"Your reply could not be read: {reason}. End it with "
                              f'exactly one <{TAG}>{{"feedback": "...", "is_correct": true or false}}</{TAG}> '
                              "block."}]
            completion = self.model.chat(conversation, sample=sample)
            usage.add(completion.usage)
            content = completion.replies[0].content
        return Vote(is_correct=None, feedback=f"unparsable verdict: {reason}", attempts=self.max_reasks + 1)
