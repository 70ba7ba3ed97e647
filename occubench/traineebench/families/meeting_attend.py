"""Meeting Attend: the agent must be in a meeting in Room_06 on time; unless the task type is ``none``, it hears a
procurement round (each attendee asks for one item) to write to ``meeting_summary.json``: as said (``write``), with
each request's total (``sum``), only the requests ``financial/procurement_rules.md`` allows (``check``), or both
(``check_sum``). Scored as the reference: on time (1; of 1 for ``none``), the file there (1), JSON (1), its
``requirement`` list matching the expected requests (1), of 4."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from occubench.errors import ConfigError
from occubench.traineebench.families import _common as common
from occubench.traineebench.families.meeting_book import add_rooms, hours_of, moment, slot
from occubench.traineebench.family import Day, Hints, Meeting, Outcome, Score, TaskSpec
from occubench.workplace.calendar import on_time

NAME = "Meeting Attend"
ROOM = "Room_06"
OUTPUT = "meeting_summary.json"
RULES = "financial/procurement_rules.md"
TEMPLATE = "schemas/tasks/meeting_attend/templates/procurement_rules.md"
TASK_TYPES = ("none", "write", "sum", "check", "check_sum")
#: The values the reference's sampler draws each argument from.
SAMPLED = {"meeting_start_time": ("2025-10-01T09:00:00", "2025-10-01T09:30:00", "2025-10-01T10:00:00"),
           "meeting_last_time": (0.5, 1.0, 1.5, 2.0), "task_type": TASK_TYPES, "task_level": (1, 2, 3)}
#: Items the attendees ask for, with the range a sensible request's unit price is drawn from.
CATALOG = (("Notebook", 3, 15), ("Ballpoint Pen", 1, 5), ("Mechanical Keyboard", 80, 180),
           ("Wireless Mouse", 20, 60), ("Office Chair Cushion", 25, 70), ("USB-C Hub", 30, 90),
           ("External SSD 1TB", 90, 150), ("Noise-Canceling Headphones", 120, 300), ("Webcam 1080p", 35, 90),
           ("Portable Projector", 250, 600), ("Desk Lamp", 15, 45), ("Ergonomic Mouse Pad", 8, 25),
           ("Whiteboard Markers (Pack)", 5, 20), ("Surge Protector", 15, 40), ("Wi-Fi Router", 60, 150))
#: The procurement rules: one person's items, one item's price, one person's reimbursement.
MOST_ITEMS, MOST_PRICE, MOST_TOTAL = 3, 600, 1000
#: Numbers in the summary may be off by this much (the reference's tolerance).
TOLERANCE = 1.0


def request(day: Day, sensible: bool) -> dict[str, Any]:
    """One attendee's request: within every rule, or breaking one (a unit price past the limit, or a total past
    it at an allowed price)."""
    item, low, high = day.rng.choice(CATALOG)
    if sensible:
        price = day.rng.randint(low, high)
        quantity = day.rng.randint(1, min(MOST_ITEMS, MOST_TOTAL // price))
    elif day.rng.choice(["too_expensive_item", "too_high_total"]) == "too_expensive_item":
        price, quantity = day.rng.randint(650, 1000), day.rng.randint(1, 5)
    else:
        price = day.rng.randint(max(low, (low + high) // 2), high)
        least = MOST_TOTAL // price + 1
        quantity = day.rng.randint(least, least + 5)
    return {"name": "", "item": item, "quantity": quantity, "unit_price": price, "reasonable": sensible}


def notes(task_type: str, requests: list[dict[str, Any]]) -> str:
    """What is said in the meeting: the instructions for the summary, each attendee's request, its format."""
    asked = "\n".join(f"- {r['name']}: asks for {r['quantity']} {r['item']} at {r['unit_price']} each"
                      for r in requests)
    check = task_type.startswith("check")
    total = task_type != "write"
    entry = ('{"name": <attendee>, "item": <item>, "quantity": <how many>, "unit_price": <price of one>'
             + (', "total": <quantity times unit_price>}' if total else "}"))
    shape = ('{"requirement": [' + entry + ", ...]" + (', "statistics": <the sum of every total>' if
                                                        task_type in ("sum", "check_sum") else "") + "}")
    return ("Procurement requirements meeting. Write a summary of it to `Workspace://meeting_summary.json` in the "
            "format below." + (" First read `CloudDisk://financial/procurement_rules.md`: list only the requests "
                               "that keep to those rules and leave the others out." if check else "")
            + f"\n\nWhat each attendee needs:\n{asked}\n\nFormat:\n{shape}\n")


