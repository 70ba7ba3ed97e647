"""Working days as a suite, for every task library: each day is one episode in a world of its own, its tasks scored
by their families; the mentor's feedback on a day, and a reflection on it, carry over to the day after (in arms:
told nothing, told the feedback, told the reflection's notes), as often as a library chains its days."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from occubench.core.agent import ScriptedAgent
from occubench.core.environment import Environment
from occubench.core.suite import Suite
from occubench.core.task import Task
from occubench.core.tools import clip
from occubench.core.trajectory import Trajectory
from occubench.core.verifier import Verdict
from occubench.llm import Message, Model
from occubench.sandbox.provider import Provider
from occubench.sandbox.workspace import remove
from occubench.workplace.environment import WorkplaceEnvironment
from occubench.workplace.people import ModelColleagues
from occubench.workplace.record import DayRecord, TaskScore, mean_score
from occubench.workplace.world import DayTask, Family, Toolset, World

#: The arms of a day after, in order: what the agent starts it with.
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


@dataclass(frozen=True)
class Library:
    """What a task library gives the engine: its days' tools, its families by name, what the agent is told at the
    start of a day (the day, the guidance tier, what it is told of the days before), and whether some checks are
    left to a judge (the verifier role)."""

    toolset: Toolset
    families: Callable[[str], Family]
    instruction: Callable[[PlannedDay, int, str], str]
    domain: str
    judged: bool = False


@dataclass(frozen=True)
class PlannedDay:
    """A day to play: its id and scenario, its tasks, how its world is built into a fresh folder, when it starts,
    the category and difficulty level its results are filed under, when it ends, the tools its tasks need beyond
    the library's, and the day it follows (whose results it is told of; "" for a first day)."""

    task_id: str
    scenario: str
    tasks: tuple[DayTask, ...]
    build: Callable[[Path], World]
    start: datetime
    category: str
    difficulty: int
    end: datetime | None = None
    tools: frozenset[str] = frozenset()
    after: str = ""


def copied(world: World) -> Callable[[Path], World]:
    """A builder that copies ``world``'s folders (generated once) for each episode."""
    def build(root: Path) -> World:
        shutil.copytree(world.workspace, root / "workspace", symlinks=True)
        shutil.copytree(world.cloud_disk, root / "cloud_disk", symlinks=True)
        return replace(world, workspace=root / "workspace", cloud_disk=root / "cloud_disk")
    return build


def feedback(scores: Sequence[TaskScore], notes: str | None = None) -> str:
    """What the mentor tells the agent after a day: each task's state and what it missed (never the answers), and
    the agent's own notes."""
    lines = []
    for score in scores:
        lines.append(f"- {score.family.replace('_', ' ')} task: "
                     f"{'done' if score.success else f'{score.points:g} of {score.full:g} points'}")
        lines += [f"  - {note}" for note in score.notes]
    if notes:
        lines.append(f"Your own notes: {notes}")
    return "Mentor's feedback:\n" + "\n".join(lines)


def reflect(model: Model, trajectory: Trajectory, mentor: str) -> str:
    """Notes ``model`` writes on a finished day from its record and the mentor's feedback (never the answers)."""
    messages: list[Message] = [
        {"role": "system", "content": REFLECTION_PROMPT},
        {"role": "user", "content": f"Your day:\n{clip(trajectory.render(), REFLECTION_INPUT_CHARS)}\n\n{mentor}"}]
    reply = model.chat(messages).replies[0].content or ""
    notes = reply.partition("<notes>")[2].partition("</notes>")[0] if "<notes>" in reply else reply
    return clip(notes.strip(), NOTES_CHARS)


def told(arm: str, record: DayRecord, before: str = "") -> str:
    """What an arm's agent starts the next day with, after a day of ``record`` it was told ``before`` for: the
    reflection arm keeps every earlier reflection (repeated self-evolution), the notes arm the last feedback."""
    if arm == "notes":
        return record.day_feedback
    if arm == "reflection" and record.reflection_notes:
        return "\n\n".join(filter(None, [before, f"Your notes after reflecting on a day:\n{record.reflection_notes}"]))
    return before if arm == "reflection" else ""


