"""Resume Select: list in ``suitable_candidates.txt`` the applicants, among a sample of the reference's résumés on
the cloud disk, who want the position and meet its four requirements (at least the degree, one of the majors, at
least the years, every skill), judged from the reference's ``resume_info.json``. Scored as the reference: the file
exists (1), its names are exactly the suitable ones in any order and case (1), of 2. The reference's own generator
compares its configs' one-item lists with strings and so finds nobody suitable; here they are unwrapped, as the
task text promises."""

from __future__ import annotations

import json
import random
import re
from typing import Any

from occubench.errors import ConfigError
from occubench.traineebench.families import _common as common
from occubench.traineebench.family import Day, Hints, Outcome, Score, TaskSpec
from occubench.util import untrusted

NAME = "Resume Select"
#: The reference's résumés and their facts, inside its environments/traineebench/ folder.
RESUMES = "schemas/tasks/resume_select/resumes"
FACTS = "schemas/tasks/resume_select/resume_info.json"
FOLDER = "human_resources/resumes"
OUTPUT = "suitable_candidates.txt"
#: Degrees from lowest to highest: a higher degree than the one required qualifies.
DEGREES = ("Bachelor's", "Master's", "Doctoral")
#: What the reference's sampler draws requirements, positions and sample sizes from (one to three skills).
MAJORS = ("Electrical Engineering", "Software Engineering", "Data Science", "Computer Science", "Mathematics")
EXPERIENCE = ("1 year", "3 years", "5 years")
SKILLS = ("python", "c++", "java", "redis", "mongodb", "kubernetes", "deep learning", "reinforcement learning",
          "data visualization", "data analysis")
POSITIONS = ("Software Engineer", "Software Developer", "Algorithm Researcher")
SAMPLE_SIZES = (6, 9, 12)
_YEARS = re.compile(r"(\d+) years?")


def _one(name: str, value: Any, expected: str) -> str | None:
    """A requirement given as a string or a one-item list (the configs' form); None when there is none."""
    if isinstance(value, list) and len(value) <= 1:
        value = value[0] if value else None
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise common.bad_argument(NAME, name, expected, value)
    return value


def _many(name: str, value: Any) -> list[str]:
    if value is None or isinstance(value, str):
        return [value] if value else []
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise common.bad_argument(NAME, name, "a list of names", value)
    return list(value)


def _requirement(value: Any) -> dict[str, Any]:
    if not isinstance(value, list) or len(value) != 4:
        raise common.bad_argument(NAME, "requirement", "a list of four: [degree], [majors], [years], [skills]", value)
    degree = _one("requirement", value[0], "one degree")
    if degree is not None and degree not in DEGREES:
        raise common.bad_argument(NAME, "requirement", f"a degree among {', '.join(DEGREES)}", degree)
    years = _one("requirement", value[2], "one number of years such as '3 years'")
    if years is not None and not (_YEARS.fullmatch(years) or years.startswith("Not")):
        raise common.bad_argument(NAME, "requirement", "years such as '3 years' (or 'Not required')", years)
    return {"degree": degree, "majors": _many("requirement", value[1]), "years": years,
            "skills": _many("requirement", value[3])}


def _years(text: object) -> int:
    """The years of a résumé's ``work_experience`` ('6 years'; 'Not yet graduated' is none)."""
    match = _YEARS.match(text) if isinstance(text, str) else None
    return int(match.group(1)) if match else 0


def _suitable(facts: dict[str, Any], position: str, need: dict[str, Any]) -> bool:
    if facts.get("position") != position:
        return False
    degree = facts.get("education")
    if need["degree"] and degree in DEGREES and DEGREES.index(degree) < DEGREES.index(need["degree"]):
        return False
    if need["majors"] and facts.get("major") not in need["majors"]:
        return False
    match = _YEARS.fullmatch(need["years"] or "")
    if match and _years(facts.get("work_experience")) < int(match.group(1)):
        return False
    skills = facts.get("skills") or []
    return all(skill.lower() in skills for skill in need["skills"])


def _describe(position: str, need: dict[str, Any]) -> str:
    asks = []
    if need["degree"]:
        asks.append(f"at least a {need['degree']} degree")
    majors = [f"'{major}'" for major in need["majors"]]
    if len(majors) == 1:
        asks.append(f"a major that is exactly {majors[0]}")
    elif majors:
        asks.append(f"a major that is exactly one of {', '.join(majors[:-1])} or {majors[-1]}")
    if need["years"]:
        no_limit = need["years"].startswith("Not")
        asks.append("any length of work experience" if no_limit else f"at least {need['years']} of work experience")
    if need["skills"]:
        asks.append(f"experience with {', '.join(need['skills'])}")
    return (f"We are hiring a {position} to strengthen our development work. The résumés received so far are in "
            f"the `CloudDisk:{FOLDER}/` folder: review them and pick out the suitable applicants. A suitable "
            f"applicant clearly wants this position and has {'; '.join(asks) or 'no further requirement'}.\n"
            f"When you have found every suitable applicant, create `{OUTPUT}` in your workspace with their names, "
            "one name per line. If nobody is suitable, create the file anyway and leave it empty.")