class MeetingAttend:
    name = NAME
    #: Easy: the meeting gives every fact and the format; the work is being there on time and one file.
    difficulty = "easy"

    def generate(self, day: Day, **given: Any) -> TaskSpec:
        args = common.arguments(NAME, given, {
            "meeting_start_time": (str, common.REQUIRED), "meeting_last_time": ((int, float), 1.0),
            "task_type": (str, "write"), "task_level": (int, 3)})
        start = moment(NAME, "meeting_start_time", args["meeting_start_time"])
        hours = hours_of(NAME, "meeting_last_time", args["meeting_last_time"])
        task_type: str = args["task_type"].lower()
        level: int = args["task_level"]
        common.one_of(NAME, "task_type", task_type, TASK_TYPES)
        common.one_of(NAME, "task_level", level, (1, 2, 3))
        common.place(day.cloud_disk / RULES, common.reference_bytes(day, TEMPLATE))
        department = day.rng.choice(["Marketing", "Product"])
        if not day.company.in_department(department):
            raise ConfigError(f"{NAME}: the company has no {department} department to hold the meeting")
        manager = day.company.manager_of(department)
        members = [e.name for e in day.company.in_department(department) if e is not manager]
        requests = [] if task_type == "none" else self._requests(day, members, level, department)
        title = f"{department} meeting"
        add_rooms(day)
        day.meetings.append(Meeting(title, start, hours, ROOM, (manager.name, *members),
                                    "" if task_type == "none" else notes(task_type, requests)))
        end = start + timedelta(hours=hours)
        description = (f"Attend the meeting in `{ROOM}` from {slot(start, end)}. If the meeting gives you a new "
                       "task, complete it.")
        return TaskSpec(NAME, description, common.deadline(day), {
            "title": title, "start": start.isoformat(), "task_type": task_type, "requests": requests})

    @staticmethod
    def _requests(day: Day, members: list[str], level: int, department: str) -> list[dict[str, Any]]:
        """One request per member, ``level`` of them breaking a rule, in a shuffled order."""
        if len(members) < level:
            raise ConfigError(f"{NAME}: argument task_level is {level}, but the {department} department has only "
                              f"{len(members)} members besides its manager")
        breaking = day.rng.sample(members, level)
        people = [(m, True) for m in members if m not in breaking] + [(m, False) for m in breaking]
        requests = [{**request(day, sensible), "name": name} for name, sensible in people]
        day.rng.shuffle(requests)
        return requests

    def sample_arguments(self, rng: random.Random) -> dict[str, Any]:
        return common.drawn(rng, SAMPLED)

    def hints(self, task: TaskSpec) -> Hints:
        task_type = task.check["task_type"]
        join = (f"join with attend_meeting (room {ROOM}, the start and end the task gives) within five minutes "
                "of the start and not long before, using jump_time if you are early")
        if task_type == "none":
            return (
                "Being in the meeting on time is the whole task: nothing else is scored, so let no other work keep "
                "you busy when it starts.",
                f"Nobody needs to be asked; the meeting is in {ROOM}. Arriving long before the start does not "
                "count as being there, so fit your other work around it.",
                f"Work on other tasks until shortly before the start; {join}; then go back to the rest of the day.")
        checked = task_type.startswith("check")
        totals = task_type in ("sum", "check_sum")
        return (
            "The meeting hands out the real work: what is said in it is a round of procurement requests to write "
            "up, so be in the room on time and keep every request as said"
            + (", and remember that not every request is allowed." if checked else "."),
            ("Read the company's procurement rules, `CloudDisk:" + RULES + "`, before the meeting: a request that "
             "breaks any of them stays out of the summary. " if checked else "Nobody needs to be asked. ")
            + f"The meeting gives the exact JSON format of `{OUTPUT}`; names, items, quantities and prices go in "
              "as said" + ("; each entry's total and their sum have to be worked out." if totals else "."),
            (f"download_file `{RULES}` and read it; " if checked else "")
            + f"{join}; from what it returns, list each attendee's request"
            + ("; test every request against every rule (items a person, price of one item, a person's whole "
               "amount) and drop those that break one" if checked else "")
            + ("; with the calculator, multiply quantity by unit price for each entry kept and add those totals "
               "up for the statistics" if totals else "")
            + f"; write `{OUTPUT}` at the root of the workspace in exactly the format the meeting gave; done.")

    def evaluate(self, task: TaskSpec, outcome: Outcome) -> Score:
        attended = on_time(outcome.attended, task.check["title"], datetime.fromisoformat(task.check["start"]))
        if task.check["task_type"] == "none":
            return Score(float(attended), 1.0, () if attended else (NOTES["on time"],))
        path = outcome.workspace / OUTPUT
        readable, summary = common.parse_json(path)
        checks = {"on time": attended, "file": path.exists(), "format": readable,
                  "answer": readable and matches(summary, expected(task))}
        return Score(float(sum(checks.values())), 4.0, tuple(NOTES[name] for name, ok in checks.items() if not ok))


