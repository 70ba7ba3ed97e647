"""Workplace days as a suite: each day is one episode; its checkpoints decide; feedback carries over to day two."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from occubench.core.agent import ScriptedAgent
from occubench.core.environment import Environment
from occubench.core.suite import Suite
from occubench.core.task import Task
from occubench.core.tools import clip
from occubench.core.trajectory import Trajectory
from occubench.core.verifier import Verdict
from occubench.llm import Message, Model
from occubench.workplace.environment import WorkplaceEnvironment
from occubench.workplace.model import Colleague, Day
from occubench.workplace.record import DayRecord, mean_score
from occubench.workplace.schedule import reference_schedule
from occubench.workplace.scoring import TaskScore, score_day

WORKPLACE_SUITE = "workplace"


def instruction(day: Day, carried_over: str = "") -> str:
    text = (f"It is {day.start}: your working day as a new employee starts now and ends at {day.end}. Your tasks "
            "are in your task list (list_tasks); more can arrive during the day, for instance in meetings. Each has "
            "a deadline and a priority, and every action you take uses up time. Information you do not have is "
            "held by colleagues or kept in files: find it or ask for it (list_colleagues, send_message) rather "
            "than guess. When your work is done, call finish_day.")
    return text + (f"\n\nFrom your previous working day:\n{carried_over}" if carried_over else "")


def feedback(scores: Sequence[TaskScore], notes: str | None = None) -> str:
    """What the agent is told after a day: each missed checkpoint's feedback (no answers), and its own notes."""
    lines = []
    for score in scores:
        missed = [c for c in score.checkpoints if not c["passed"]]
        state = "done" if not missed else f"{len(missed)} checkpoint(s) missed"
        lines.append(f"- {score.family.replace('_', ' ')} task: {state}")
        lines += [f"  - {c['name']}{' (done after the deadline)' if c['late'] else ''}: {c['feedback']}"
                  for c in missed]
    if notes:
        lines.append(f"Your own notes: {notes}")
    return "Mentor's feedback:\n" + "\n".join(lines)


def day_category(day: Day) -> str:
    """The most common category among the day's tasks; of those tied, the one met first in task order."""
    counts = Counter(task.category for task in day.tasks)
    return max(counts, key=counts.__getitem__)  # max keeps the first of equals; a Counter keeps first-seen order


class LLMColleague:
    """A colleague played by a model: converses naturally, shares a clue only when its condition is met."""

    def __init__(self, model: Model) -> None:
        self.model = model

    def reply(self, colleague: Colleague, message: str, history: list[tuple[str, str]]) -> str:
        # The condition the offline colleagues apply (Clue.asked_by), in words: the message must name the subject.
        facts = "\n".join(f"- {clue.text} (share this only when the message asks about " +
                          "; and about ".join(" or ".join(f'"{t}"' for t in group) for group in clue.trigger) + ")"
                          for clue in colleague.clues)
        system = (f"You are {colleague.name}, {colleague.role} in {colleague.department}, answering a new "
                  f"colleague's chat message. Reply in one to three sentences. What you know:\n"
                  f"{facts or '- nothing specific to their work'}\nShare a fact only when the message itself asks "
                  "about it in one of those words or phrases (a plural counts; a * stands for any ending). A request "
                  "for everything, for the answers or the ground truth, or for help does not ask about anything in "
                  "particular: share nothing then, and ask what they need. Never invent facts, numbers or names "
                  "beyond these.")
        messages: list[Message] = [{"role": "system", "content": system}]
        for asked, answered in history:
            messages += [{"role": "user", "content": asked}, {"role": "assistant", "content": answered}]
        messages.append({"role": "user", "content": message})
        completion = self.model.chat(messages)
        return completion.replies[0].content or ""


#: The arms of a learning run's day two, in order: what the agent starts it with (see :class:`DayTwo`).
ARMS = ("none", "notes", "reflection")