class DaySuite(Suite):
    """The ``days`` of ``library`` as episodes, one per day and arm of ``told`` (task id → arm → what the agent is
    told; a day absent from it is a first day): shell commands run by ``provider``, colleagues played by
    ``colleagues`` (else by their rules), judged checks put to ``judge`` (else they score nothing), tasks shown with
    ``guidance`` tiers of hints, and each finished day reflected on by ``reflector``."""

    def __init__(self, library: Library, days: Sequence[PlannedDay], *, provider: Provider | None = None,
                 colleagues: Model | None = None, judge: Model | None = None, guidance: int = 0,
                 told: Mapping[str, Mapping[str, str]] | None = None, reflector: Model | None = None) -> None:
        self.library, self.provider, self.guidance, self.reflector = library, provider, guidance, reflector
        self.colleagues = ModelColleagues(colleagues) if colleagues else None
        self.judge = (lambda prompt: judge.chat([{"role": "user", "content": prompt}]).replies[0].content or "") \
            if judge else None
        self.days: dict[str, PlannedDay] = {}
        self._tasks = []
        for planned in days:
            arms = (told or {}).get(planned.task_id) or {"": ""}
            for arm, text in arms.items():
                task_id = f"{planned.task_id}-{arm}" if len(arms) > 1 else planned.task_id
                self.days[task_id] = planned
                self._tasks.append(Task(
                    task_id=task_id, instruction=library.instruction(planned, guidance, text),
                    scenario=planned.scenario, category=planned.category, domain=library.domain,
                    difficulty=planned.difficulty, env_name=planned.scenario,
                    metadata={"day": planned.task_id, **({"arm": arm} if arm else {}),
                              **({"after": planned.after} if planned.after else {})}))

    def tasks(self) -> list[Task]:
        return self._tasks

    def world(self, task: Task) -> Environment:
        planned = self.days[str(task.task_id)]
        root = Path(tempfile.mkdtemp(prefix="occubench-day-"))
        try:
            world = planned.build(root)
        except BaseException:
            remove(root)
            raise
        toolset = replace(self.library.toolset, tools=self.library.toolset.tools | planned.tools)
        return _Episode(root, world, planned.tasks, toolset, self.library.families, provider=self.provider,
                        responder=self.colleagues, guidance=self.guidance)

    def verify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        instance = env.unwrapped
        assert isinstance(instance, WorkplaceEnvironment)
        outcome = instance.outcome()
        outcome.judge = self.judge
        scores = []
        for planned in instance.tasks:
            score = self.library.families(planned.family).evaluate(planned, outcome)
            scores.append(TaskScore(planned.id or planned.family, planned.family, planned.category,
                                    planned.difficulty, score.fraction, score.points >= score.full,
                                    float(score.points), float(score.full), score.notes))
        day_score = mean_score(scores)
        arm = task.metadata.get("arm", "")
        record = DayRecord(day_score, len(scores), tuple(scores), feedback(scores, instance.notes),
                           phase=2 if "after" in task.metadata else 1, arm=arm,
                           day_one=task.metadata.get("after", ""))
        if self.reflector:
            record = replace(record, reflection_model=self.reflector.name,
                             reflection_notes=reflect(self.reflector, trajectory, feedback(scores)))
        done = sum(score.success for score in scores)
        return Verdict(is_correct=done == len(scores), score=day_score, details=record.to_details(),
                       feedback=f"day score {day_score:.2f}: {done} of {len(scores)} tasks earned every point ("
                                + "; ".join(f"{s.task_id} {s.family}: {s.score:.2f}" for s in scores) + ")")


class _Episode(WorkplaceEnvironment):
    """A day played in folders of its own, removed when the episode closes."""

    def __init__(self, root: Path, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.root = root

    def close(self) -> None:
        remove(self.root)  # however deep or odd what the agent left


def reference_agent(calls: Callable[[Task], list[tuple[str, dict]]]) -> ScriptedAgent:
    """Plays each day's ``calls`` (a library's reference solution; no model)."""
    return ScriptedAgent(lambda task: (calls(task), "All tasks are done for today."))
