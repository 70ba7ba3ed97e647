"""University course registration: students' transcripts and term schedules, courses with prerequisites, sections
with meeting times, capacity and waitlists; enrol, waitlist, drop and switch sections."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from occubench.executable.world import Call, Check, ExecTask, ToolError, World, found, one, only_changed, rows, scalar

world = World(
    name="course_registration", scenario="University Course Registration", category="Education & Culture",
    domain="Higher Education", directory=Path(__file__).parent,
    main_tables=("students", "courses", "sections", "enrollments", "completed_courses"),
    description="The registrar's staff console for Spring 2026 (term 2026SP): students with their transcripts, "
                "credit limits and holds; courses with prerequisites and minimum grades; sections with meeting days "
                "(M T W R F), times, capacity, seat counts (all registered students) and waitlists. Staff "
                "registrations are not checked for prerequisites or time conflicts: the registrar checks those.",
)

TERM = "2026SP"
NOW = "2025-11-14T10:00:00"
GRADES = ("A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D+", "D", "F")


def _student(db: sqlite3.Connection, student_id: str) -> dict[str, Any]:
    return found(db, "SELECT * FROM students WHERE student_id = ?", student_id,
                 missing=f"student {student_id} not found")


def _section(db: sqlite3.Connection, section_id: str) -> dict[str, Any]:
    section = one(db, "SELECT s.*, c.title, c.credits FROM sections s JOIN courses c ON c.course_code = s.course_code "
                      "WHERE s.section_id = ?", section_id.strip().upper())
    if section is None:
        raise ToolError(f"section {section_id} not found (section ids look like CS201-03)")
    return section


def _course(db: sqlite3.Connection, course_code: str) -> dict[str, Any]:
    course = one(db, "SELECT * FROM courses WHERE REPLACE(course_code, ' ', '') = ?",
                 course_code.replace(" ", "").upper())
    if course is None:
        raise ToolError(f"course {course_code} not found (course codes look like CS 201)")
    return course


def _entry(db: sqlite3.Connection, student_id: str, section_id: str) -> dict[str, Any] | None:
    return one(db, "SELECT * FROM enrollments WHERE student_id = ? AND section_id = ?", student_id, section_id)


def _waitlist_count(db: sqlite3.Connection, section_id: str) -> int:
    return scalar(db, "SELECT COUNT(*) FROM enrollments WHERE section_id = ? AND status = 'waitlisted'",
                  section_id)


def _close_gap(db: sqlite3.Connection, section_id: str, position: int) -> None:
    db.execute("UPDATE enrollments SET waitlist_position = waitlist_position - 1, updated_at = ? "
               "WHERE section_id = ? AND status = 'waitlisted' AND waitlist_position > ?", (NOW, section_id, position))


def _take_seat(db: sqlite3.Connection, student_id: str, section: dict[str, Any]) -> None:
    """Give the student a seat in the section (converting a waitlist or dropped entry), capacity permitting."""
    if section["enrolled"] >= section["capacity"]:
        raise ToolError(f"section {section['section_id']} is full ({section['enrolled']}/{section['capacity']}, "
                        f"{_waitlist_count(db, section['section_id'])} waitlisted); use add_to_waitlist")
    entry = _entry(db, student_id, section["section_id"])
    if entry is None:
        db.execute("INSERT INTO enrollments (student_id, section_id, status, waitlist_position, updated_at) "
                   "VALUES (?, ?, 'enrolled', NULL, ?)", (student_id, section["section_id"], NOW))
    else:
        db.execute("UPDATE enrollments SET status = 'enrolled', waitlist_position = NULL, updated_at = ? "
                   "WHERE enrollment_id = ?", (NOW, entry["enrollment_id"]))
        if entry["status"] == "waitlisted":
            _close_gap(db, section["section_id"], entry["waitlist_position"])
    db.execute("UPDATE sections SET enrolled = enrolled + 1 WHERE section_id = ?", (section["section_id"],))


def _schedule(db: sqlite3.Connection, student_id: str, status: str) -> list[dict[str, Any]]:
    return rows(db, "SELECT s.section_id, s.course_code, c.credits, s.days, s.start_time, s.end_time, "
                    "e.waitlist_position FROM enrollments e JOIN sections s ON s.section_id = e.section_id "
                    "JOIN courses c ON c.course_code = s.course_code WHERE e.student_id = ? AND e.status = ? "
                    "AND s.term = ? ORDER BY s.section_id", student_id, status, TERM)


@world.tool
def get_student(db: sqlite3.Connection, student_id: str) -> dict[str, Any]:
    """A student's profile, credit limit, holds, completed courses with grades, and their Spring 2026 schedule
    (enrolled sections with days and times) and waitlist entries.

    Args:
        student_id: Student identifier, e.g. S-2001.
    """
    student = _student(db, student_id)
    student["completed_courses"] = rows(db, "SELECT course_code, term, grade FROM completed_courses "
                                            "WHERE student_id = ? ORDER BY term, course_code", student_id)
    student["enrolled"] = [{k: v for k, v in r.items() if k != "waitlist_position"}
                           for r in _schedule(db, student_id, "enrolled")]
    student["waitlisted"] = _schedule(db, student_id, "waitlisted")
    student["enrolled_credits"] = sum(r["credits"] for r in student["enrolled"])
    return student


@world.tool
def get_course(db: sqlite3.Connection, course_code: str) -> dict[str, Any]:
    """A course's title, credits and prerequisites, each with the minimum grade required (grades rank A, A-, B+,
    B, B-, C+, C, C-, D+, D, F).

    Args:
        course_code: Course code, e.g. CS 201.
    """
    course = _course(db, course_code)
    course["prerequisites"] = rows(db, "SELECT prereq_code, min_grade FROM prerequisites WHERE course_code = ? "
                                       "ORDER BY prereq_code", course["course_code"])
    return course


@world.tool
def search_sections(db: sqlite3.Connection, course_code: str, only_open: bool = False) -> dict[str, Any]:
    """The Spring 2026 sections of a course with meeting days and times, seats taken, seats open and waitlist
    length.

    Args:
        course_code: Course code, e.g. PHYS 220.
        only_open: Only sections with at least one open seat.
    """
    course = _course(db, course_code)
    found = rows(db, "SELECT section_id, course_code, days, start_time, end_time, instructor, room, capacity, "
                     "enrolled, capacity - enrolled AS seats_open, (SELECT COUNT(*) FROM enrollments e WHERE "
                     "e.section_id = s.section_id AND e.status = 'waitlisted') AS waitlisted FROM sections s "
                     "WHERE course_code = ? AND term = ? AND (? = 0 OR enrolled < capacity) ORDER BY section_id",
                 course["course_code"], TERM, int(only_open))
    return {"course_code": course["course_code"], "credits": course["credits"], "term": TERM, "sections": found}


@world.tool
def list_waitlist(db: sqlite3.Connection, section_id: str) -> dict[str, Any]:
    """A section's waitlist in order, and its seats.

    Args:
        section_id: Section identifier, e.g. BIO310-01.
    """
    section = _section(db, section_id)
    waitlist = rows(db, "SELECT e.waitlist_position, e.student_id, st.name, e.updated_at AS joined_at "
                        "FROM enrollments e JOIN students st ON st.student_id = e.student_id "
                        "WHERE e.section_id = ? AND e.status = 'waitlisted' ORDER BY e.waitlist_position",
                    section["section_id"])
    return {"section_id": section["section_id"], "capacity": section["capacity"], "enrolled": section["enrolled"],
            "seats_open": section["capacity"] - section["enrolled"], "waitlist": waitlist}


def _registrable(db: sqlite3.Connection, student_id: str) -> dict[str, Any]:
    student = _student(db, student_id)
    if student["hold"]:
        raise ToolError(f"student {student_id} has a {student['hold']} hold; registration is blocked until it "
                        "is cleared")
    return student


@world.tool(writes=True)
def enroll_student(db: sqlite3.Connection, student_id: str, section_id: str) -> dict[str, Any]:
    """Register a student in a section with an open seat (a waitlist entry in that section is converted). Checks
    holds, seats, the credit limit and duplicate enrolment in the course; not prerequisites or time conflicts.

    Args:
        student_id: The student, e.g. S-2001.
        section_id: The section, e.g. CS201-03.
    """
    student = _registrable(db, student_id)
    section = _section(db, section_id)
    entry = _entry(db, student_id, section["section_id"])
    if entry and entry["status"] == "enrolled":
        raise ToolError(f"{student_id} is already enrolled in {section['section_id']}")
    other = one(db, "SELECT s.section_id FROM enrollments e JOIN sections s ON s.section_id = e.section_id "
                    "WHERE e.student_id = ? AND e.status = 'enrolled' AND s.course_code = ? AND s.term = ?",
                student_id, section["course_code"], section["term"])
    if other:
        raise ToolError(f"{student_id} is already enrolled in {other['section_id']} of {section['course_code']}; "
                        "use swap_section to change sections")
    credits = sum(r["credits"] for r in _schedule(db, student_id, "enrolled"))
    if credits + section["credits"] > student["credit_limit"]:
        raise ToolError(f"enrolling would bring {student_id} to {credits + section['credits']} credits, above the "
                        f"limit of {student['credit_limit']}")
    _take_seat(db, student_id, section)
    return {"student_id": student_id, "section_id": section["section_id"], "status": "enrolled",
            "was_waitlisted": bool(entry and entry["status"] == "waitlisted"),
            "enrolled_credits": credits + section["credits"]}


@world.tool(writes=True)
def add_to_waitlist(db: sqlite3.Connection, student_id: str, section_id: str) -> dict[str, Any]:
    """Put a student at the end of a full section's waitlist.

    Args:
        student_id: The student.
        section_id: A full section.
    """
    _registrable(db, student_id)
    section = _section(db, section_id)
    if section["enrolled"] < section["capacity"]:
        raise ToolError(f"section {section['section_id']} has open seats; enrol the student instead")
    entry = _entry(db, student_id, section["section_id"])
    if entry and entry["status"] != "dropped":
        raise ToolError(f"{student_id} is already {entry['status']} in {section['section_id']}")
    position = _waitlist_count(db, section["section_id"]) + 1
    if entry:
        db.execute("UPDATE enrollments SET status = 'waitlisted', waitlist_position = ?, updated_at = ? "
                   "WHERE enrollment_id = ?", (position, NOW, entry["enrollment_id"]))
    else:
        db.execute("INSERT INTO enrollments (student_id, section_id, status, waitlist_position, updated_at) "
                   "VALUES (?, ?, 'waitlisted', ?, ?)", (student_id, section["section_id"], position, NOW))
    return {"student_id": student_id, "section_id": section["section_id"], "status": "waitlisted",
            "waitlist_position": position}


@world.tool(writes=True)
def drop_enrollment(db: sqlite3.Connection, student_id: str, section_id: str) -> dict[str, Any]:
    """Drop a student from a section they are enrolled or waitlisted in. A freed seat is NOT filled automatically.

    Args:
        student_id: The student.
        section_id: The section to drop.
    """
    _student(db, student_id)
    section = _section(db, section_id)
    entry = _entry(db, student_id, section["section_id"])
    if entry is None or entry["status"] == "dropped":
        raise ToolError(f"{student_id} is not enrolled or waitlisted in {section['section_id']}")
    db.execute("UPDATE enrollments SET status = 'dropped', waitlist_position = NULL, updated_at = ? "
               "WHERE enrollment_id = ?", (NOW, entry["enrollment_id"]))
    if entry["status"] == "enrolled":
        db.execute("UPDATE sections SET enrolled = enrolled - 1 WHERE section_id = ?", (section["section_id"],))
    else:
        _close_gap(db, section["section_id"], entry["waitlist_position"])
    after = _section(db, section["section_id"])
    return {"student_id": student_id, "section_id": section["section_id"], "previous_status": entry["status"],
            "status": "dropped", "seats_open": after["capacity"] - after["enrolled"],
            "waitlisted": _waitlist_count(db, section["section_id"])}


@world.tool(writes=True)
def swap_section(db: sqlite3.Connection, student_id: str, from_section_id: str, to_section_id: str) -> dict[str, Any]:
    """Move a student from one section of a course to another section of the same course in one step (the new
    section needs an open seat). Does not check time conflicts.

    Args:
        student_id: The student.
        from_section_id: The section the student is enrolled in now.
        to_section_id: Another section of the same course.
    """
    _registrable(db, student_id)
    source, target = _section(db, from_section_id), _section(db, to_section_id)
    if source["section_id"] == target["section_id"]:
        raise ToolError("from_section_id and to_section_id are the same section")
    if (source["course_code"], source["term"]) != (target["course_code"], target["term"]):
        raise ToolError(f"{target['section_id']} is a section of {target['course_code']}, not "
                        f"{source['course_code']}; drop and enrol instead")
    entry = _entry(db, student_id, source["section_id"])
    if entry is None or entry["status"] != "enrolled":
        raise ToolError(f"{student_id} is not enrolled in {source['section_id']}")
    _take_seat(db, student_id, target)
    db.execute("UPDATE enrollments SET status = 'dropped', waitlist_position = NULL, updated_at = ? "
               "WHERE enrollment_id = ?", (NOW, entry["enrollment_id"]))
    db.execute("UPDATE sections SET enrolled = enrolled - 1 WHERE section_id = ?", (source["section_id"],))
    return {"student_id": student_id, "dropped": source["section_id"], "enrolled": target["section_id"],
            "meets": f"{target['days']} {target['start_time']}-{target['end_time']}"}


# ---------------------------------------------------------------- tasks

def _status(db: sqlite3.Connection, student_id: str, section_id: str) -> tuple[Any, Any]:
    entry = _entry(db, student_id, section_id) or {}
    return entry.get("status"), entry.get("waitlist_position")


def _seats(db: sqlite3.Connection, section_id: str) -> int | None:
    return (one(db, "SELECT enrolled FROM sections WHERE section_id = ?", section_id) or {}).get("enrolled")


def _ids(db: sqlite3.Connection, pairs: set[tuple[str, str]]) -> set[int]:
    return {r["enrollment_id"] for r in rows(db, "SELECT enrollment_id, student_id, section_id FROM enrollments")
            if (r["student_id"], r["section_id"]) in pairs}


def _verify_enrol(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    return [
        Check("S-2001 enrolled in CS201-03", _status(final, "S-2001", "CS201-03")[0] == "enrolled",
              f"status {_status(final, 'S-2001', 'CS201-03')[0]}"),
        Check("CS201-03 now has 23 seats taken", _seats(final, "CS201-03") == 23, f"{_seats(final, 'CS201-03')}"),
        only_changed(initial, final, "enrollments", "enrollment_id", _ids(final, {("S-2001", "CS201-03")})),
        only_changed(initial, final, "sections", "section_id", {"CS201-03"}),
        Check("answer names the section", "CS201-03" in answer.upper().replace(" ", "") or "13:00" in answer),
    ]


world.task(ExecTask(
    id="enrol_without_conflict", difficulty=1,
    instruction="Maya Lindgren (S-2001) wants to add CS 201 Data Structures for Spring 2026. Check she meets the "
                "prerequisites, then enrol her in a section that has an open seat and does not clash with anything "
                "already on her schedule. Tell me which section she got.",
    verify=_verify_enrol,
    reference=[Call("get_student", {"student_id": "S-2001"}),
               Call("get_course", {"course_code": "CS 201"}),
               Call("search_sections", {"course_code": "CS 201"}),
               Call("enroll_student", {"student_id": "S-2001", "section_id": "CS201-03"})],
    answer="Maya has CS 101 with a B+ (C required), so she qualifies. CS201-01 (MWF 10:00) clashes with MATH221-01 "
           "and CS201-02 is full, so she is enrolled in CS201-03 (TR 13:00-14:15).",
    wrong=[Call("get_student", {"student_id": "S-2001"}),
           Call("get_course", {"course_code": "CS 201"}),
           Call("search_sections", {"course_code": "CS 201", "only_open": True}),
           Call("enroll_student", {"student_id": "S-2001", "section_id": "CS201-01"})],
    wrong_answer="Maya is enrolled in CS201-01, the first section with open seats.",
    rubric="S-2001 completed CS 101 (B+ ≥ C). Her schedule: MATH221-01 MWF 10:00-10:50, ECON101-01 TR 11:00-12:15, "
           "ENG250-01 TR 14:30-15:45. CS201-01 (MWF 10:00) clashes with MATH 221; CS201-02 is full (35/35); "
           "CS201-03 (TR 13:00-14:15, 22/30) fits. Enrolling in CS201-01 creates a time conflict.",
))

_BIO_WAITLIST = {("S-2005", "BIO310-01"), ("S-2019", "BIO310-01"), ("S-2020", "BIO310-01")}


def _verify_waitlist(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    states = {s: _status(final, s, "BIO310-01") for s in ("S-2005", "S-2011", "S-2014", "S-2019", "S-2020")}
    return [
        Check("S-2005 dropped from BIO310-01", states["S-2005"][0] == "dropped", f"{states['S-2005']}"),
        Check("the seat went to Lucía Romero (S-2019)", states["S-2019"][0] == "enrolled", f"{states['S-2019']}"),
        Check("S-2011 (C- in BIO 210) and S-2014 (clash with ECON202-01) stay waitlisted at 1 and 2",
              states["S-2011"] == ("waitlisted", 1) and states["S-2014"] == ("waitlisted", 2),
              f"S-2011 {states['S-2011']}, S-2014 {states['S-2014']}"),
        Check("S-2020 moves up to position 3", states["S-2020"] == ("waitlisted", 3), f"{states['S-2020']}"),
        Check("BIO310-01 stays full at 24", _seats(final, "BIO310-01") == 24, f"{_seats(final, 'BIO310-01')}"),
        only_changed(initial, final, "enrollments", "enrollment_id", _ids(final, _BIO_WAITLIST)),
        only_changed(initial, final, "sections", "section_id", {"BIO310-01"}),
        Check("answer names who got the seat", "S-2019" in answer or "Romero" in answer),
    ]


world.task(ExecTask(
    id="fill_seat_from_waitlist", difficulty=2,
    instruction="Ethan Brooks (S-2005) is dropping Genetics, section BIO310-01. Process his drop, then give the "
                "freed seat to the first student in waitlist order who meets every BIO 310 prerequisite at the "
                "required minimum grade and has no time conflict with their current schedule. Anyone skipped stays "
                "on the waitlist. Tell me who got the seat and why anyone ahead of them was skipped.",
    verify=_verify_waitlist,
    reference=[Call("drop_enrollment", {"student_id": "S-2005", "section_id": "BIO310-01"}),
               Call("list_waitlist", {"section_id": "BIO310-01"}),
               Call("get_course", {"course_code": "BIO 310"}),
               Call("search_sections", {"course_code": "BIO 310"}),
               Call("get_student", {"student_id": "S-2011"}),
               Call("get_student", {"student_id": "S-2014"}),
               Call("get_student", {"student_id": "S-2019"}),
               Call("enroll_student", {"student_id": "S-2019", "section_id": "BIO310-01"})],
    answer="Dropped S-2005 from BIO310-01. The seat went to Lucía Romero (S-2019, waitlist #3): BIO 210 A-, CHEM 120 "
           "B, no clash. Skipped Hana Yoshida (S-2011, #1) — BIO 210 grade C- is below the required C — and Omar "
           "Haddad (S-2014, #2) — ECON202-01 meets TR 08:00-09:15, the same time as BIO310-01. Both stay waitlisted.",
    wrong=[Call("drop_enrollment", {"student_id": "S-2005", "section_id": "BIO310-01"}),
           Call("list_waitlist", {"section_id": "BIO310-01"}),
           Call("get_student", {"student_id": "S-2011"}),
           Call("enroll_student", {"student_id": "S-2011", "section_id": "BIO310-01"})],
    wrong_answer="The seat went to Hana Yoshida (S-2011), first on the waitlist.",
    rubric="BIO 310 needs BIO 210 and CHEM 120 at C or better; BIO310-01 meets TR 08:00-09:15. Waitlist: #1 S-2011 "
           "has BIO 210 C- (below C) → skip; #2 S-2014 is enrolled in ECON202-01 TR 08:00-09:15 → clash, skip; #3 "
           "S-2019 (BIO 210 A-, CHEM 120 B, schedule TR 11:00 and MW 15:00) qualifies and is enrolled; S-2020 moves "
           "to #3. Giving the seat to #1 ignores the minimum grade.",
))

_NADIA = {("S-2013", s) for s in ("PHYS220-01", "PHYS220-04", "HIST110-01", "HIST110-02")}
_NADIA_PLAN = ["ECON202-02", "ENG250-01", "HIST110-02", "MATH301-01", "PHYS220-04"]


def _verify_conflicts(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    plan = sorted(r["section_id"] for r in rows(final, "SELECT section_id FROM enrollments WHERE student_id = "
                                                       "'S-2013' AND status = 'enrolled'"))
    seats = {s: _seats(final, s) for s in ("PHYS220-01", "PHYS220-04", "HIST110-01", "HIST110-02")}
    return [
        Check("S-2013 keeps all five courses with no clash: PHYS 220 in -04, HIST 110 in -02", plan == _NADIA_PLAN,
              f"enrolled in {plan}"),
        Check("seat counts follow the moves",
              seats == {"PHYS220-01": 27, "PHYS220-04": 16, "HIST110-01": 35, "HIST110-02": 26}, f"{seats}"),
        only_changed(initial, final, "enrollments", "enrollment_id", _ids(final, _NADIA)),
        only_changed(initial, final, "sections", "section_id",
                     {"PHYS220-01", "PHYS220-04", "HIST110-01", "HIST110-02"}),
        Check("answer names the new sections",
              all(s in answer.upper().replace(" ", "") for s in ("PHYS220-04", "HIST110-02"))),
    ]


world.task(ExecTask(
    id="resolve_term_conflicts", difficulty=3,
    instruction="Nadia Rahman (S-2013) has time conflicts in her Spring 2026 schedule. Fix them: she must keep every "
                "course she is registered for, so only switch sections, only into sections with an open seat, and "
                "change as few registrations as possible. Her final schedule must have no overlapping meetings. "
                "Report the changes you made.",
    verify=_verify_conflicts,
    reference=[Call("get_student", {"student_id": "S-2013"}),
               Call("search_sections", {"course_code": "MATH 301"}),
               Call("search_sections", {"course_code": "PHYS 220"}),
               Call("search_sections", {"course_code": "ECON 202"}),
               Call("search_sections", {"course_code": "HIST 110"}),
               Call("swap_section", {"student_id": "S-2013", "from_section_id": "PHYS220-01",
                                     "to_section_id": "PHYS220-04"}),
               Call("swap_section", {"student_id": "S-2013", "from_section_id": "HIST110-01",
                                     "to_section_id": "HIST110-02"}),
               Call("get_student", {"student_id": "S-2013"})],
    answer="Two conflicts: MATH301-01 (MWF 09:00-09:50) vs PHYS220-01 (MWF 09:30-10:20), and ECON202-02 (TR "
           "11:00-12:15) vs HIST110-01 (TR 12:00-13:15). MATH 301 has one section, PHYS220-02 is full and PHYS220-03 "
           "(TR 14:00) clashes with ENG250-01, so PHYS 220 moved to PHYS220-04 (MWF 13:00-13:50). ECON202-01 is full "
           "and HIST110-03 clashes with ENG 250, so HIST 110 moved to HIST110-02 (MW 15:00-16:15).",
    wrong=[Call("get_student", {"student_id": "S-2013"}),
           Call("search_sections", {"course_code": "PHYS 220", "only_open": True}),
           Call("search_sections", {"course_code": "HIST 110", "only_open": True}),
           Call("swap_section", {"student_id": "S-2013", "from_section_id": "PHYS220-01",
                                 "to_section_id": "PHYS220-03"}),
           Call("swap_section", {"student_id": "S-2013", "from_section_id": "HIST110-01",
                                 "to_section_id": "HIST110-02"})],
    wrong_answer="Moved PHYS 220 to PHYS220-03 and HIST 110 to HIST110-02; the conflicts are resolved.",
    rubric="S-2013: MATH301-01 MWF 09:00-09:50 overlaps PHYS220-01 MWF 09:30-10:20; ECON202-02 TR 11:00-12:15 "
           "overlaps HIST110-01 TR 12:00-13:15; ENG250-01 TR 14:30-15:45. MATH 301 has a single section, so PHYS "
           "220 moves: -02 is full, -03 (TR 14:00-15:15) overlaps ENG 250, -04 (MWF 13:00-13:50) fits. ECON202-01 "
           "is full, so HIST 110 moves: -03 (TR 14:00) overlaps ENG 250, -02 (MW 15:00-16:15) fits. Two swaps, "
           "five courses kept. Taking PHYS220-03 leaves a clash with ENG 250.",
))
