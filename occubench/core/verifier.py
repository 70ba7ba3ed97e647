"""Rubric verification: independent judge votes on a trajectory, majority wins.

A vote the judge cannot put in the required form is asked again (bounded) and, if it stays unparsable, is
left out of the count — never counted as FAIL. No majority among the parsable votes is a verifier error, recorded
as such, so a broken judge cannot silently fail an agent.

Every verdict is reached through :func:`averdict`: a check that meets output of the agent's it cannot take (an
:class:`~occubench.errors.AgentOutputError`: folders too deep, a file too large, a link) fails the episode with 0
points and says why, as any other failed check does; it is never an unscored error the next run would retry.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Awaitable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from occubench.errors import AgentOutputError, VerifierError
from occubench.llm import Message, Model, Parsed, aask_json, extract_tagged_json
from occubench.llm.budget import cut_middle, prompt_chars
from occubench.util.aio import run_sync

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
    feedback: str = ""
    attempts: int = 1


@dataclass
class Verdict:
    is_correct: bool
    feedback: str
    votes: list[Vote] = field(default_factory=list)
    #: What a kind of world adds beside the verdict (code checks, state diff, a judge's label), kept in the
    #: result's ``verdict_details``.
    details: dict[str, Any] = field(default_factory=dict)
    #: The messages the judge was sent, if a model judged (kept once per run directory, for the viewer).
    prompt: list[Message] = field(default_factory=list)
    #: A graded outcome in [0, 1] where the world has one (a workplace day's checkpoint score); else the verdict.
    score: float | None = None

    @property
    def reward(self) -> float:
        return float(self.is_correct) if self.score is None else self.score


async def averdict(judging: Awaitable[Verdict]) -> Verdict:
    """The verdict ``judging`` reaches (a suite's ``averify``); an :class:`AgentOutputError` raised by any of its
    checks is the agent's failure: 0 points, the error's message as feedback (kept in ``details`` too)."""
    try:
        return await judging
    except AgentOutputError as exc:
        return Verdict(is_correct=False, feedback=f"the agent's output cannot be scored: {exc}", score=0.0,
                       details={"agent_output": str(exc)})


def _as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "pass", "passed", "yes", "correct"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "fail", "failed", "no", "incorrect"):
        return False
    raise ValueError('"is_correct" must be true or false')


class _Jury:
    """Independent votes on one prompt: one request for all of them, then each unparsable vote asked again (at
    most ``max_reasks`` times) on its own."""

    def __init__(self, model: Model, num_votes: int, max_reasks: int, system: str, tag: str, form: str,
                 context: int | None = None) -> None:
        if num_votes < 1:
            raise ValueError("num_votes must be at least 1")
        self.model, self.num_votes, self.max_reasks = model, num_votes, max_reasks
        self.system, self.tag, self.form = system, tag, form
        #: Characters the sections may take in all, from the model's context window; None: no limit.
        budget = prompt_chars(context, model.params)
        self.budget = None if budget is None else max(0, budget - len(system))

    def prompt(self, sections: list[tuple[str, str]]) -> tuple[list[Message], int]:
        """The messages, and how many characters were cut from the sections' middles (the longest first) to fit
        the context window."""
        sections, cut = _fit(sections, self.budget)
        return [{"role": "system", "content": self.system},
                {"role": "user", "content": "\n\n".join(f"## {title}\n{body}" for title, body in sections)}], cut

    async def collect(self, messages: list[Message]) -> list[Parsed[dict[str, Any]]]:
        """Per vote: the parsed object, or the reason it stayed unparsable, and the attempts it took."""
        log.debug("[VERIFIER] Asking %s for %d vote(s), prompt of %d characters", self.model.name, self.num_votes,
                  sum(len(str(m.get("content") or "")) for m in messages))
        first = await self.model.asamples(messages, self.num_votes)
        return [await aask_json(self.model, messages, partial(extract_tagged_json, tag=self.tag),
                                reasks=self.max_reasks, correction=self._correction,
                                label=f"[VERIFIER] Unparsable vote {sample + 1}", first=reply, sample=sample)
                for sample, reply in enumerate(first.replies)]

    def _correction(self, problems: list[str]) -> str:
        return (f"Your reply could not be read: {'; '.join(problems)}. End it with exactly one "
                f"<{self.tag}>{self.form}</{self.tag}> block.")


def _fit(sections: list[tuple[str, str]], budget: int | None) -> tuple[list[tuple[str, str]], int]:
    """``sections`` within ``budget`` characters: the longest bodies lose their middles first (each keeps 200
    characters at either end)."""
    excess = sum(len(title) + len(body) + 5 for title, body in sections) - budget if budget is not None else 0
    fitted, cut_total = list(sections), 0
    for index in sorted(range(len(fitted)), key=lambda i: -len(fitted[i][1])):
        if excess <= 0:
            break
        title, body = fitted[index]
        cut = min(len(body) - 400, excess + 100)  # 100: the marker's own length
        if cut > 0:
            fitted[index] = (title, cut_middle(body, cut, "the judge's context window"))
            excess -= len(body) - len(fitted[index][1])
            cut_total += cut
    return fitted, cut_total


class RubricVerifier:
    """Asks ``model`` for ``num_votes`` independent verdicts on a set of named sections and takes the majority."""

    def __init__(self, model: Model, num_votes: int = 3, max_reasks: int = 2, context: int | None = None) -> None:
        self.model = model
        self._jury = _Jury(model, num_votes, max_reasks, _SYSTEM, TAG,
                           '{"feedback": "...", "is_correct": true or false}', context)

    def judge(self, sections: list[tuple[str, str]]) -> Verdict:
        """:meth:`ajudge`, for synchronous code."""
        return run_sync(self.ajudge(sections))

    async def ajudge(self, sections: list[tuple[str, str]]) -> Verdict:
        votes = []
        prompt, cut = self._jury.prompt(sections)
        for answer in await self._jury.collect(prompt):
            try:
                if answer.value is None:
                    raise ValueError(answer.reason)
                votes.append(Vote(_as_bool(answer.value.get("is_correct")), str(answer.value.get("feedback", "")),
                                  answer.attempts))
            except ValueError as exc:
                votes.append(Vote(None, f"unparsable verdict: {exc}", answer.attempts))
        passed = sum(vote.is_correct is True for vote in votes)
        failed = sum(vote.is_correct is False for vote in votes)
        log.debug("[VERIFIER] Votes: %d TRUE, %d FALSE%s", passed, failed,
                  f", {len(votes) - passed - failed} UNPARSABLE" if passed + failed < len(votes) else "")
        for number, vote in enumerate(votes, start=1):
            log.debug("[VERIFIER] Vote %d: correct=%s, feedback=%s", number, vote.is_correct, vote.feedback[:200])
        if passed == failed:
            raise VerifierError(f"the verifier reached no majority: {passed} pass, {failed} fail, "
                                f"{len(votes) - passed - failed} unparsable", votes, prompt)
        majority = passed > failed
        feedback = next(vote.feedback for vote in votes if vote.is_correct is majority)
        return Verdict(is_correct=majority, feedback=feedback, votes=votes, prompt=prompt,
                       details={"judge_prompt_cut": cut} if cut else {})


LABELS = ("complete", "incomplete", "agent_error", "environment_error")

_LABEL_SYSTEM = f"""You diagnose an AI agent's episode in an executable environment whose success is decided by \
code checks on the final database. You receive the task, a rubric, the result of each code check, the rows the \
agent inserted, deleted or updated, and the full trajectory. Label the episode:
- complete: the task was done;
- incomplete: the agent stopped short or left required changes undone;
- agent_error: the agent did something wrong (wrong records, wrong values, invented facts, harmful changes);
- environment_error: a tool or the environment misbehaved and prevented success.
End your reply with exactly one <label>{{"feedback": "<why>", "label": "<one of {', '.join(LABELS)}>"}}</label>."""


@dataclass
class Label:
    label: str
    feedback: str
    prompt: list[Message] = field(default_factory=list)
    #: Characters cut from the prompt's middle to fit the judge's context window.
    cut: int = 0


class LabelJudge:
    """A code-augmented judge: sees the code checks and the state diff, and labels the episode by majority."""

    def __init__(self, model: Model, num_votes: int = 3, max_reasks: int = 2, context: int | None = None) -> None:
        self._jury = _Jury(model, num_votes, max_reasks, _LABEL_SYSTEM, "label",
                           f'{{"feedback": "...", "label": "{"|".join(LABELS)}"}}', context)

    def label(self, sections: list[tuple[str, str]]) -> Label:
        """:meth:`alabel`, for synchronous code."""
        return run_sync(self.alabel(sections))

    async def alabel(self, sections: list[tuple[str, str]]) -> Label:
        prompt, cut = self._jury.prompt(sections)
        replies = [answer.value for answer in await self._jury.collect(prompt)]
        labels = [(p["label"], str(p.get("feedback", ""))) for p in replies
                  if p is not None and p.get("label") in LABELS]
        counts = Counter(label for label, _ in labels)
        log.debug("[VERIFIER] Labels: %s%s", ", ".join(f"{n} {label}" for label, n in counts.items()) or "none",
                  f", {len(replies) - len(labels)} UNREADABLE" if len(labels) < len(replies) else "")
        for number, (label, feedback) in enumerate(labels, start=1):
            log.debug("[VERIFIER] Label %d: %s, feedback=%s", number, label, feedback[:200])
        if not labels:
            raise VerifierError("the judge gave no readable label", prompt=prompt)
        best = max(LABELS, key=lambda label: (counts[label], -LABELS.index(label)))
        return Label(best, next(feedback for label, feedback in labels if label == best), prompt, cut)