def expected(task: TaskSpec) -> list[dict[str, Any]]:
    """The summary's entries the reference expects: only the allowed requests for ``check`` types, with totals for
    the types that ask for them (``check`` asks for totals too, but they are not compared)."""
    task_type = task.check["task_type"]
    kept = [r for r in task.check["requests"] if r["reasonable"] or not task_type.startswith("check")]
    fields = ("name", "item", "quantity", "unit_price")
    with_total = task_type in ("sum", "check_sum")
    return [{**{f: r[f] for f in fields}, **({"total": r["quantity"] * r["unit_price"]} if with_total else {})}
            for r in kept]


def matches(summary: Any, wanted: list[dict[str, Any]]) -> bool:
    """Whether the summary's ``requirement`` list pairs off with ``wanted``: as many entries, each matching a
    distinct wanted one on the wanted fields (text equal ignoring case, numbers within 1), first match taken."""
    given = summary.get("requirement") if isinstance(summary, dict) else None
    if not isinstance(given, list) or len(given) != len(wanted) or not all(isinstance(g, dict) for g in given):
        return False
    left = list(wanted)
    for entry in given:
        found = next((w for w in left if all(_same(entry.get(f), v) for f, v in w.items())), None)
        if found is None:
            return False
        left.remove(found)
    return True


def _same(given: Any, wanted: str | int) -> bool:
    if isinstance(wanted, str):
        return isinstance(given, str) and given.lower() == wanted.lower()
    value = None if isinstance(given, str) else common.number(given)  # the reference compares no text with a number
    return value is not None and abs(value - wanted) <= TOLERANCE


NOTES = {
    "on time": "You were not in the meeting on time: watch the clock and leave other work to join as it starts.",
    "file": f"Write `{OUTPUT}` at the root of your workspace.",
    "format": f"`{OUTPUT}` has to be JSON, in exactly the format the meeting gave.",
    "answer": "The summary's requests are not the expected ones: read `procurement_rules.md` on the cloud disk, "
              "leave out the requests that break it, and list every one that keeps to it (a calculator helps "
              "avoid slips).",
}

FAMILY = MeetingAttend()
