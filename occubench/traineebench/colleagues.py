"""The model roles a Trainee-Bench day can use: colleagues played by the colleague role (``--npc-model``), as the
reference has every employee played by a model told its name, position and the reply rules the day's tasks gave it;
and the judge of the checks the reference leaves to a model, played by the verifier role (``--verifier-model``).
Without them, colleagues answer with their rules (:class:`~occubench.traineebench.environment.RuleResponder`) and
the judged checks score nothing."""

from __future__ import annotations

from occubench.core.tools import clip
from occubench.llm import Message as ChatMessage
from occubench.llm import Model
from occubench.traineebench.company import AGENT
from occubench.traineebench.family import Employee, Message

#: The longest reply a colleague's model may give the agent (a model's reply can be any size).
REPLY_CHARS = 4_000
#: The heading of a colleague's reply rules in its prompt.
INSTRUCTIONS = "Your instructions:"


def colleague_prompt(colleague: Employee, rules: list[str]) -> str:
    """What a colleague's model is told: who it is, that the intern is to be sent to the manuals and given only the
    replies its rules name, and those rules."""
    told = "\n".join(f"- {rule}" for rule in rules) or "- (none: you know nothing specific to the intern's tasks)"
    return (f"You play {colleague.name}, {colleague.position} in the {colleague.department} department, answering "
            f"chat messages from {AGENT}, a new intern who does not yet know how things are done here. Help her "
            "only as your instructions below say: point her to the manual they name, or give the exact reply they "
            "name. Do not add other information, details or advice of your own, and do not do her work for her. "
            f"Keep replies short.\n\n{INSTRUCTIONS}\n" + told)


class ModelColleagues:
    """Every colleague played by ``model``, each with the conversation the agent has had with them so far."""

    def __init__(self, model: Model) -> None:
        self.model = model

    def reply(self, colleague: Employee, rules: list[str], message: str, history: list[Message]) -> str:
        chat: list[ChatMessage] = [{"role": "system", "content": colleague_prompt(colleague, rules)}]
        chat += [{"role": "user" if said.sender == AGENT else "assistant", "content": said.text} for said in history]
        chat.append({"role": "user", "content": message})
        return clip(self.model.chat(chat).replies[0].content or "", REPLY_CHARS)


class Judge:
    """The reference's LLM-judged checks put to ``model``: a prompt in, its reply's text out."""

    def __init__(self, model: Model) -> None:
        self.model = model

    def __call__(self, prompt: str) -> str:
        return self.model.chat([{"role": "user", "content": prompt}]).replies[0].content or ""
