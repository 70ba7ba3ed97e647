"""Inquiry (easy): which permit applications of one type are past their statutory decision period, escalated to the
manager who licenses that type. The period, and that a paused application is not overdue, are the permits
coordinator's; the applications list is on the drive."""

from __future__ import annotations

import datetime as dt
import random

from occubench.workplace.model import Clue
from occubench.workplace.templates._shared import in_file, not_in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, call, colleague, task

_TYPES = ("event", "street works", "signage", "market stall", "tree works", "scaffolding")
_APPLICANTS = ("Harbour Festival Trust", "Greenway Utilities", "Café Lumière", "St Mary's School PTA",
               "Northside Builders", "Riverside Market Co-op", "Bright Signs Ltd", "Oakwood Residents Association",
               "City Cycling Club", "Marlow Construction", "Foxglove Florists", "Union Street Bakery",
               "Tallis Scaffolding", "Parkside Theatre", "Eastbank Water")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
#: Margin in days around the decision period, so no count of "days since" is off by one.
MARGIN = 3


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    kind, *rest = rng.sample(_TYPES, 3)
    period = rng.choice((14, 21, 28, 42))
    today = dt.date(2024, rng.randint(3, 11), rng.randint(1, 28))

    def received(low: int, high: int) -> dt.date:
        return today - dt.timedelta(days=rng.randint(low, high))

    # (type, received, status): the overdue ones, some still in time, one paused while documents are awaited, one
    # already decided, and older applications of other types that are not this check's business.
    rows = [(kind, received(period + MARGIN, period + 30), "in review") for _ in range(rng.randint(1, 3))]
    overdue = len(rows)
    rows += [(kind, received(1, period - MARGIN), "in review") for _ in range(rng.randint(2, 3))]
    rows += [(kind, received(period + MARGIN, period + 40), "awaiting documents"),
             (kind, received(period + MARGIN, period + 40), rng.choice(("approved", "refused")))]
    rows += [(rng.choice(rest), received(period + MARGIN, period + 50), "in review") for _ in range(2)]
    rows += [(rng.choice(rest), received(1, 60), rng.choice(("in review", "approved", "awaiting documents")))
             for _ in range(rng.randint(2, 4))]
    ids = [names.code("PMT") for _ in rows]
    late = sorted(ids[:overdue])
    others = sorted(ids[overdue:])
    applicants = [rng.choice(_APPLICANTS) for _ in rows]
    table = sorted(zip(ids, rows, applicants), key=lambda r: (r[1][1], r[0]))

    coordinator = colleague(names, "Permits coordinator", "Licensing",
                            Clue(f"{task_id}-period", f"{kind.capitalize()} permits must be decided within {period} "
                                 "calendar days of the date received. An application marked 'awaiting documents' is "
                                 "paused, so it is not overdue; approved and refused ones are closed.",
                                 [["deadline", "period", "how long", "how many days", "time limit", "statutory",
                                   "overdue", "decide", "decided", "decision", "turnaround", "late"]]))
    head = colleague(names, "Head of permits", "Licensing")
    manager = colleague(names, f"{kind.capitalize()} licensing manager", "Licensing")
    decoys = [colleague(names, f"{other.capitalize()} licensing manager", "Licensing") for other in rest]
    source = f"permits/applications_{task_id}.csv"
    note = f"overdue_{kind.replace(' ', '_')}_permits_{task_id}.txt"
    date = f"{today.day} {_MONTHS[today.month - 1]} {today.year}"
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"Today is {date}. {head.name}, head of permits, asks for this week's backlog check of "
                    f"{kind} permits: which applications are past their statutory decision period? The open "
                    f"register is {source} on the drive; the permits coordinator knows the decision periods. Write "
                    f"the ids of the overdue {kind} applications, one per line, to {note} in your workspace, and "
                    f"escalate them to the manager responsible for {kind} licensing by {{deadline}}.",
                    [in_file("overdue permits found", 2, "List every application of the type still under review for "
                             "longer than the statutory period the coordinator gives, counted from the date received.",
                             note, late),
                     not_in_file("nothing listed wrongly", 1, "Applications still within the period, paused while "
                                 "documents are awaited, already decided, or of another type do not belong in the "
                                 "list.", note, others),
                     told("licensing manager told", 2, "Escalate the overdue ids to the licensing manager for that "
                          "permit type (see the roles in list_users), not to another team.", manager.name, late)],
                    [read_file(source),
                     send_message(coordinator.name, f"What is the statutory decision period for {kind} permits?"),
                     call("list_users"),
                     write_file(note, "\n".join(late) + "\n"),
                     send_message(manager.name, f"Overdue {kind} permit applications: {', '.join(late)}.")],
                    hints=(f"The applications, with type, date received and status, are in {source} on the drive; "
                           f"the decision period for {kind} permits is not in the file.",
                           f"Ask {coordinator.name}, the permits coordinator, how many days a {kind} permit may take "
                           "and which statuses stop the clock; the overdue ids go to the licensing manager for "
                           f"{kind} permits, whom list_users shows by role.",
                           f"Read {source}, ask the coordinator for the decision period, keep the {kind} "
                           "applications still in review that were received longer ago than the period allows, "
                           f"write their ids one per line to {note}, find the {kind} licensing manager with "
                           "list_users and message them the ids."))],
        colleagues=[coordinator, head, manager, *decoys],
        drive={source: "permit_id,type,applicant,received,status\n" + "".join(
            f"{i},{t},{a},{r.isoformat()},{s}\n" for i, (t, r, s), a in table)},
    )


FAMILY = Family("permit_backlog", "inquiry", "easy", "Public Service & Governance", build)