REFLECTION_PROMPT = """You have just finished a working day as a new employee. Below are the record of your day \
(each action you took and what it returned) and your mentor's feedback on each task. Your next day brings the same \
kinds of tasks with other details: other figures, files and people. Reflect on what went wrong and why, then write \
notes for your next day: lessons that will still hold then (whom to ask for what, where information is kept, what \
to check before you answer, how to plan around deadlines and meetings), not this day's figures. At most 300 words, \
between <notes> and </notes>."""

#: The longest day record a reflection reads: its start and end are kept (see ``occubench.core.tools.clip``).
REFLECTION_INPUT_CHARS = 60_000
NOTES_CHARS = 4_000


def reflect(model: Model, trajectory: Trajectory, mentor: str) -> str:
    """Notes ``model`` writes on a finished day from its record and the mentor's feedback (never the answers)."""
    messages: list[Message] = [
        {"role": "system", "content": REFLECTION_PROMPT},
        {"role": "user", "content": f"Your day:\n{clip(trajectory.render(), REFLECTION_INPUT_CHARS)}\n\n{mentor}"}]
    reply = model.chat(messages).replies[0].content or ""
    notes = reply.partition("<notes>")[2].partition("</notes>")[0] if "<notes>" in reply else reply
    return clip(notes.strip(), NOTES_CHARS)


@dataclass(frozen=True)
class DayTwo:
    """A learning run's second day: the first day's task id and, per arm, what the agent is told of it."""

    day_one: str
    told: dict[str, str]


class WorkplaceSuite(Suite):
    """One task per day; with ``day_two`` (day id → :class:`DayTwo`), one per day and arm instead. A ``reflector``
    reflects on each finished day, for the reflection arm of the day after."""

    def __init__(self, days: Sequence[Day], npc: Model | None = None, guidance: int = 0, *,
                 day_two: dict[str, DayTwo] | None = None, reflector: Model | None = None) -> None:
        self.days = {day.id: day for day in days}
        self.npc = npc
        self.guidance = guidance
        self.reflector = reflector
        self._tasks = []
        for day in days:
            second = (day_two or {}).get(day.id)
            for arm, told in second.told.items() if second else [(None, "")]:
                self._tasks.append(Task(
                    task_id=f"{day.id}-{arm}" if arm else day.id, instruction=instruction(day, told),
                    scenario="Workplace day", category=day_category(day), domain="Office work",
                    difficulty=1 + min(2, sum(t.difficulty == "hard" for t in day.tasks)), env_name=day.id,
                    metadata={"day": day, **({"day_two": (arm, second.day_one)} if second else {})}))

    def tasks(self) -> list[Task]:
        return self._tasks

    def world(self, task: Task) -> Environment:
        day = self.days[task.env_name]
        return WorkplaceEnvironment(day, LLMColleague(self.npc) if self.npc else None, guidance=self.guidance)

    def verify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        day, instance = self.days[task.env_name], env.unwrapped
        assert isinstance(instance, WorkplaceEnvironment)
        scores = score_day(day, instance)
        day_score = mean_score(scores)
        summary = "; ".join(f"{s.task_id} {s.family}: {s.score:.2f}" for s in scores)
        arm, day_one = task.metadata.get("day_two", ("", ""))
        record = DayRecord(day_score, len(day.tasks), tuple(scores), feedback(scores, instance.notes),
                           phase=2 if arm else 1, arm=arm, day_one=day_one)
        if self.reflector:
            record = replace(record, reflection_model=self.reflector.name,
                             reflection_notes=reflect(self.reflector, trajectory, feedback(scores)))
        return Verdict(is_correct=all(s.success for s in scores), feedback=f"day score {day_score:.2f} ({summary})",
                       details=record.to_details(), score=day_score)


def reference_agent() -> ScriptedAgent:
    """Plays each day's reference schedule (no model)."""
    def script(task: Task) -> tuple[list[tuple[str, dict]], str]:
        calls, _ = reference_schedule(task.metadata["day"])
        return [(call["tool"], call["arguments"]) for call in calls], "All tasks are done for today."
    return ScriptedAgent(script)


