"""Ask a model for output in a required form, and ask again, showing it what was wrong, while its reply cannot be
used: the one loop every role that reads a model's output (the world model, the judge, synthesis) goes through.

The roles keep their own words, error types and records: this says what happened (the value, or the problems with
the last reply, and the attempts), and the client has already counted every request in the usage ledger."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from occubench.llm.budget import reask_reply
from occubench.llm.model import Model
from occubench.llm.types import Message, Reply
from occubench.util.aio import run_sync

log = logging.getLogger("occubench")

T = TypeVar("T")


class Unusable(ValueError):
    """A reply with several things wrong, each told to the model on a line of its own. Any other ``ValueError`` a
    parser raises is one problem, its message."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Parsed(Generic[T]):
    """What asking came to."""

    #: The parsed output; None when the last reply still could not be used.
    value: T | None
    #: Replies read, the first included.
    attempts: int
    #: What was wrong with the last reply; empty when it was used.
    problems: list[str] = field(default_factory=list)
    #: The last reply's text.
    reply: str | None = None

    @property
    def reason(self) -> str:
        return "; ".join(self.problems)


def ask_json(model: Model, messages: list[Message], parse: Callable[[str | None], T], *, reasks: int,
             correction: Callable[[list[str]], str], label: str, first: Reply | None = None, sample: int = 0,
             echo_whole: bool = False) -> Parsed[T]:
    """:func:`aask_json`, for synchronous code (synthesis)."""
    return run_sync(aask_json(model, messages, parse, reasks=reasks, correction=correction, label=label, first=first,
                              sample=sample, echo_whole=echo_whole))


async def aask_json(model: Model, messages: list[Message], parse: Callable[[str | None], T], *, reasks: int,
                    correction: Callable[[list[str]], str], label: str, first: Reply | None = None, sample: int = 0,
                    echo_whole: bool = False) -> Parsed[T]:
    """Parse ``model``'s reply to ``messages`` with ``parse``, which raises ``ValueError`` for a reply it cannot use;
    such a reply goes back to the model with ``correction(problems)``, at most ``reasks`` times.

    ``first`` is a reply already in hand (a judge's vote from one request for all votes); ``sample`` is the sample
    asked again. A reply goes back as its end only (:func:`~occubench.llm.budget.reask_reply`), which the prompt's
    context budget leaves room for; ``echo_whole`` sends it whole, for a correction round that rewrites its whole
    answer. Each unusable reply is logged (``--debug``) after ``label``."""
    conversation = list(messages)
    if first is None:
        first = (await model.achat(conversation, sample=sample)).replies[0]
    content = first.content
    attempt = 1
    while True:
        try:
            return Parsed(parse(content), attempt, reply=content)
        except ValueError as exc:
            problems = exc.problems if isinstance(exc, Unusable) else [str(exc)]
        log.debug("%s (attempt %d): %s", label, attempt, "; ".join(problems))
        if attempt > reasks:
            return Parsed(None, attempt, problems, content)
        conversation += [{"role": "assistant", "content": (content or "") if echo_whole else reask_reply(content)},
                         {"role": "user", "content": correction(problems)}]
        content = (await model.achat(conversation, sample=sample)).replies[0].content
        attempt += 1
