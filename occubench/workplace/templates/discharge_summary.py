"""Information synthesis (hard): a discharge summary from a patient's chart and the consultant's discharge plan. The
chart's medication log changes doses and stops medicines along the stay, its lab table is grouped by test rather
than by time, its admission note holds a provisional follow-up that the consultant replaces, a neighbour's chart sits
in the same folder, and the consultant stops one more medicine at discharge."""

from __future__ import annotations

import random
from datetime import date, timedelta

from occubench.workplace.model import Clue
from occubench.workplace.templates._shared import in_file, not_in_file, read_file, send_message
from occubench.workplace.templates.base import Family, Names, Piece, call, colleague, task

#: Medicines and the doses (mg) they come in; no name occurs inside another.
_DRUGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Metformin", ("500", "850", "1000")), ("Ramipril", ("2.5", "5", "10")),
    ("Bisoprolol", ("1.25", "2.5", "5", "10")), ("Atorvastatin", ("20", "40", "80")),
    ("Furosemide", ("20", "40", "80")), ("Apixaban", ("2.5", "5")), ("Omeprazole", ("20", "40")),
    ("Amlodipine", ("5", "10")), ("Sertraline", ("50", "100")), ("Levothyroxine", ("25", "50", "75", "100")),
    ("Allopurinol", ("100", "300")), ("Prednisolone", ("5", "10", "20", "30")),
    ("Gliclazide", ("40", "80", "160")), ("Simvastatin", ("10", "20", "40")), ("Doxycycline", ("100", "200")),
    ("Lansoprazole", ("15", "30")))
_FREQUENCIES = ("once daily", "twice daily", "at night", "in the morning")
_DIAGNOSES = ("Community-acquired pneumonia", "Acute kidney injury", "Cellulitis of the left leg",
              "Exacerbation of COPD", "Urinary tract infection with delirium", "Fast atrial fibrillation",
              "Fall with a fractured wrist", "Dehydration after gastroenteritis")
#: Follow-up clinics; none of their names occurs in a diagnosis or a ward.
_CLINICS = ("Cardiology", "Respiratory", "Diabetes", "Nephrology", "Geriatric", "Rheumatology", "Endocrine",
            "Anticoagulation")
_WARDS = ("Oak", "Willow", "Maple", "Rowan", "Hazel", "Linden")
_UNITS = {"Creatinine": "umol/L", "Potassium": "mmol/L", "Haemoglobin": "g/L", "CRP": "mg/L"}
#: Days on the ward the chart covers.
_STAY = 5
_REASONS = ("blood pressure has been low on the ward", "it is no longer needed now the infection has cleared",
            "of an interaction with the new medicines", "kidney function still needs to settle",
            "the patient had dizzy spells on it")


def _chart(rng: random.Random, head: str, drugs: list[tuple[str, tuple[tuple[str, str], ...]]],
           labs: dict[str, list[int | float]], admitted: date
           ) -> tuple[str, dict[str, list[str]], dict[str, list[tuple[str, int | float]]]]:
    """A chart below ``head``: the text, each medicine's doses in the order given, and each test's readings with
    their times. Each medicine's steps fall on later days than the one before, so the log's order is theirs."""
    log: list[tuple[str, str]] = []  # (when, line)
    doses: dict[str, list[str]] = {}
    for name, steps in drugs:
        frequency = rng.choice(_FREQUENCIES)
        day = rng.randint(0, 1)
        for number, (action, dose) in enumerate(steps):
            day += rng.randint(1, 2) if number else 0
            stamp = (f"{admitted + timedelta(days=day):%Y-%m-%d} "
                     f"{rng.randint(7, 21):02d}:{rng.choice((0, 15, 30, 45)):02d}")
            log.append((stamp, f"{action:<7}{name}" + (f" {dose} mg {frequency}" if action != "STOP" else "")))
            doses.setdefault(name, []).append(dose)
    readings: dict[str, list[tuple[str, int | float]]] = {}
    for test, values in labs.items():
        days = sorted(rng.sample(range(_STAY + 1), len(values)))
        readings[test] = [(f"{admitted + timedelta(days=d):%Y-%m-%d} {rng.randint(5, 8):02d}:"
                           f"{rng.choice((5, 20, 40)):02d}", value) for d, value in zip(days, values)]
    lab_lines = [f"{test:<12}| {stamp} | {value} {_UNITS[test]}" for test in sorted(readings)
                 for stamp, value in rng.sample(readings[test], len(readings[test]))]  # grouped by test, not time
    text = (head + "\nMEDICATION LOG (when, action, medicine, dose, frequency)\n" +
            "".join(f"{stamp}  {line}\n" for stamp, line in sorted(log)) +
            "\nLAB RESULTS (grouped by test)\n" + "".join(line + "\n" for line in lab_lines))
    return text, doses, readings


