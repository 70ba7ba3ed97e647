"""Information synthesis (easy): count a public consultation's responses by theme. Responses that arrived after
the consultation closed do not count, and only the consultation coordinator knows the closing date."""

from __future__ import annotations

import random
from datetime import date, timedelta

from occubench.workplace.model import Clue
from occubench.workplace.templates._shared import in_file, not_in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, colleague, task

#: Consultations and the themes their responses are filed under; no theme occurs inside another.
_CONSULTATIONS = (
    ("town centre regeneration plan", ("Parking", "Cycle lanes", "Green space", "Market square", "Street lighting",
                                       "Shop frontages")),
    ("local bus network review", ("Route changes", "Timetables", "Fares", "Accessibility", "Night services",
                                  "Bus shelters")),
    ("waste collection changes", ("Bin sizes", "Collection days", "Food waste", "Garden waste", "Recycling centres",
                                  "Fly-tipping")),
    ("new library and community hub", ("Opening hours", "Location", "Children's services", "Digital access",
                                       "Meeting rooms", "Car parking")),
    ("riverside flood defence scheme", ("Flood walls", "Footpaths", "Wildlife habitat", "Construction noise",
                                        "Property access", "Cost to residents")),
)
_RESPONDENTS = ("Resident", "Resident", "Resident", "Local business", "Community group", "Parish council")
_STANCES = ("support", "oppose", "mixed", "support", "oppose")


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    topic, pool = rng.choice(_CONSULTATIONS)
    themes = rng.sample(pool, rng.randint(4, 5))
    closing = date(2024, rng.randint(2, 11), rng.randint(1, 28))
    opened = closing - timedelta(days=rng.choice((28, 42, 56)))
    while True:
        rows = []  # (id, received, respondent, theme, stance)
        for _ in range(rng.randint(26, 40)):
            late = rng.random() < 0.18
            received = closing + timedelta(days=rng.randint(1, 9)) if late else \
                opened + timedelta(days=rng.randint(0, (closing - opened).days))
            rows.append((names.code("RSP"), received, rng.choice(_RESPONDENTS), rng.choice(themes),
                         rng.choice(_STANCES)))
        counts = {t: sum(1 for r in rows if r[3] == t and r[1] <= closing) for t in themes}
        every = {t: sum(1 for r in rows if r[3] == t) for t in themes}
        late_themes = [t for t in themes if every[t] != counts[t]]
        # Every theme has valid responses; the late ones change at least two counts, and one response came in
        # on the closing day itself (it counts).
        if min(counts.values()) >= 1 and len(late_themes) >= 2 and any(r[1] == closing for r in rows):
            break
        for code, *_ in rows:  # give the codes back: the redraw makes new ones
            names.used.discard(code)
    lines = [f"{t}: {counts[t]}" for t in themes]
    wrong = [f"{t}: {every[t]}" for t in late_themes]
    coordinator = colleague(names, "Consultation coordinator", "Policy & Engagement")
    coordinator.clues.append(Clue(
        f"{task_id}-closing",
        f"The {topic} consultation closed at midnight at the end of {closing.day} {closing:%B %Y}. Responses "
        "received on the closing day count; anything received after it is late and stays out of the figures.",
        [["closing date", "closed", "close", "closing", "deadline", "cut off", "cutoff", "late", "end date",
          "when did"]]))
    manager = colleague(names, "Policy manager", "Policy & Engagement")
    source = f"consultations/{topic.split()[0]}_{topic.split()[1]}_responses_{task_id}.csv"
    digest = f"consultation_digest_{task_id}.txt"
    table = "response_id,received,respondent,theme,stance\n" + "".join(
        f"{code},{received:%Y-%m-%d},{who},{theme},{stance}\n" for code, received, who, theme, stance in
        sorted(rows, key=lambda r: r[0]))
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{manager.name} needs a digest of the {topic} consultation for the cabinet briefing. The "
                    f"responses are in {source} on the drive. Count the responses under each theme, counting only "
                    f"those received by the closing date ({coordinator.name}, the consultation coordinator, has "
                    f"it). Write one line per theme as '<theme>: <count>' to {digest} in your workspace and send the "
                    f"same lines to {manager.name} by {{deadline}}.",
                    [in_file("counts by theme", 2, "Count each theme's responses received on or before the closing "
                             "date, as '<theme>: <count>'; ask the coordinator for the closing date.", digest, lines),
                     not_in_file("late responses left out", 1,
                                 "Responses received after the consultation closed must not be counted.",
                                 digest, wrong),
                     told("manager sent the counts", 1, "Send the policy manager the count for every theme.",
                          manager.name, lines)],
                    [read_file(source),
                     send_message(coordinator.name, f"What was the closing date of the {topic} consultation?"),
                     write_file(digest, "\n".join(lines) + "\n"),
                     send_message(manager.name,
                                  f"Responses to the {topic} consultation by theme: " + "; ".join(lines))],
                    hints=(f"The responses, with the date each was received and its theme, are in {source} on the "
                           "drive; the closing date is not in the file.",
                           f"Ask {coordinator.name}, the consultation coordinator, when the consultation closed, so "
                           f"late responses can be left out; {manager.name} only receives the counts.",
                           f"read_file {source}; send_message {coordinator.name} asking for the closing date; for "
                           "each theme count the rows received on or before that date (a response on the closing "
                           f"day counts); write_file {digest} with one '<theme>: <count>' line per theme; "
                           f"send_message {manager.name} the same lines."))],
        colleagues=[coordinator, manager],
        drive={source: table},
    )


FAMILY = Family("public_consultation_digest", "synthesis", "easy", "Public Service & Governance", build)
