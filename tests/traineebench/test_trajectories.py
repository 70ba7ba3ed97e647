"""Scripted trajectories through a generated Trainee-Bench day (issue 48): each family's day is generated from a
config entry with arguments as the reference's shipped configs give them, played tool call by tool call through
the day's environment as an agent would play it (colleagues found with list_users and asked, the cloud disk opened
and downloaded from, a script run in the sandboxed workspace, done), and scored by the family. A complete
trajectory earns the reference's full points, and each partial one exactly the points the reference's evaluator
gives it (the expected numbers are literals, with the checkpoints they add up).

Meeting Book and Meeting Attend are played through the calendar's tools in tests/workplace/test_calendar.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from occubench.sandbox import Provider
from occubench.traineebench.config import DayEntry, TaskEntry
from occubench.traineebench.day import build_day
from occubench.traineebench.families import family
from occubench.traineebench.family import Score
from occubench.traineebench.plugin import TOOLSET
from occubench.workplace.environment import WorkplaceEnvironment
from occubench.workplace.people import AGENT
from tests.traineebench.families.test_data_completion import stand_in as data_completion_stand_in
from tests.traineebench.families.test_kb_fix import stand_in as kb_stand_in
from tests.traineebench.families.test_resume_select import with_reference as resume_stand_in
from tests.traineebench.families.test_transactions import stand_in as transactions_stand_in

DEADLINE = datetime(2025, 10, 1, 20, 0)
#: A cloud-disk path as the colleagues' replies and the task texts give it.
POINTER = re.compile(r"CloudDisk:/{0,2}([\w./-]+)")
#: The output file a task text names.
NAMED = re.compile(r"`([^`/:]+\.(?:json|csv|md|txt))`")


class Intern:
    """A scripted agent on a day generated from one config entry: every step is a tool call through the day's
    environment, its answer read as a model would read it."""

    def __init__(self, tmp_path: Path, sandbox: Provider, name: str, arguments: dict[str, Any],
                 stand_in: Callable[[Any], object] | None = None) -> None:
        reference = tmp_path / "reference"
        (reference / "schemas/templates").mkdir(parents=True)
        (reference / "schemas/templates/manuals_for_intern.md").write_text("Stand-in intern manual.\n")
        if stand_in is not None:  # the family's stand-in reference files, as its own tests make them
            stand_in(SimpleNamespace(reference=reference))
        entry = DayEntry("day_1", (TaskEntry(name, arguments, DEADLINE),))
        built = build_day(tmp_path / "day", "scenario_trajectories", entry, seed=1, reference=reference)
        self.env = WorkplaceEnvironment(built.day, built.tasks, TOOLSET, family, provider=sandbox)
        [self.task] = built.tasks

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        answer = self.env.call(tool, arguments)
        assert "error" not in answer, answer
        return answer

    def colleagues(self, department: str | None = None, position: str | None = None) -> list[str]:
        """The names list_users gives for a department or a position."""
        return [user["name"] for user in self.call("list_users")["users"]
                if department in (None, user["department"]) and position in (None, user["position"])]

    def ask(self, who: str, text: str) -> str:
        return str(self.call("send_message", to=who, text=text)["reply"])

    def folder(self, path: str) -> list[str]:
        return [f"{path}{entry}" for entry in self.call("open_folder", folder_path=path)["entries"]]

    def download(self, *paths: str) -> None:
        """Each file of ``paths`` into the top of the workspace (folders among them are passed over)."""
        for path in paths:
            if not path.endswith("/"):
                self.call("download_file", file_path=path, target_path=Path(path).name)

    def run(self, script: str) -> str:
        """A Python script run in the workspace, in the sandbox."""
        ran = self.call("execute_command", command=f"python3 - <<'EOF'\n{script}\nEOF")
        assert ran["exit_code"] == 0, ran
        return str(ran["output"])

    def write_text(self, name: str, text: str) -> None:
        self.run(f"open({name!r}, 'w').write({text!r})")

    def write_json(self, name: str, value: Any) -> None:
        self.run(f"import json\njson.dump(json.loads(r'''{json.dumps(value)}'''), open({name!r}, 'w'))")

    def output(self) -> str:
        """The output file the task text names (the last file name in it: where it says what to hand in)."""
        return NAMED.findall(self.task.description)[-1]

    def finish(self, judge: Callable[[str], str] | None = None) -> Score:
        self.call("done")
        outcome = self.env.outcome()
        outcome.judge = judge
        return family(self.task.family).evaluate(self.task, outcome)


def pointers(text: str) -> list[str]:
    """The cloud-disk paths a reply or a task text points to, in order, each once."""
    return list(dict.fromkeys(path.rstrip(".") for path in POINTER.findall(text)))


# -- Transaction Data Review: each manual 0.5, every abnormal supplier named 2; of 3 -------------------------------

ABNORMAL = """import json, sqlite3
rows = sqlite3.connect("transactions.db").execute(
    "SELECT DISTINCT supplier_name FROM transactions WHERE coalesce(supplier_rating, '') {test} ''")