def _courses(rng: random.Random, count: int) -> tuple[list[tuple[str, tuple[tuple[str, str], ...]]], str]:
    """Each medicine's course on the ward (one changed twice, two changed once, one stopped, the rest steady), in
    a random order, and the medicine stopped on the ward."""
    chosen = rng.sample([d for d in _DRUGS if len(d[1]) >= 3], 1)
    chosen += rng.sample([d for d in _DRUGS if d not in chosen], count - 1)
    courses: list[tuple[str, tuple[tuple[str, str], ...]]] = []
    for i, (name, strengths) in enumerate(chosen):
        if i == 0:
            first, second, third = rng.sample(strengths, 3)
            courses.append((name, (("START", first), ("CHANGE", second), ("CHANGE", third))))
        elif i <= 2:
            first, second = rng.sample(strengths, 2)
            courses.append((name, (("START", first), ("CHANGE", second))))
        elif i == 3:
            dose = rng.choice(strengths)
            courses.append((name, (("START", dose), ("STOP", dose))))
        else:
            courses.append((name, (("START", rng.choice(strengths)),)))
    stopped = chosen[3][0]
    rng.shuffle(courses)
    return courses, stopped


def _head(ward: str, bed: int, patient: str, mrn: str, age: int, admitted: date, diagnosis: str, consultant: str,
          note: str) -> str:
    return (f"PATIENT CHART — {ward} ward, bed {bed}\nPatient: {patient}   MRN: {mrn}   Age: {age}\n"
            f"Admitted: {admitted:%Y-%m-%d}   Diagnosis: {diagnosis}\nConsultant: {consultant}\n"
            f"Admission note: {note}\n")


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    courses, ward_stop = _courses(rng, rng.randint(6, 7))
    consultant_stop = rng.choice([name for name, _ in courses if name != ward_stop])
    dose_numbers = {dose for _, strengths in _DRUGS for dose in strengths}
    age = rng.randint(48, 93)
    # Lab values differ from every other figure a summary might hold (doses, the age, each other), so a
    # creatinine figure is found only where it is.
    creatinine = rng.sample([v for v in range(61, 230) if str(v) not in dose_numbers and v != age], rng.randint(3, 4))
    labs: dict[str, list[int | float]] = {
        "Creatinine": list(creatinine),
        "Haemoglobin": rng.sample([v for v in range(92, 150) if v not in creatinine and str(v) not in dose_numbers],
                                  2),
        "Potassium": [round(rng.uniform(3.3, 5.4), 1) for _ in range(3)],
        "CRP": rng.sample([v for v in range(12, 58) if str(v) not in dose_numbers], 3)}
    clinic, provisional_clinic = rng.sample(_CLINICS, 2)
    weeks, provisional_weeks = rng.sample((2, 3, 4, 6, 8), 2)
    mrn, patient, ward = names.code("MRN"), names.person(), rng.choice(_WARDS)
    admitted = date(2024, rng.randint(1, 11), rng.randint(1, 20))
    consultant = colleague(names, "Consultant physician", "Acute Medicine")
    consultant.clues.append(Clue(
        f"{task_id}-plan",
        f"Discharge plan for {patient} ({mrn}): stop {consultant_stop} when they go home — {rng.choice(_REASONS)}. "
        f"Everything else carries on at the current dose. Follow-up in the {clinic} clinic in {weeks} weeks; that "
        "replaces the provisional plan in the admission note.",
        [["discharge plan", "plan", "follow up", "followup", "clinic", "appointment", "going home",
          "discharge medication*", "discharge"]]))
    nurse = colleague(names, "Discharge coordinator", "Nursing")
    head = _head(ward, rng.randint(1, 28), patient, mrn, age, admitted, rng.choice(_DIAGNOSES), consultant.name,
                 f"provisional follow-up in the {provisional_clinic} clinic in {provisional_weeks} weeks, to be "
                 "confirmed by the consultant at discharge.")
    text, doses, readings = _chart(rng, head, courses, labs, admitted)
    home = sorted(name for name, _ in courses if name not in (ward_stop, consultant_stop))
    lines = [f"{name} {doses[name][-1]} mg" for name in home]
    stale = sorted({f"{name} {dose} mg" for name, taken in doses.items() for dose in taken} - set(lines))
    latest = max(readings["Creatinine"])[1]
    earlier = sorted(str(value) for _, value in readings["Creatinine"] if value != latest)

    # The bed neighbour's chart, in the same folder and format.
    other_courses, _ = _courses(rng, rng.randint(5, 6))
    other_labs: dict[str, list[int | float]] = {
        "Creatinine": rng.sample(range(61, 230), 3), "Haemoglobin": rng.sample(range(92, 150), 2),
        "Potassium": [round(rng.uniform(3.3, 5.4), 1) for _ in range(2)], "CRP": rng.sample(range(12, 58), 2)}
    other_mrn = names.code("MRN")
    other_admitted = admitted - timedelta(days=rng.randint(1, 3))
    other_head = _head(ward, rng.randint(1, 28), names.person(), other_mrn, rng.randint(40, 95), other_admitted,
                       rng.choice(_DIAGNOSES), names.person(),
                       f"provisional follow-up in the {rng.choice(_CLINICS)} clinic in {rng.choice((2, 4, 6))} weeks.")
    other_text, _, _ = _chart(rng, other_head, other_courses, other_labs, other_admitted)
    folder = f"wards/{ward.lower()}_{task_id}"
    chart = f"{folder}/chart_{mrn}.txt"
    summary = f"discharge_summary_{mrn}.txt"
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{patient} ({mrn}) goes home today. Write their discharge summary to {summary} in your "
                    f"workspace for {nurse.name}, the discharge coordinator, by {{deadline}}. The chart is in "
                    f"{folder}/ on the drive; {consultant.name}, the consultant, sets the discharge plan. The "
                    "summary needs: one line per medicine the patient goes home on, as '<medicine> <dose> mg' with "
                    "the current dose (leave out every medicine that has been stopped); the latest creatinine result "
                    "in umol/L; and the follow-up clinic and in how many weeks, as '<n> weeks'.",
                    [in_file("home medicines at their current doses", 2, "List every medicine the patient goes home on "
                             "at the dose the medication log ends with, as '<medicine> <dose> mg'; a dose change "
                             "replaces the earlier dose.", summary, lines),
                     in_file("latest creatinine", 1, "Give the most recent creatinine reading by date and time; the "
                             "lab table is grouped by test, not sorted by time.", summary, [str(latest)]),
                     in_file("consultant's follow-up", 2, "The follow-up comes from the consultant's discharge plan, "
                             "which replaces the provisional one in the admission note: name the clinic and the weeks.",
                             summary, [clinic, f"{weeks} weeks"]),
                     not_in_file("nothing stopped or out of date", 1, "Medicines stopped on the ward or by the "
                                 "consultant at discharge, superseded doses and older creatinine readings do not "
                                 "belong in the summary.", summary, stale + earlier)],
                    [call("open_folder", folder_path=folder),
                     read_file(chart),
                     send_message(consultant.name,
                                  f"What is the discharge plan for {patient} ({mrn}), medicines and follow-up?"),
                     call("write_file", file_path=summary,
                          content=(f"Discharge summary — {patient} ({mrn})\nMedicines on discharge:\n" +
                                   "".join(f"- {line}\n" for line in lines) +
                                   f"Creatinine at discharge: {latest} umol/L\n"
                                   f"Follow-up: {clinic} clinic in {weeks} weeks\n"))],
                    hints=(f"The chart is a file in {folder}/ on the drive (open_folder, then read_file the one "
                           f"named after {mrn}): its medication log and lab results hold the facts; the discharge "
                           "plan is not in the chart.",
                           f"Ask {consultant.name}, the consultant, for the discharge plan of this patient: which "
                           "medicines stop at discharge and the follow-up clinic and timing.",
                           f"open_folder {folder}/ and read_file the chart for {mrn}, not the neighbour's; from the "
                           "medication log keep each medicine's last dose and drop those marked STOP; find the "
                           "creatinine reading with the latest date and time; send_message the consultant for the "
                           "discharge plan and drop any medicine they stop; then write_file "
                           f"{summary} with the medicine lines, the creatinine and the follow-up, nothing else."))],
        colleagues=[consultant, nurse],
        drive={chart: text, f"{folder}/chart_{other_mrn}.txt": other_text},
    )


FAMILY = Family("discharge_summary", "synthesis", "hard", "Healthcare & Life Sciences", build)
