"""Resume Select against the reference's scoring: the file (1) and exactly the suitable applicants (1), full 2;
who is suitable follows the four requirements as the task states them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from occubench.errors import ConfigError
from occubench.traineebench.families.resume_select import FAMILY, FOLDER
from occubench.traineebench.family import Day, Outcome, TaskSpec
from tests.traineebench.conftest import make_day

SE = "Software Engineer"
#: Stand-ins for the reference's résumé facts: each applicant but the first two misses one requirement of
#: REQUIREMENT (Master's or higher, Computer Science or Data Science, 3+ years, python and redis).
APPLICANTS = {
    "Ann Lee": (SE, "Master's", "Computer Science", "3 years", ["python", "redis", "go"]),
    "Bo Chen Bootcamp": (SE, "Doctoral", "Data Science", "10 years", ["redis", "python"]),
    "Cy Dorn": ("Software Developer", "Doctoral", "Computer Science", "5 years", ["python", "redis"]),
    "Di Eng": (SE, "Bachelor's", "Computer Science", "5 years", ["python", "redis"]),
    "Ed Fox": (SE, "Master's", "Mathematics", "5 years", ["python", "redis"]),
    "Flo Gu": (SE, "Master's", "Computer Science", "2 years", ["python", "redis"]),
    "Gil Ho": (SE, "Master's", "Computer Science", "Not yet graduated", ["python", "redis"]),
    "Hal Ivy": (SE, "Master's", "Computer Science", "4 years", ["python", "java"]),
}
SUITABLE = ["Ann Lee", "Bo Chen Bootcamp"]
REQUIREMENT = [["Master's"], ["Computer Science", "Data Science"], ["3 years"], ["Python", "redis"]]
ARGUMENTS = {"requirement": REQUIREMENT, "position": [SE], "number_of_resumes": None}


def with_reference(day: Day) -> Day:
    folder = day.reference / "schemas/tasks/resume_select"
    (folder / "resumes").mkdir(parents=True, exist_ok=True)
    facts = {}
    for name, (position, education, major, years, skills) in APPLICANTS.items():
        (folder / "resumes" / f"{name}_resume.md").write_text(f"## {name}\n{position}, {education} in {major}\n")
        facts[name] = {"position": position, "education": education, "major": major, "work_experience": years,
                       "skills": skills}
    (folder / "resume_info.json").write_text(json.dumps(facts))
    return day


@pytest.fixture
def ready(day: Day) -> Day:
    return with_reference(day)


def scored(task: TaskSpec, day: Day, content: str | bytes | None) -> tuple[float, float]:
    path = day.workspace / "suitable_candidates.txt"
    if content is not None:
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    score = FAMILY.evaluate(task, Outcome(day.workspace))
    assert 0 <= score.points <= score.full
    assert (score.points == score.full) == (not score.notes)
    return score.points, score.full


def test_the_suitable_applicants_in_any_order_case_and_line_ending_earn_full_points(ready: Day) -> None:
    task = FAMILY.generate(ready, **ARGUMENTS)
    assert sorted(os.listdir(ready.cloud_disk / FOLDER)) == sorted(f"{n}_resume.md" for n in APPLICANTS)
    assert "CloudDisk:human_resources/resumes/" in task.description and "suitable_candidates.txt" in task.description
    assert "at least a Master's degree" in task.description and "at least 3 years" in task.description
    assert scored(task, ready, "bo chen bootcamp\r\n\r\n  ANN LEE  \n") == (2, 2)


def test_each_requirement_rules_an_applicant_out_and_a_higher_degree_or_more_years_qualify(ready: Day) -> None:
    assert FAMILY.generate(ready, **ARGUMENTS).check["answer"] == SUITABLE


def test_the_file_alone_earns_one_point(ready: Day) -> None:
    task = FAMILY.generate(ready, **ARGUMENTS)
    assert scored(task, ready, None) == (0, 2)
    assert scored(task, ready, "") == (1, 2)
    assert scored(task, ready, "Ann Lee\n") == (1, 2)
    assert scored(task, ready, "Ann Lee\nBo Chen Bootcamp\nDi Eng\n") == (1, 2)
    assert scored(task, ready, "Ann Lee\nAnn Lee\nBo Chen Bootcamp\n") == (1, 2)


def test_nobody_suitable_wants_an_empty_file(ready: Day) -> None:
    task = FAMILY.generate(ready, requirement=[["Doctoral"], ["Physics"], ["1 year"], []], position="Software Engineer")
    assert task.check["answer"] == []
    assert scored(task, ready, "\n\n") == (2, 2)


def test_a_sample_of_the_resumes_is_drawn_with_the_days_random_source(tmp_path: Path) -> None:
    tasks, files = [], []
    for run in ("one", "two"):
        day = with_reference(make_day(tmp_path / run, seed=3))
        tasks.append(FAMILY.generate(day, requirement=REQUIREMENT, position=[SE], number_of_resumes=3))
        files.append({p.name: p.read_bytes() for p in (day.cloud_disk / FOLDER).iterdir()})
    assert tasks[0] == tasks[1] and files[0] == files[1] and len(files[0]) == 3
    assert tasks[0].check["answer"] == [n for n in SUITABLE if f"{n}_resume.md" in files[0]]


@pytest.mark.parametrize(("arguments", "named"), [
    ({**ARGUMENTS, "level": 2}, "level"),
    ({"position": SE}, "requirement"),
    ({"requirement": REQUIREMENT}, "position"),
    ({**ARGUMENTS, "requirement": REQUIREMENT[:3]}, "requirement"),
    ({**ARGUMENTS, "requirement": [["PhD"], [], [], []]}, "requirement"),
    ({**ARGUMENTS, "requirement": [[], [], ["three years"], []]}, "requirement"),
    ({**ARGUMENTS, "requirement": [[], [3], [], []]}, "requirement"),
    ({**ARGUMENTS, "position": 7}, "position"),
    ({**ARGUMENTS, "position": [SE, "Software Developer"]}, "position"),
    ({**ARGUMENTS, "number_of_resumes": "6"}, "number_of_resumes"),
    ({**ARGUMENTS, "number_of_resumes": 0}, "number_of_resumes"),
    ({**ARGUMENTS, "number_of_resumes": True}, "number_of_resumes"),
])
def test_bad_arguments_are_config_errors_naming_the_argument(ready: Day, arguments: dict, named: str) -> None:
    with pytest.raises(ConfigError, match=repr(named)):
        FAMILY.generate(ready, **arguments)


def test_missing_reference_files_are_config_errors_naming_the_folder(day: Day) -> None:
    with pytest.raises(ConfigError, match="resumes"):
        FAMILY.generate(day, **ARGUMENTS)


def test_hostile_answer_files_are_scored_never_above_full(ready: Day, tmp_path: Path) -> None:
    task = FAMILY.generate(ready, **ARGUMENTS)
    assert scored(task, ready, b"\xff\xfeAnn Lee") == (1, 2)
    assert scored(task, ready, "x" * 5_000_000) == (1, 2)
    assert scored(task, ready, "NaN\n" + "Ann Lee\n" * 10_000) == (1, 2)
    (ready.workspace / "suitable_candidates.txt").unlink()
    outside = tmp_path / "answer.txt"
    outside.write_text("\n".join(SUITABLE))
    (ready.workspace / "suitable_candidates.txt").symlink_to(outside)
    assert scored(task, ready, None) == (0, 2)
    (ready.workspace / "suitable_candidates.txt").unlink()
    (ready.workspace / "suitable_candidates.txt").mkdir()
    assert scored(task, ready, None) == (0, 2)