json.dump({{"abnormal_suppliers": [row[0] for row in rows]}}, open("{output}", "w"))"""


@pytest.mark.parametrize(("variant", "points"), [
    ("complete", 3.0),
    ("review manual not downloaded", 2.5),  # the intern's manual 0.5 + the answer 2
    ("the rated suppliers named", 1.0),  # the two manuals, 0.5 each
    ("finished after the deadline", 3.0),  # deadlines are lenient: the reference never reads the clock
])
def test_transaction_data_review(tmp_path: Path, sandbox: Provider, variant: str, points: float) -> None:
    intern = Intern(tmp_path, sandbox, "Transaction Data Review",
                    {"num_normal_transactions": 4, "num_abnormal_transactions": 2}, transactions_stand_in)
    accountant = intern.colleagues("Finance")[0]
    reply = intern.ask(accountant, "How do I review the transaction data, and where are the invoices kept?")
    manuals = [p for p in pointers(reply) if p.endswith(".md")]  # the review manual, then the intern's
    intern.download(*(manuals[1:] if variant == "review manual not downloaded" else manuals))
    if variant == "finished after the deadline":  # a long day: the clock is past the deadline before the report
        intern.env.now = DEADLINE + timedelta(hours=2)
    # Computed from the data, as the review manual says: abnormal suppliers have no rating.
    intern.run(ABNORMAL.format(test="!=" if variant == "the rated suppliers named" else "=", output=intern.output()))
    assert intern.finish().points == points


# -- Data Completion: handbook and file 1.2; the right colleague asked, nothing else changed, every blank right
# -- 0.9333 each; of 4 -----------------------------------------------------------------------------------------

COMPLETE = """import csv
rates = {{row["category"]: float(row["rate"]) for row in csv.DictReader(open("rates.csv"))}}
rows = list(csv.DictReader(open("transactions_tax_fee.csv")))
for row in rows:
    rate = rates[row["category"]]
    if not row["fee"]:
        row["fee"] = str(round(float(row["amount"]) * rate, 2))
    if not row["amount"]:
        row["amount"] = str(round(float(row["fee"]) / rate, 2))
with open("{output}", "w", newline="") as out:
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)"""


@pytest.mark.parametrize(("variant", "points"), [
    ("complete", 4.0),
    ("Finance not asked", 3.066667),  # 1.2 + 0.9333 (nothing else changed) + 0.9333 (every blank right)
    ("handbook not downloaded", 2.8),  # 3 x 0.9333: the file is there, but the first checkpoint needs both
])
def test_data_completion(tmp_path: Path, sandbox: Provider, variant: str, points: float) -> None:
    intern = Intern(tmp_path, sandbox, "Data Completion",
                    {"domain": "transactions", "task_type": "tax_fee", "difficulty": "medium"},
                    data_completion_stand_in)
    handbook = next(p for p in pointers(intern.task.description) if p.endswith(".md"))
    folder = next(p for p in pointers(intern.task.description) if p.endswith("/"))
    if variant != "Finance not asked":
        reply = intern.ask(intern.colleagues("Finance")[0], "Where are the parameters of the data completion task?")
        assert "rates.csv" in reply and folder in pointers(reply)
    if variant != "handbook not downloaded":
        intern.download(handbook)
    intern.download(*intern.folder(folder))  # the data and the rates table
    intern.run(COMPLETE.format(output=intern.output()))  # computed from the data by the handbook's rule
    assert intern.finish().points == points


# -- Sales Analysis (cross_depts_top_n): handbook and file 0.9; the shape, the answer 1.05 each; of 3 --------------

TOP = """import csv, glob, json
totals = {{}}
for path in glob.glob("sales_*_Q{quarter}_*.csv"):
    for row in csv.DictReader(open(path)):
        if row["department"] in {departments!r}:
            person = totals.setdefault(row["employee_id"], {{"employee_id": row["employee_id"], "name": row["name"],
                                                             "department": row["department"], "total_sales": 0.0}})
            person["total_sales"] += float(row["amount"])
