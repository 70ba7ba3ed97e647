"""Inquiry (easy): one sample run in an assay's results breaches the blank-signal limit that the QC scientist sets.
Calibration runs read higher by design and are not assessed; other sample runs come close to the limit."""

from __future__ import annotations

import random
from datetime import date, timedelta

from occubench.workplace.model import Clue
from occubench.workplace.templates._shared import csv, in_file, not_in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, colleague, task

_ASSAYS = ("ELISA cytokine panel", "qPCR viral load assay", "LC-MS metabolite screen", "BCA protein assay",
           "Luciferase reporter assay", "Endotoxin LAL assay", "Fluorescence binding assay")
_INSTRUMENTS = ("Plate reader PR-2", "Plate reader PR-3", "LightCycler LC-1", "Orbitrap OT-1", "Spectrophotometer SP-4")
_INITIALS = ("AK", "BM", "CR", "DS", "EL", "FN", "GT", "HW", "IJ", "KP")


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    assay = rng.choice(_ASSAYS)
    limit = rng.choice((50, 60, 75, 80, 100, 120))  # thousandths of an absorbance unit
    count = rng.randint(10, 15)
    runs = [names.code("RUN") for _ in range(count)]
    breach = rng.randrange(count)
    calibrations = set(rng.sample([i for i in range(count) if i != breach], 2))
    readings = {}
    for i in range(count):
        if i == breach:
            readings[i] = limit + rng.randint(3, limit // 3)
        elif i in calibrations:  # above the limit, and above the breach, by design
            readings[i] = limit * 2 + rng.randint(10, 60)
        else:
            readings[i] = limit - rng.randint(1, limit // 2)
    near = rng.choice([i for i in range(count) if i != breach and i not in calibrations])
    readings[near] = limit - rng.randint(1, 3)  # within the limit, just
    started = date(2024, rng.randint(1, 12), rng.randint(1, 14))
    rows = [(run, f"{started + timedelta(days=i // 3):%Y-%m-%d}", "calibration" if i in calibrations else "sample",
             rng.choice(_INSTRUMENTS), rng.choice(_INITIALS), f"{readings[i] / 1000:.3f}", rng.randint(88, 112))
            for i, run in enumerate(runs)]
    qc = colleague(names, "QC scientist", "Quality Control",
                   Clue(f"{task_id}-limit",
                        f"For the {assay} a sample run is out of specification when its blank reads above "
                        f"{limit / 1000:.3f} AU; at or below that it is within tolerance. Calibration runs are "
                        "checked separately, not against this limit.",
                        [["threshold", "limit", "cutoff", "cut off", "tolerance", "acceptance", "criteri*",
                          "specification", "spec", "out of spec", "flag", "flagged"]]))
    pi = colleague(names, "Principal investigator", "Research")
    source = f"lab/{assay.split()[0].lower()}_runs_{task_id}.csv"
    note = f"anomaly_{task_id}.txt"
    run = runs[breach]
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"Watch this week's {assay} results in {source} on the drive: find the sample run whose blank "
                    f"signal is above the QC limit ({qc.name} in Quality Control sets it). Write its run id and "
                    f"blank reading to {note} in your workspace and alert {pi.name}, the principal investigator, "
                    "with the run id by {deadline}.",
                    [in_file("anomalous run found", 2, "Name the sample run whose blank reads above the QC scientist's "
                             "limit; calibration runs are not assessed against it.", note, [run]),
                     not_in_file("no false alarm", 1, "Only the run that breaches the limit belongs in the note, not "
                                 "calibration runs or runs within tolerance.", note, [r for r in runs if r != run]),
                     told("PI alerted", 2, "Alert the principal investigator with the anomalous run's id.",
                          pi.name, [run])],
                    [read_file(source),
                     send_message(qc.name, f"What is the blank-signal limit for the {assay}?"),
                     write_file(note, f"{run}: blank {readings[breach] / 1000:.3f} AU, above the QC limit\n"),
                     send_message(pi.name, f"Alert: {assay} run {run} has a blank signal above the QC limit.")],
                    hints=(f"The runs and their blank readings are in {source} on the drive; the limit itself is "
                           "not in the file.",
                           f"Ask {qc.name}, the QC scientist, for the blank-signal limit of this assay and which runs "
                           f"it applies to; {pi.name} receives the alert.",
                           f"read_file {source}; send_message {qc.name} for the limit; keep only the sample runs "
                           "(skip calibration rows) and find the one whose blank is above the limit; write_file "
                           f"{note} with that run id and its reading only; send_message {pi.name} the run id."))],
        colleagues=[qc, pi],
        drive={source: csv("run_id,date,run_type,instrument,operator,blank_au,control_recovery_pct", rows)},
    )


FAMILY = Family("experiment_anomaly_watch", "inquiry", "easy", "Science & Research", build)
