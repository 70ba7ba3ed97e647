"""The people of a working day: colleagues, what each knows (clues, said when a message asks for them; a clue
without a trigger is a standing instruction, said to any message), the company they work in, the messages the
agent exchanges with them, and who answers for them: their own rules offline, or a model (the colleague role)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from occubench.core.tools import clip
from occubench.llm import Message as ChatMessage
from occubench.llm import Model

#: The agent's own name: nobody else in a company has it.
AGENT = "Alice Smith"
#: The longest reply a colleague's model may give the agent (a model's reply can be any size).
REPLY_CHARS = 4_000
#: The heading of a colleague's instructions in its prompt (the mock server finds the colleague role by it).
INSTRUCTIONS = "Your instructions:"


def _words(text: str) -> list[str]:
    """Lower-case words: runs of letters and digits, so whitespace and punctuation only separate them."""
    return re.findall(r"[^\W_]+", text.lower())


def _mentions(words: list[str], trigger: str) -> bool:
    """Whether ``words`` hold ``trigger``'s words in a row, each whole: "end" is not in "send". The last word also
    matches its plural ("limit" → "limits", "policy" → "policies") or, when the trigger ends in ``*``, any word it
    begins ("mandat*" → "mandatory")."""
    *head, last = _words(trigger)
    forms = {last, last + "s", last + "es", last[:-1] + "ies" if last.endswith("y") else last}
    size = len(head)
    return any(words[i:i + size] == head and
               (words[i + size].startswith(last) if trigger.endswith("*") else words[i + size] in forms)
               for i in range(len(words) - size))


@dataclass
class Clue:
    id: str
    text: str
    #: Every group must be met by the message, each group by any one of its triggers: a word or a phrase, matched
    #: as whole words (see :func:`_mentions`). No group: said to any message.
    trigger: list[list[str]]

    def asked_by(self, message: str) -> bool:
        """Whether ``message`` asks for this clue: it meets every group of the trigger."""
        words = _words(message)
        return all(any(_mentions(words, trigger) for trigger in group) for group in self.trigger)


@dataclass
class Colleague:
    name: str
    role: str
    department: str
    clues: list[Clue] = field(default_factory=list)

    def __hash__(self) -> int:  # names are unique in a company; families keep colleagues in sets
        return hash(self.name)


@dataclass
class Company:
    """The day's colleagues and their named chat groups (name → members)."""

    employees: list[Colleague]
    groups: dict[str, list[str]] = field(default_factory=dict)

    def in_department(self, department: str) -> list[Colleague]:
        return [e for e in self.employees if e.department == department]

    def manager_of(self, department: str) -> Colleague:
        """The department's manager (its first employee whose role says so, else its first employee)."""
        staff = self.in_department(department)
        if not staff:
            raise KeyError(f"no department {department!r}")
        return next((e for e in staff if "Manager" in e.role), staff[0])

    @property
    def rules(self) -> dict[str, list[str]]:
        """Each colleague's standing instructions, by name (those who have any)."""
        rules = {e.name: [clue.text for clue in e.clues if not clue.trigger] for e in self.employees}
        return {name: said for name, said in rules.items() if said}

    def add_rule(self, who: Colleague | str, rule: str) -> None:
        """Give a colleague a standing instruction: said whatever the agent asks."""
        name = who if isinstance(who, str) else who.name
        next(e for e in self.employees if e.name == name).clues.append(Clue("rule", rule, []))


@dataclass(frozen=True)
class Message:
    sender: str
    recipient: str
    text: str
    at: datetime


class RuleColleagues:
    """Offline colleagues: each says the clues the message asks for (:meth:`Clue.asked_by`), standing instructions
    always, so a request for everything asks for nothing in particular; or says it cannot help."""

    def reply(self, colleague: Colleague, message: str, history: list[Message]) -> str:
        released = [clue.text for clue in colleague.clues if clue.asked_by(message)]
        if released:
            return " ".join(released)
        return (f"Hi, this is {colleague.name} ({colleague.role}, {colleague.department}). I'm not sure what you "
                "need from me — could you say exactly what you are looking for?")


def colleague_prompt(colleague: Colleague) -> str:
    """What a colleague's model is told: who it is, to help only as its instructions say, and those instructions —
    a clue with a trigger to be shared only when the message asks about it in those words (the condition the
    offline colleagues apply)."""
    told = [f"- {clue.text}" + (" (share this only when the message asks about " + "; and about ".join(
        " or ".join(f'"{t}"' for t in group) for group in clue.trigger) + ")" if clue.trigger else "")
            for clue in colleague.clues]
    return (f"You play {colleague.name}, {colleague.role} in the {colleague.department} department, answering chat "
            f"messages from {AGENT}, a new intern who does not yet know how things are done here. Reply in one to "
            "three sentences, only as your instructions below say: point her to what they name, give the reply "
            "they name, share a fact only when its condition is met (a plural counts; a * stands for any ending). A "
            "request for everything, for the answers or the ground truth, or for help does not ask about anything "
            "in particular. Never "
            f"invent facts, numbers or names, and do not do her work for her.\n\n{INSTRUCTIONS}\n"
            + ("\n".join(told) or "- (none: you know nothing specific to the intern's tasks)"))


class ModelColleagues:
    """Every colleague played by ``model``, each with the conversation the agent has had with them so far."""

    def __init__(self, model: Model) -> None:
        self.model = model

    def reply(self, colleague: Colleague, message: str, history: list[Message]) -> str:
        chat: list[ChatMessage] = [{"role": "system", "content": colleague_prompt(colleague)}]
        chat += [{"role": "user" if said.sender == AGENT else "assistant", "content": said.text} for said in history]
        chat.append({"role": "user", "content": message})
        return clip(self.model.chat(chat).replies[0].content or "", REPLY_CHARS)
