"""Workplace days as a suite: each day is one episode; its checkpoints decide; feedback carries over to day two."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict

from occubench.agent import ScriptedAgent
from occubench.environment import Environment
from occubench.llm import Message, Model
from occubench.suite import Suite
from occubench.task import Task
from occubench.trajectory import Trajectory
from occubench.verifier import Verdict
from occubench.workplace.environment import WorkplaceEnvironment
from occubench.workplace.generate import reference_schedule
from occubench.workplace.model import Colleague, Day
from occubench.workplace.scoring import TaskScore, score_day

WORKPLACE_SUITE = "workplace"


def instruction(day: Day, carried_over: str = "") -> str:
    text = (f"It is {day.start}: your working day as a new employee starts now and ends at {day.end}. Your tasks "
            "are in your task list (list_tasks); more can arrive during the day, for instance in meetings. Each has "
            "a deadline and a priority, and every action you take uses up time. Information you do not have is "
            "held by colleagues or kept in files: find it or ask for it (list_colleagues, send_message) rather "
            "than guess. When your work is done, call finish_day.")
    return text + (f"\n\nFrom your previous working day:\n{carried_over}" if carried_over else "")


def feedback(scores: Sequence[TaskScore | dict], notes: str | None = None) -> str:
    """What the agent is told after a day: each missed checkpoint's feedback (no answers), and its own notes."""
    lines = []
    for score in (asdict(s) if isinstance(s, TaskScore) else s for s in scores):
        missed = [c for c in score["checkpoints"] if not c["passed"]]
        state = "done" if not missed else f"{len(missed)} checkpoint(s) missed"
        lines.append(f"- {score['family'].replace('_', ' ')} task: {state}")
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


class WorkplaceSuite(Suite):
    def __init__(self, days: Sequence[Day], npc: Model | None = None,
                 carried_over: dict[str, str] | None = None, guidance: int = 0) -> None:
        self.days = {day.id: day for day in days}
        self.npc = npc
        self.guidance = guidance
        self._tasks = [
            Task(task_id=day.id, instruction=instruction(day, (carried_over or {}).get(day.id, "")),
                 scenario="Workplace day", category=day_category(day), domain="Office work",
                 difficulty=1 + min(2, sum(t.difficulty == "hard" for t in day.tasks)), env_name=day.id,
                 metadata={"day": day})
            for day in days
        ]

    def tasks(self) -> list[Task]:
        return self._tasks

    def make_env(self, task: Task) -> Environment:
        day = self.days[task.env_name]
        return WorkplaceEnvironment(day, LLMColleague(self.npc) if self.npc else None, guidance=self.guidance)

    def verify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        day, instance = self.days[task.env_name], env.unwrapped
        assert isinstance(instance, WorkplaceEnvironment)
        scores = score_day(day, instance)
        day_score = sum(s.score for s in scores) / len(scores)
        summary = "; ".join(f"{s.task_id} {s.family}: {s.score:.2f}" for s in scores)
        return Verdict(is_correct=all(s.success for s in scores), feedback=f"day score {day_score:.2f} ({summary})",
                       details={"day_score": day_score, "n_tasks": len(day.tasks),
                                "task_scores": [asdict(s) for s in scores],
                                "day_feedback": feedback(scores, instance.notes)}, score=day_score)


def reference_agent() -> ScriptedAgent:
    """Plays each day's reference schedule (no model)."""
    def script(task: Task) -> tuple[list[tuple[str, dict]], str]:
        calls, _ = reference_schedule(task.metadata["day"])
        return [(call["tool"], call["arguments"]) for call in calls], "All tasks are done for today."
    return ScriptedAgent(script)


