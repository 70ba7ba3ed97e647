"""Scheduling (hard): book a room for a course section's make-up session today. The timetabling officer has the
make-up time (the weekly timetable on the drive shows only the regular slots); the enrolment list on the drive
says how many students of the section still come (not the withdrawn or wait-listed ones, nor the other section);
the rooms big enough are all taken then but one, while a room one seat too small is free."""

from __future__ import annotations

import random

from occubench.workplace.model import Clue, clock, minutes
from occubench.workplace.templates._shared import book, booked, csv, fitting_rooms, later, read_file, send_message, told
from occubench.workplace.templates.base import Family, Names, Piece, colleague, task

_COURSES = (("HIST", "Early Modern Europe"), ("PHIL", "Ethics and Public Life"), ("ECON", "Behavioural Economics"),
            ("LING", "Sociolinguistics"), ("ARTH", "Renaissance Art"), ("MUSC", "Music and Society"),
            ("LITR", "The Victorian Novel"), ("ANTH", "Museums and Heritage"), ("CLAS", "Greek Tragedy"),
            ("FILM", "World Cinema"))
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
#: Make-up starts, all in the afternoon so the booking is still ahead when the day's reference reaches it.
_STARTS = ("14:00", "14:30", "15:00", "15:30", "16:00")
_REGULAR = ("09:00", "10:00", "11:00", "12:00", "13:00", "14:00", "15:00", "16:00")
_REASONS = ("a strike day", "the instructor's conference trip", "the fire drill", "the building's power cut",
            "the snow closure")


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    subject, title = rng.choice(_COURSES)
    course = names.code(subject)
    section, other_section = rng.sample(("A", "B", "C"), 2)
    start = rng.choice(_STARTS)
    length = rng.choice((60, 90))
    end = later(start, length)
    # Seats: the students still enrolled in the section and the instructor, one more than a room has (Aurora's
    # four, Birch's six), which is free: one seat short for whoever forgets a seat. The rooms that fit are all
    # taken then but one.
    seats = rng.choice((5, 7))
    fitting = fitting_rooms(seats)
    room = rng.choice(fitting)
    busy = []
    for taken in (r for r in fitting if r != room):
        shift, span = rng.choice((-30, 0, 30)), rng.choice((60, 90))
        begin = minutes(start) + shift  # overlaps the session whatever the shift and span
        busy.append({"room": taken, "start": clock(begin), "end": clock(begin + span)})
    if rng.random() < 0.5:  # the free room is booked up to the very start, which does not clash
        busy.append({"room": room, "start": clock(minutes(start) - 60), "end": start})
    # (student id, name, section, status): the section's students still enrolled, those who left it, the other's
    roster = [(names.code("STU"), names.person(), section, "enrolled") for _ in range(seats - 1)]
    roster += [(names.code("STU"), names.person(), section, status)
               for status in rng.sample(("withdrawn", "withdrawn", "waitlisted"), rng.randint(2, 3))]
    roster += [(names.code("STU"), names.person(), other_section,
                rng.choice(("enrolled", "enrolled", "enrolled", "withdrawn"))) for _ in range(rng.randint(5, 9))]
    roster.sort()

    instructor = colleague(names, "Lecturer", f"{title} ({course})")
    officer = colleague(names, "Timetabling officer", "Registry")
    officer.clues.append(Clue(
        f"{task_id}-makeup",
        f"{course} section {section} has its make-up session today from {start} to {end}. The weekly timetable "
        "shows the regular slots only; make-up sessions are not in it.",
        [["make up", "makeup", "slot", "when", "time", "reschedul*", "session", "timetabl*"]]))
    weekly = [(course, section, rng.choice(_DAYS), rng.choice([h for h in _REGULAR if h != start]), instructor.name)]
    weekly.append((course, other_section, rng.choice(_DAYS), rng.choice(_REGULAR), instructor.name))
    for _ in range(rng.randint(4, 6)):
        other_subject, _title = rng.choice(_COURSES)
        weekly.append((names.code(other_subject), rng.choice("ABC"), rng.choice(_DAYS), rng.choice(_REGULAR),
                       names.person()))
    timetable = f"registry/weekly_timetable_{task_id}.csv"
    enrolment = f"registry/{course}_enrolment_{task_id}.csv"
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{instructor.name}'s {course} {title} session for section {section} was cancelled because of "
                    f"{rng.choice(_REASONS)}, and the make-up session is today. {officer.name} (timetabling) has "
                    f"its time. Book a free room for it with a seat for every student still enrolled in section "
                    f"{section} (see {enrolment} on the drive) and one for {instructor.name}, invite "
                    f"{instructor.name}, and tell them the room and the time by {{deadline}}. The weekly timetable "
                    f"is in {timetable}.",
                    [booked("make-up room booked", 3, "Book the make-up session at the time the timetabling officer "
                            "gives (not the weekly slot), in a free room with a seat for each student still enrolled "
                            "in the section and for the instructor, inviting the instructor.",
                            start, end, [instructor.name], seats),
                     told("instructor told room and time", 1,
                          "Tell the instructor which room you booked and when the session starts.",
                          instructor.name, [room, start])],
                    [send_message(officer.name, f"When is the make-up session for {course} section {section} today?"),
                     read_file(enrolment),
                     *book(room, start, end, seats, [instructor.name]),
                     send_message(instructor.name,
                                  f"Your {course} make-up session is booked in {room}, {start}-{end}.")],
                    hints=(f"The make-up time is not in {timetable}, which has the regular weekly slots only; the "
                           f"students are listed in {enrolment} on the drive; get_available_rooms shows the rooms "
                           "free for a span with enough seats.",
                           f"Ask {officer.name}, the timetabling officer, when the make-up session of this section "
                           f"is today; {instructor.name} is invited and told the room and time.",
                           f"send_message {officer.name} for the make-up time; read_file {enrolment} and count the "
                           f"students of section {section} whose status is enrolled (not withdrawn or wait-listed, "
                           "not the other section), plus one seat for the instructor; get_available_rooms for that "
                           "span with that many seats; book_meeting the free room inviting the instructor; "
                           f"send_message {instructor.name} the room and the start time."))],
        colleagues=[instructor, officer],
        drive={timetable: csv("course,section,weekday,start,instructor", sorted(weekly)),
               enrolment: csv("student_id,name,section,status", roster)},
        busy=busy,
    )


FAMILY = Family("course_timetable", "scheduling", "hard", "Education & Culture", build)
