"""Trainee-Bench days as a suite: an episode per day of a config's scenarios, the agent told the day's tasks and
their deadlines, each task scored by its family in the reference's points. The verdict passes when every task earned
its full points; its details hold each task's points and notes (the reference's mentor feedback) for the reference
figures (:mod:`occubench.traineebench.scoring`)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from occubench.core.environment import Environment
from occubench.core.results import Result
from occubench.core.suite import Suite
from occubench.core.task import Task
from occubench.core.trajectory import Trajectory
from occubench.core.verifier import Verdict
from occubench.llm import Model
from occubench.sandbox.provider import Provider
from occubench.sandbox.workspace import remove
from occubench.traineebench.colleagues import Judge, ModelColleagues
from occubench.traineebench.company import AGENT
from occubench.traineebench.day import BuiltDay
from occubench.traineebench.environment import TraineeDay
from occubench.traineebench.families import family
from occubench.traineebench.family import Day

CATEGORY = "Trainee-Bench"


@dataclass(frozen=True)
class PlannedDay:
    scenario: str
    name: str
    built: BuiltDay

    @property
    def task_id(self) -> str:
        return f"{self.scenario}/{self.name}"


def instruction(planned: PlannedDay, told: str = "") -> str:
    tasks = "\n\n".join(f"{number}. {spec.family} (deadline {spec.deadline.isoformat(timespec='minutes')}):\n"
                        f"{spec.description}" for number, spec in enumerate(planned.built.tasks, start=1))
    return (f"You are {AGENT}, a new intern. Today is {planned.built.day.start:%A %d %B %Y}; your working day starts "
            f"at {planned.built.day.start:%H:%M}. Your workspace is the folder your shell commands run in; the "
            "company's shared files are on the cloud disk. When you do a task for the first time, ask the "
            "colleagues it concerns how it is done before you start. Call done when you have finished.\n\n"
            f"Your tasks:\n\n{tasks}" + (f"\n\n{told}" if told else ""))


def mentor_feedback(result: Result) -> str:
    """What the mentor tells the agent after a day, as the reference's continual-learning runs do: each task's
    notes (what was missed); nothing when every task earned its points or the day was not scored."""
    rows = result.verdict_details.get("reference_scores") if result.ok else None
    tips = [f"On {row['family']}:\n" + "\n".join(f"- {note}" for note in row["notes"])
            for row in rows or [] if isinstance(row, dict) and row.get("notes")]
    return "Your mentor's feedback on your previous working day:\n\n" + "\n\n".join(tips) if tips else ""


class TraineeBenchSuite(Suite):
    """The ``days`` as episodes: colleagues played by ``colleagues`` (else they answer with their rules), the
    judged checks put to ``judge`` (else they score nothing), and each day's agent told what ``told`` has for it
    (its mentor's feedback on the day before)."""

    def __init__(self, days: Sequence[PlannedDay], provider: Provider, *, colleagues: Model | None = None,
                 judge: Model | None = None, told: Mapping[str, str] | None = None) -> None:
        self.days = {planned.task_id: planned for planned in days}
        self.provider = provider
        self.responder = ModelColleagues(colleagues) if colleagues else None
        self.judge = Judge(judge) if judge else None
        self.told = told or {}

    def tasks(self) -> list[Task]:
        return [Task(task_id=planned.task_id, instruction=instruction(planned, self.told.get(planned.task_id, "")),
                     scenario=planned.scenario,
                     category=CATEGORY, domain="workplace", difficulty=len(planned.built.tasks),
                     env_name=planned.scenario, metadata={"day": planned.name})
                for planned in self.days.values()]

    def world(self, task: Task) -> Environment:
        """A fresh copy of the day's folders (the generated ones stay as they were made) for this episode."""
        built = self.days[str(task.task_id)].built
        root = Path(tempfile.mkdtemp(prefix="traineebench-day-"))
        shutil.copytree(built.day.workspace, root / "workspace", symlinks=True)
        shutil.copytree(built.day.cloud_disk, root / "cloud_disk", symlinks=True)
        day = replace(built.day, workspace=root / "workspace", cloud_disk=root / "cloud_disk")
        return _Episode(day, self.provider, self.responder, root)

    def verify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        world = env.unwrapped
        assert isinstance(world, TraineeDay)
        outcome = world.outcome()
        outcome.judge = self.judge
        scores = [(spec, family(spec.family).evaluate(spec, outcome))
                  for spec in self.days[str(task.task_id)].built.tasks]
        rows = [{"family": spec.family, "points": score.points, "full": score.full, "notes": list(score.notes)}
                for spec, score in scores]
        done = sum(score.points >= score.full for _, score in scores)
        return Verdict(done == len(scores), f"{done} of {len(scores)} tasks earned their full points",
                       details={"reference_scores": rows})


class _Episode(TraineeDay):
    """A day played in folders of its own, removed when the episode closes."""

    def __init__(self, day: Day, provider: Provider, responder: ModelColleagues | None, root: Path) -> None:
        super().__init__(day, provider, responder)
        self.root = root

    def close(self) -> None:
        remove(self.root)  # however deep or odd what the agent left
