"""Inquiry with the shell: which API endpoint failed most during this morning's incident, and how often. The gateway
log is far too large to read whole (a count over it is work for a command); when the incident ran is the on-call
engineer's to tell, and the log holds an earlier burst of server errors and a burst of client errors to mislead."""

from __future__ import annotations

import random

from occubench.workplace.model import Clue, clock
from occubench.workplace.templates._shared import send_message, told
from occubench.workplace.templates.base import Family, Names, Piece, call, colleague, task

#: No endpoint begins another, so one found in a text is that endpoint.
_ENDPOINTS = ("/api/checkout", "/api/orders", "/api/payments", "/api/search", "/api/login", "/api/inventory",
              "/api/profile", "/api/shipping", "/api/reviews", "/api/coupons")
_POSTED = {"/api/checkout", "/api/payments", "/api/login", "/api/reviews"}


def _lines(rng: random.Random, count: int, endpoint: str | None, statuses: tuple[str, ...], first: int,
           last: int) -> list[tuple[int, str, str]]:
    """``count`` requests (second of the day, endpoint, status) between minutes ``first`` and ``last``."""
    return [(rng.randint(first * 60, last * 60 - 1), endpoint or rng.choice(_ENDPOINTS), rng.choice(statuses))
            for _ in range(count)]


def _server_errors(lines: list[tuple[int, str, str]], begin: int, end: int, least: str = "5") -> dict[str, int]:
    counts = dict.fromkeys(_ENDPOINTS, 0)
    for second, endpoint, status in lines:
        counts[endpoint] += begin * 60 <= second < end * 60 and status >= least
    return counts


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    begin = rng.randint(7 * 60, 8 * 60 - 5)
    end = begin + rng.randint(20, 40)
    culprit, decoy, scanned = rng.sample(_ENDPOINTS, 3)
    routine = _lines(rng, rng.randint(2000, 2400), None, ("200",) * 40 + ("201", "304", "404", "401", "500", "503"),
                     6 * 60, 9 * 60)
    # No server error near the window's edges, so "from 07:42 to 08:17" means the same counted either way.
    lines = [(s, e, "200" if st >= "5" and min(abs(s - begin * 60), abs(s - end * 60)) < 120 else st)
             for s, e, st in routine]
    while True:  # the count is no number of the window's times or of a deadline (quarter hours), which a report
        # or the objective may well mention
        burst = _lines(rng, rng.randint(25, 60), culprit, ("500", "502", "503", "504"), begin + 2, end - 2)
        count = _server_errors(lines + burst, begin, end)[culprit]
        if count not in (begin // 60, begin % 60, end // 60, end % 60, 15, 30, 45):
            break
    lines += burst
    # Earlier, a deploy's blip on another endpoint (more errors over the whole log); in the window, a scanner's 404s.
    lines += _lines(rng, _server_errors(lines, 0, 24 * 60)[culprit] + rng.randint(8, 25), decoy, ("502", "503"),
                    6 * 60 + 5, 6 * 60 + 50)
    lines += _lines(rng, count + rng.randint(10, 30), scanned, ("404", "401"), begin + 2, end - 2)
    path, copy = f"logs/gateway_{task_id}.log", f"gateway_{task_id}.log"
    log = "".join(f"2025-10-01T{clock(second // 60)}:{second % 60:02d} {'POST' if e in _POSTED else 'GET'} {e} {st} "
                  f"{rng.randint(8, 400) if st < '5' else rng.randint(900, 30000)}ms req={rng.getrandbits(32):08x}\n"
                  for second, e, st in sorted(lines))
    lead = colleague(names, "SRE lead", "Engineering")
    oncall = colleague(names, "On-call engineer", "Engineering", Clue(
        f"{task_id}-window", f"The pager went off at {clock(begin)} and we called the incident over at {clock(end)}; "
        "anything outside that is the usual noise.",
        [["incident", "outage", "when", "window", "start*", "began", "ended", "pager", "time*"]]))
    script = ("python3 -c \"\nimport collections\nhits = collections.Counter()\nfor line in open('" + copy + "'):\n"
              "    when, method, endpoint, status = line.split()[:4]\n"
              f"    if '{clock(begin)}' <= when[11:16] < '{clock(end)}' and status.startswith('5'):\n"
              "        hits[endpoint] += 1\nprint(hits.most_common(3))\n\"")
    return Piece(
        tasks=[task(task_id, FAMILY,
                    "Customers reported failed requests during this morning's incident. From the API gateway's log "
                    f"{path} on the drive, find which endpoint returned the most server errors (a 5xx status) during "
                    "the incident, and how many it returned then. The log is too large to read whole: copy it to "
                    f"your workspace and work on it with shell commands. {oncall.name} was on call and knows when "
                    f"the incident started and ended. Send {lead.name} the endpoint and the count by {{deadline}}.",
                    [told("failing endpoint found", 1, "Name the endpoint with the most 5xx responses inside the "
                          "incident window the on-call engineer gives: server errors before or after it, and client "
                          "errors (4xx), are not the incident's.", lead.name, [culprit]),
                     told("server errors counted", 2, "Count that endpoint's 5xx responses from the incident's start "
                          "to its end with a command over the whole log, rather than estimating from part of it.",
                          lead.name, [str(count)])],
                    [send_message(oncall.name, "When did this morning's incident start and end?"),
                     call("download_file", file_path=path, target_path=copy),
                     call("execute_command", command=script),
                     send_message(lead.name, f"During the incident ({clock(begin)} to {clock(end)}) {culprit} returned "
                                  f"the most server errors: {count} responses with a 5xx status.")],
                    hints=(f"Everything needed is in {path}, which is too large for read_file; the incident's start "
                           "and end are not in it.",
                           f"Ask {oncall.name}, who was on call, when the incident started and ended; {lead.name} "
                           "wants the endpoint and the count.",
                           f"download_file {path} into your workspace, ask {oncall.name} for the incident window, "
                           "execute_command a short Python script that counts each endpoint's lines with a 5xx "
                           f"status and a time inside the window, and send_message {lead.name} the endpoint with the "
                           "most and its count."))],
        colleagues=[lead, oncall],
        drive={path: log},
    )


FAMILY = Family("incident_log_analysis", "inquiry", "hard", "Technology & IT", build,
                tools=frozenset({"execute_command"}))
