"""Workplace scenarios: generated working days with deadlines, meetings, colleagues who hold clues, and
checkpoint scoring with feedback that carries over to a second day."""

from occubench.workplace.environment import KeywordResponder, WorkplaceEnvironment
from occubench.workplace.generate import generate_day, generate_days, read_days, write_days
from occubench.workplace.model import Checkpoint, Clue, Colleague, Day, Meeting, WorkTask
from occubench.workplace.record import DayRecord
from occubench.workplace.report import workplace_figures
from occubench.workplace.schedule import reference_schedule
from occubench.workplace.scoring import TaskScore, score_day
from occubench.workplace.suite import WORKPLACE_SUITE, LLMColleague, WorkplaceSuite
from occubench.workplace.templates import FAMILIES, Family
from occubench.workplace.validate import validate_day

__all__ = ["FAMILIES", "WORKPLACE_SUITE", "Checkpoint", "Clue", "Colleague", "Day", "DayRecord", "Family",
           "KeywordResponder", "LLMColleague", "Meeting", "TaskScore", "WorkTask", "WorkplaceEnvironment",
           "WorkplaceSuite", "generate_day", "generate_days", "read_days", "reference_schedule", "score_day",
           "validate_day", "workplace_figures", "write_days"]