def _facts(day: Day) -> dict[str, Any]:
    path = day.reference / FACTS
    try:
        facts = json.loads(untrusted.read_file(path))
    except ValueError as exc:
        raise ConfigError(f"{path}: not JSON ({exc})") from None
    if not isinstance(facts, dict):
        raise ConfigError(f"{path}: not an object of applicants")
    return facts


class ResumeSelect:
    name = NAME
    #: Easy: many files to read, but every fact is in them and the task states every requirement; nobody is asked.
    difficulty = "easy"

    def generate(self, day: Day, **arguments: Any) -> TaskSpec:
        common.known_arguments(NAME, arguments, ("requirement", "position", "number_of_resumes"))
        for required in ("requirement", "position"):
            if required not in arguments:
                raise ConfigError(f"{NAME}: argument {required!r} is missing")
        need = _requirement(arguments["requirement"])
        position = _one("position", arguments["position"], "one position")
        if position is None:
            raise common.bad_argument(NAME, "position", "a position", arguments["position"])
        count = arguments.get("number_of_resumes")
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
            raise common.bad_argument(NAME, "number_of_resumes", "a whole number of at least 1", count)

        folder = day.reference / RESUMES
        names = sorted(untrusted.folder_files(folder)) if folder.is_dir() else []
        if not names:
            raise ConfigError(f"{folder}: no résumés there (fetch the reference's files first)")
        chosen = sorted(day.rng.sample(names, min(count or len(names), len(names))))
        facts = _facts(day)
        answer = []
        for file in chosen:
            common.place(day.cloud_disk / FOLDER / file, untrusted.read_file(folder / file))
            applicant = file.split("_")[0]
            if not isinstance(facts.get(applicant), dict):
                raise ConfigError(f"{day.reference / FACTS}: no entry for {applicant!r} (résumé {file})")
            if _suitable(facts[applicant], position, need):
                answer.append(applicant)
        return TaskSpec(NAME, _describe(position, need), common.deadline(day),
                        {"output_file": OUTPUT, "answer": answer, "resumes": chosen})

    def sample_arguments(self, rng: random.Random) -> dict[str, Any]:
        """Arguments in the form the reference's sampler and configs give them: one-item lists but the skills."""
        requirement = [[rng.choice(DEGREES)], [rng.choice(MAJORS)], [rng.choice(EXPERIENCE)],
                       rng.sample(SKILLS, rng.randint(1, 3))]
        return {"requirement": requirement, "position": [rng.choice(POSITIONS)],
                "number_of_resumes": rng.choice(SAMPLE_SIZES)}

    def hints(self, task: TaskSpec) -> Hints:
        output = task.check["output_file"]
        return (
            "Each applicant has to be checked against every requirement the task states: the position they want, "
            "the degree (a higher one also qualifies), the major, the years of work experience and each skill. "
            "One miss rules an applicant out, and finding nobody suitable is a valid answer.",
            f"Nobody needs to be asked: all the résumés are in `CloudDisk:{FOLDER}/`. Judge each by its content, "
            "not its file name.",
            f"open_folder `{FOLDER}/` and download_file every résumé; read each (execute_command with cat) and note "
            "the position applied for, highest degree, major, years of experience and skills; tick each against "
            "the requirements; write the names of those who pass all of them, as their résumés give them, one a "
            f"line, to `{output}` (create it empty when nobody passes); done.")

    def evaluate(self, task: TaskSpec, outcome: Outcome) -> Score:
        output = task.check["output_file"]
        data = common.read_answer(outcome.workspace / output, common.LINE_SEPARATORS)
        if data is None:
            return Score(0, 2, (f"Save the suitable applicants in `{output}`; create it empty when nobody "
                                "qualifies.",))
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return Score(1, 2, (f"`{output}` is not UTF-8 text: write the names as plain text.",))
        # Lines as Python's text files split them (\n, \r\n or \r), blank ones left out.
        names = [line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
        given = sorted(name.lower() for name in names if name)
        if given == sorted(name.lower() for name in task.check["answer"]):
            return Score(2, 2)
        return Score(1, 2, ("Not the right applicants: list everyone who applied, then go through the résumés one "
                            "by one and tick off each requirement for each of them.",))


FAMILY = ResumeSelect()