ranked = sorted(totals.values(), key=lambda person: person["total_sales"], reverse=True)
for person in ranked:
    person["total_sales"] = round(person["total_sales"], 2)
json.dump(ranked[{first}:{first} + {n}], open("{output}", "w"))"""


@pytest.mark.parametrize(("variant", "points"), [
    ("complete", 3.0),
    ("handbook not downloaded", 2.1),  # the shape 1.05 + the answer 1.05
    ("the runner-up named", 1.95),  # handbook and file 0.9 + the shape 1.05
])
def test_sales_analysis(tmp_path: Path, sandbox: Provider, variant: str, points: float) -> None:
    def stand_in(holder: Any) -> None:
        folder = holder.reference / "schemas/tasks/sales/templates"
        folder.mkdir(parents=True)
        (folder / "manuals_for_sales_data_analysis.md").write_text("Stand-in handbook: sum amount by employee_id.\n")

    departments = ["Sales_2", "Sales_3", "Sales_1"]
    intern = Intern(tmp_path, sandbox, "Sales Analysis",
                    {"task_type": "cross_depts_top_n", "task_params": {"departments": departments, "n": 1}}, stand_in)
    reply = intern.ask(intern.colleagues("Sales_1")[0], "How should I analyse last year's sales data?")
    handbook = next(p for p in pointers(reply) if p.startswith("sales/"))
    if variant != "handbook not downloaded":
        intern.download(handbook)
    quarter = re.search(r"last year's Q(\d)", intern.task.description)
    assert quarter
    intern.download(*(p for p in intern.folder("sales/") if f"_Q{quarter[1]}_" in p))
    # Computed from the quarter's CSVs, as the handbook says.
    intern.run(TOP.format(quarter=quarter[1], departments=departments, n=1, output=intern.output(),
                          first=int(variant == "the runner-up named")))
    assert intern.finish().points == points


# -- ADs Strategy Plan: handbook 1, file 1, fields 1, listed channels 1, cost 2, exposure 2, the optimum 5; of 13 ---


@pytest.mark.parametrize(("variant", "points"), [
    ("complete", 13),
    ("handbook not downloaded", 12),
    ("a worse plan", 8),  # all but the optimum: its own cost and exposure are right
    ("a channel made up", 3),  # handbook, file, fields: an unlisted channel ends the check there
])
@pytest.mark.slow
def test_ads_strategy_plan(tmp_path: Path, sandbox: Provider, variant: str, points: int) -> None:
    intern = Intern(tmp_path, sandbox, "ADs Strategy Plan", {"task_params": {"city": "Shenzhen",
                                                                             "difficulty": "very easy"}})
    reply = intern.ask(intern.colleagues("Marketing")[0], "How do I plan the ads strategy, and where are the data?")
    handbook, folder, channels = pointers(reply)[:3]
    intern.download(channels, f"{folder}target_user_density_college_students_18_25.png",
                    *([] if variant == "handbook not downloaded" else [handbook]))
    # The target group's densities are only in the heatmap image: reading it is the model's part, so the plan is
    # the ground truth of TaskSpec.check (the optimum), its totals summed from the channels there.
    check = intern.task.check
    chosen = list(check["optimal"])
    assert len(chosen) >= 2
    chosen = {"a worse plan": chosen[:-1], "a channel made up": [*chosen, "CH999"]}.get(variant, chosen)
    listed = [c for c in chosen if c in check["channels"]]
    intern.write_json(intern.output(), {"selected_channels": chosen,
                                        "total_cost": sum(check["channels"][c][0] for c in listed),
                                        "total_exposure": sum(check["channels"][c][1] for c in listed)})
    assert intern.finish().points == points


# -- KB Link Fix: manual and every fixed file 1.2; every owner asked, every link fixed, nothing else changed 0.9333
# -- each; of 4 ------------------------------------------------------------------------------------------------

FIX = """import json
text = open({article!r}).read()
for old, new in json.loads({mapping!r}).items():
    text = text.replace("charts?id=" + old + " ", "charts?id=" + new + " ")
