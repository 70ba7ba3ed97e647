"""Inquiry (hard): where a research sample stands. The registry on the drive only knows which core facility took the
sample in; that core's technician says it was passed on to another core, whose technician has the batch update with
the sample's run — among the runs of the other samples of its batch."""

from __future__ import annotations

import random

from occubench.workplace.model import Clue
from occubench.workplace.templates._shared import csv, in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, colleague, task

#: Core facility → what it does to a sample.
_CORES = {"Genomics": "RNA sequencing", "Proteomics": "mass spectrometry", "Histology": "tissue staining",
          "Flow cytometry": "immunophenotyping", "Metabolomics": "metabolite profiling",
          "Imaging": "high-content imaging"}
_STUDIES = ("ATLAS", "BOREAL", "CORAL", "DELTA", "EMBER", "FJORD", "GALENA", "HALCYON", "IONA", "JASPER")
_MATERIALS = ("plasma", "serum", "tumour biopsy", "PBMC pellet", "tissue section", "urine", "CSF")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday")
#: What the holding core says about a sample of the batch: the run it went through and where it stands.
_STATES = ("passed QC in run {run}, data released to the study folder",
           "failed QC in run {run} (yield too low), we need a fresh aliquot to repeat it",
           "loaded on run {run}, results expected on Friday",
           "finished run {run}, results in second review and going out this week")


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    study = names.pick(_STUDIES)
    intake, holder, third = rng.sample(sorted(_CORES), 3)
    sample = names.code("LS")
    batch = [names.code("LS") for _ in range(rng.randint(2, 3))]  # the rest of its batch at the holding core
    runs = {code: names.code("RUN") for code in [sample, *batch]}
    answer = runs[sample]
    update = [sample, *batch]
    rng.shuffle(update)
    lines = " ".join(f"{code}: {rng.choice(_STATES).format(run=runs[code])}." for code in update)
    sent = rng.choice(_DAYS)

    pi = colleague(names, "Principal investigator", f"{study} study")
    tech_holder = colleague(names, "Lab technician", f"{holder} core facility",
                            Clue(f"{task_id}-status", f"Batch update from the {holder} core ({_CORES[holder]}): "
                                 + lines,
                                 [list(update),
                                  ["status", "where", "progress", "update", "result*", "ready", "stage", "sample",
                                   "track*", "locat*", "happen*"]]))
    tech_intake = colleague(names, "Lab technician", f"{intake} core facility",
                            Clue(f"{task_id}-moved", f"We logged {sample} in, but on {sent} we passed it on to the "
                                 f"{holder} core for {_CORES[holder]} — {tech_holder.name} there has it now; we no "
                                 "longer hold it.",
                                 [[sample], ["status", "where", "progress", "update", "result*", "ready", "stage",
                                             "sample", "track*", "locat*", "happen*"]]))
    other = names.code("LS")
    tech_third = colleague(names, "Lab technician", f"{third} core facility")  # holds nothing of this sample

    # The registry: the target as the intake core logged it, and other samples of several studies and cores.
    rows = [(sample, study, rng.choice(_MATERIALS), intake, "received")]
    for code in [*batch, other]:
        rows.append((code, names.pick(_STUDIES) if rng.random() < 0.5 else study, rng.choice(_MATERIALS),
                     third if code == other else holder, rng.choice(("received", "in progress"))))
    for _ in range(rng.randint(4, 6)):
        rows.append((names.code("LS"), rng.choice(_STUDIES), rng.choice(_MATERIALS), rng.choice(sorted(_CORES)),
                     rng.choice(("received", "in progress", "completed"))))
    rows.sort()
    registry = f"lab/sample_registry_{task_id}.csv"
    note = f"sample_status_{task_id}.txt"
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{pi.name}, principal investigator of the {study} study, needs to know where sample {sample} "
                    f"stands before tomorrow's study meeting. The sample registry is {registry} on the drive; "
                    "the core facilities' technicians know what has happened to the samples since they came in. "
                    f"Find out the sample's current status and the run it went through, write both to {note} in "
                    f"your workspace, and message them to {pi.name} by {{deadline}}.",
                    [in_file("status from the core that holds the sample", 2, "The registry only shows where the "
                             "sample was taken in; ask that core's technician, follow the sample to the core that "
                             "holds it now, and take the run of this sample from their update.",
                             note, [answer], absent=[runs[code] for code in batch]),
                     told("investigator told", 2, "Send the investigator the sample's current status and run.",
                          pi.name, [answer])],
                    [read_file(registry),
                     send_message(tech_intake.name, f"What is the status of sample {sample}?"),
                     send_message(tech_holder.name, f"What is the status of sample {sample}?"),
                     write_file(note, f"{sample}: with the {holder} core; run {answer}.\n"),
                     send_message(pi.name,
                                  f"Sample {sample} is with the {holder} core; it went through run {answer}.")],
                    hints=(f"The sample registry {registry} on the drive says which core facility took {sample} "
                           "in; its status column is only filled in at intake, so the technicians have the news.",
                           f"Ask {tech_intake.name}, the technician of the {intake} core that took the sample in, "
                           f"about {sample}; if it has moved on, ask the technician they name for its status and "
                           "run.",
                           f"Read {registry}, message the {intake} core's technician asking for the status of "
                           f"sample {sample}, ask the technician of the core they passed it to the same question, "
                           f"take the line about {sample} from their batch update (not the other samples'), write "
                           f"its status and run to {note}, and message both to {pi.name}."))],
        colleagues=[pi, tech_intake, tech_holder, tech_third],
        drive={registry: csv("sample_id,study,material,core,status", rows)},
    )


FAMILY = Family("lab_sample_tracking", "inquiry", "hard", "Science & Research", build)
