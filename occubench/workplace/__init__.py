"""The day engine and our workplace days: working days with deadlines, meetings, colleagues who hold clues, a
cloud disk, a workspace and a shell, scored by each task's family; the mentor's feedback and reflections carry over
to the days after. Trainee-Bench's task library (:mod:`occubench.traineebench`) runs on the same engine."""

from occubench.workplace.environment import WorkplaceEnvironment
from occubench.workplace.generate import generate_day, generate_days, read_days, write_days
from occubench.workplace.model import Checkpoint, Day, Meeting, WorkTask, build
from occubench.workplace.people import Clue, Colleague, Company, ModelColleagues, RuleColleagues
from occubench.workplace.plugin import WORKPLACE_SUITE
from occubench.workplace.record import DayRecord, TaskScore
from occubench.workplace.report import workplace_figures
from occubench.workplace.schedule import reference_schedule
from occubench.workplace.suite import DaySuite, Library, PlannedDay
from occubench.workplace.templates import FAMILIES, Family
from occubench.workplace.validate import validate_day
from occubench.workplace.world import DayTask, Outcome, Score, World

__all__ = ["FAMILIES", "WORKPLACE_SUITE", "Checkpoint", "Clue", "Colleague", "Company", "Day", "DayRecord",
           "DaySuite", "DayTask", "Family", "Library", "Meeting", "ModelColleagues", "Outcome", "PlannedDay",
           "RuleColleagues", "Score", "TaskScore", "WorkTask", "WorkplaceEnvironment", "World", "build",
           "generate_day", "generate_days", "read_days", "reference_schedule", "validate_day", "workplace_figures",
           "write_days"]