open({output!r}, "w").write(text)"""


@pytest.mark.parametrize(("variant", "points"), [
    ("complete", 4.0),
    ("manual not downloaded", 2.8),  # 3 x 0.9333
    ("owner not asked", 3.066667),  # the IDs taken from the metadata on the cloud disk: 1.2 + 2 x 0.9333
])
def test_kb_link_fix(tmp_path: Path, sandbox: Provider, variant: str, points: float) -> None:
    intern = Intern(tmp_path, sandbox, "KB Link Fix", {"task_params": {"difficulty": "easy"}},
                    lambda reference: kb_stand_in(reference, count=3))
    manual = next(p for p in intern.folder("kb/") if p.endswith(".md"))
    if variant != "manual not downloaded":
        intern.download(manual)
    article = next(p for p in intern.folder("kb/articles/") if p.endswith(".md"))
    intern.download(article)
    name = Path(article).name
    text = intern.call("execute_command", command=f"cat {name}")["output"]
    links = re.findall(r"charts\?id=(OLD\d+) \(Chart Owner: ([^)]+)\)", text)
    assert links
    mapping: dict[str, str] = {}
    if variant == "owner not asked":
        intern.download(f"kb/articles_meta/{Path(name).stem}.json")
        meta = json.loads(intern.run(f"print(open('{Path(name).stem}.json').read())"))
        mapping = {x["old_id"]: x["new_id"] for x in meta["broken_links"]}
    else:
        for owner in dict.fromkeys(owner for _, owner in links):
            assert owner in intern.colleagues()
            asked = ", ".join(old for old, who in links if who == owner)
            mapping |= dict(re.findall(r"(OLD\d+) -> (NEW\d+)", intern.ask(owner, f"What are the new IDs of the "
                                                                                  f"charts {asked}?")))
    intern.run(FIX.format(article=name, mapping=json.dumps(mapping), output=intern.output()))
    assert intern.finish().points == points


# -- Resume Select: the file 1, exactly the suitable applicants 1; of 2 -------------------------------------------


@pytest.mark.parametrize(("variant", "points"), [
    ("complete", 2),
    ("an unsuitable applicant added", 1),  # the file only
])
def test_resume_select(tmp_path: Path, sandbox: Provider, variant: str, points: int) -> None:
    intern = Intern(tmp_path, sandbox, "Resume Select", {
        "requirement": [["Master's"], ["Data Science"], ["5 years"], ["python"]], "position": ["Software Engineer"],
        "number_of_resumes": 12}, resume_stand_in)
    [folder] = pointers(intern.task.description)
    resumes = intern.folder(folder)
    intern.download(*resumes)
    # The stand-in résumés name only the position, degree and major (their years and skills are in the stand-in
    # facts), so the names are the ground truth of TaskSpec.check.
    names = list(intern.task.check["answer"])
    assert names == ["Bo Chen Bootcamp"]  # the one stand-in applicant meeting all four requirements
    if variant == "an unsuitable applicant added":
        names.append(next(Path(p).name.split("_")[0] for p in resumes if Path(p).name.split("_")[0] not in names))
    intern.write_text(intern.output(), "".join(f"{name}\n" for name in names))
    assert intern.finish().points == points


# -- Website Monitor: four judged checks and the relayed code, 1 each; of 5 --------------------------------------

#: What the stand-in judge looks for, by a phrase of each question: the key fact the question asks about.
FACTS = {"Markdown report": "/blog", "chat with HR": "maintains the company website", "tell them": "almost full",
         "Engineering Managers": "temporary maintenance mode"}


def judge(prompt: str) -> str:
    """A stand-in for the judge model: yes when the material mentions the question's key fact. In a chat only the
    intern's own lines count (the question is what the intern said; the colleagues' replies repeat their rules)."""
    material = prompt.split("<material>", 1)[1].rsplit("</material>", 1)[0]
    question = next(phrase for phrase in FACTS if phrase in prompt)
    if question != "Markdown report":
        material = "\n".join(line for line in material.splitlines() if line.startswith(f"{AGENT}: "))
    return "yes" if FACTS[question] in material else "no"


@pytest.mark.parametrize(("variant", "points"), [
    ("complete", 5),
    ("the code not relayed", 4),
    ("the report names no page", 4),
    ("no judge", 1),  # the judged checks score 0 without a judge; the relayed code is read
])
def test_website_monitor(tmp_path: Path, sandbox: Provider, variant: str, points: int) -> None:
    intern = Intern(tmp_path, sandbox, "Website Monitor", {})
    hr = intern.colleagues(position="HR Manager")[0]
    named = re.search(r"name ([^.]+)\.", intern.ask(hr, "The company website is slow: who maintains the company "
                                                        "website? I need to find that person."))
    assert named and named[1] in intern.colleagues()
    engineer = named[1]
    intern.ask(engineer, "The monitor shows the /blog page loading slowly, and the website's database is almost full.")
    manager = intern.colleagues(position="Engineering Manager")[0]
    code = re.search(r"'([A-Z]+-[A-Z]+-\d+)'", intern.ask(manager, "Could you approve switching on temporary "
                                                                    "maintenance mode to clean the database?"))
    assert code
    if variant != "the code not relayed":
        intern.ask(engineer, f"The Engineering Manager approved the maintenance mode: the code is {code[1]}.")
    page = "The website" if variant == "the report names no page" else "The /blog page"
    intern.write_text(intern.output(), f"# Website report\n\n{page} loads slowly: the database behind it is almost "
                                       f"full. {engineer} maintains the website and is cleaning it up.\n")
    assert intern.finish(None if variant == "no judge" else judge).points == points


# -- Attendance Statistics (avg_late_early_days): the three sources copied 0.9; each average 1.05; of 3 -----------


@pytest.mark.parametrize(("variant", "points"), [
    ("complete", 3.0),
    ("sources not copied", 2.1),  # the two averages
    ("early days wrong", 1.95),  # the sources 0.9 + the late days 1.05
])
def test_attendance_statistics(tmp_path: Path, sandbox: Provider, variant: str, points: float) -> None:
    intern = Intern(tmp_path, sandbox, "Attendance Statistics", {
        "task_type_name": "avg_late_early_days", "task_params": {"department": "Sales_2"},
        "difficulty": {"level": "L1"}})
    manager = intern.colleagues("Sales_2", "Sales Manager")[0]
    reply = intern.ask(manager, "What are the attendance rules?")
    folder = next(p for p in pointers(reply) if p.startswith("attendance/")).rpartition("/")[0] + "/"
    if variant != "sources not copied":
        intern.download(*intern.folder(folder))
    # The rules (grace minutes, missed punches) are long to apply in a script: the averages are the ground truth of
    # TaskSpec.check.
    answer = dict(intern.task.check["expected"])
    if variant == "early days wrong":
        answer["avg_early_days"] += 1
    intern.write_json(intern.output(), answer)
    assert intern.finish().points == points


# -- Event Planning: the resources 30% of full; the date, each metric, the end time, on time, an equal share each --

GENERAL = {"task_type_name": "general_event_planning", "task_params": {
    "department": "Engineering", "n_loc": 6, "n_res": 10,
    "plan": {"morning": "Riverside Wetland", "lunch": "Maple · Hotpot", "afternoon": "Stonegate Eco Park"},
    "metrics": ["interest_score", "cost_per_person", "total_travel_distance", "overall_score"], "end_time": "17:30"}}
OPTIMAL = {"task_type_name": "optimal_event_planning", "task_params": {
    "department": "Marketing", "n_loc": 6, "n_res": 10, "mode": "lowest_cost"}}


@pytest.mark.parametrize(("arguments", "copied", "points"), [
    # of 9: 2.7 for the resources and 7 of the 8 other shares (0.7875 each): the reference counts the given
    # itinerary in the full points but never awards it
    (GENERAL, True, 8.2125),
    (GENERAL, False, 5.5125),  # the date, four metrics, the end time, on time: 7 x 0.7875
    (OPTIMAL, True, 4.0),
    (OPTIMAL, False, 2.8),  # the date, the itinerary, its cost: 3 x 0.9333
], ids=["given itinerary", "given itinerary, resources not copied", "optimal", "optimal, resources not copied"])
@pytest.mark.slow
def test_event_planning(tmp_path: Path, sandbox: Provider, arguments: dict[str, Any], copied: bool,
                        points: float) -> None:
    intern = Intern(tmp_path, sandbox, "Event Planning", arguments)
    params = arguments["task_params"]
    spans = [re.search(r"from (\S+) to (\S+)\.", intern.ask(member, "When are you free for the team-building event?"))
             for member in intern.colleagues(params["department"])]
    assert all(spans)
    date = max(span[1] for span in spans if span)  # the first day everyone is free
    if copied:
        intern.download(*intern.folder("event_planning/"))
    # Every itinerary's metrics come from the road map (shortest paths, prices by the date): long to script, so
    # they are the ground truth of TaskSpec.check; the date is the agent's own, from the members' replies.
    plans = intern.task.check["plans"]
    if "plan" in params:
        metrics = next(p for p in plans if p["plan"] == params["plan"])["metrics"]
        answer = {**{m: metrics[m] for m in params["metrics"]}, "end_time": metrics["end_time"],
                  "can_complete_on_time": metrics["end_time"] <= params["end_time"]}
    else:
        answer = {"plan": plans[0]["plan"], "cost_per_person": plans[0]["metrics"]["cost_per_person"]}
    intern.write_json(intern.output(), {"event_date": date, **answer})
    assert intern.finish().points == points
