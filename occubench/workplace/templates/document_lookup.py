"""Inquiry (hard): one figure from the one binding document among many versions. Legal's rule says which file
binds (by its name) and whether an amendment overrides it; drafts, sent-out versions and later proposals quote
other figures."""

from __future__ import annotations

import random

from occubench.workplace.model import Clue
from occubench.workplace.templates._shared import in_file, not_in_file, read_file, send_message, told, write_file
from occubench.workplace.templates.base import Family, Names, Piece, call, colleague, task

_VENDORS = ("Orbit Telecom", "Helix Software", "Vega Catering", "Atlas Print", "Summit Travel", "Pine Office",
            "Metro Cleaning", "Northwind Supplies", "Quill Facilities", "Harbour Logistics", "Cirrus Hosting",
            "Beacon Security")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")

#: Legal's house rules, by the file tag that binds: what the other tags mean and when an amendment counts.
_RULES = {
    "cs": "Only countersigned documents bind us — their file names end in _cs. A file marked FINAL is just the last "
          "version we sent out for signature, and drafts are proposals. A countersigned amendment replaces the "
          "figure it changes; amendments that are not countersigned change nothing.",
    "executed": "The binding version is the executed copy — its file name ends in _executed. Files marked FINAL or "
                "clean are what we circulated before the last round of changes, and drafts are proposals. An "
                "executed amendment replaces the figure it changes; amendments that were not executed change "
                "nothing.",
    "FINAL": "Always use the file marked FINAL, never drafts or redlines, even when their version number is higher "
             "— those are proposals still under negotiation. If there is a FINAL amendment, its figure replaces the "
             "one in the agreement; draft amendments change nothing.",
}


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    used: set[int] = set()

    def fee() -> int:  # five digits, distinct, so no figure hides inside another
        while True:
            value = rng.randint(240, 1900) * 50
            if value not in used:
                used.add(value)
                return value

    terms: dict[str, tuple[str, str]] = {}

    def agreement(vendor: str, version: int, annual: int, renewal: int) -> str:
        if vendor not in terms:  # the versions of one contract differ in their fees only
            terms[vendor] = (f"Term: {rng.choice((12, 24, 36))} months from 1 {rng.choice(_MONTHS)} 2024\n",
                             f"Notice period: {rng.choice((30, 60, 90))} days before the end of the term\n")
        term, notice = terms[vendor]
        return (f"SERVICE AGREEMENT — {vendor}\nVersion {version}\n{term}"
                f"Annual service fee: EUR {annual:,}\nRenewal fee (per renewal term): EUR {renewal:,}\n{notice}")

    def amendment(vendor: str, renewal: int) -> str:
        return (f"AMENDMENT No. 1 to the service agreement with {vendor}\n"
                f"Clause {rng.randint(4, 9)}.2 (renewal) is replaced: the renewal fee is EUR {renewal:,} per "
                "renewal term.\nAll other terms remain unchanged.\n")

    rule = rng.choice(sorted(_RULES))
    vendor = names.pick(_VENDORS)
    slug = vendor.split()[0].lower()
    folder = f"legal/contracts_{task_id}"
    drive: dict[str, str] = {}
    binding_version = rng.choice((2, 3))
    annual = fee()
    renewals: dict[str, int] = {}
    # The target's versions: (file tag, version) → renewal fee.
    drafts = [(f"v{v}_draft", v) for v in range(1, binding_version)]
    if rule == "FINAL":
        tags = [*drafts, (f"v{binding_version}_FINAL", binding_version),
                (f"v{binding_version + 1}_redline", binding_version + 1)]
    else:  # FINAL (and clean) look binding but were superseded in negotiation
        tags = [*drafts, (f"v{binding_version}_FINAL", binding_version),
                *([(f"v{binding_version}_clean", binding_version)] if rule == "executed" else []),
                (f"v{binding_version}_{rule}", binding_version), (f"v{binding_version + 1}_draft", binding_version + 1)]
    binding = f"v{binding_version}_{rule}"
    for tag, version in tags:
        renewals[tag] = fee()
        drive[f"{folder}/{slug}_agreement_{tag}.txt"] = agreement(vendor, version,
                                                                   annual if tag == binding else fee(),
                                                                   renewals[tag])
    answer = renewals[binding]
    draft_amendment = fee()
    drive[f"{folder}/{slug}_amendment1_draft.txt"] = amendment(vendor, draft_amendment)
    amended = rng.random() < 0.5
    reads = [f"{folder}/{slug}_agreement_{binding}.txt"]
    if amended:
        answer = fee()
        path = f"{folder}/{slug}_amendment1_{rule}.txt"
        drive[path] = amendment(vendor, answer)
        reads.append(path)
    wrong = sorted({*renewals.values(), draft_amendment, annual} - {answer})

    # Other vendors' contracts, under the same naming, and a few unrelated files.
    for other in sorted(rng.sample([v for v in _VENDORS if v != vendor], rng.randint(3, 4))):
        other_slug = other.split()[0].lower()
        final = rng.randint(1, 3)
        later = "redline" if rule == "FINAL" else "draft"
        for tag in sorted(rng.sample([f"v{final}_FINAL", f"v{final}_draft" if rule == "FINAL" else f"v{final}_{rule}",
                                      f"v{final + 1}_{later}"], rng.randint(1, 3))):
            version = int(tag[1:tag.index("_")])
            drive[f"{folder}/{other_slug}_agreement_{tag}.txt"] = agreement(other, version, fee(), fee())
    drive[f"{folder}/nda_template_{task_id}.txt"] = (
        "MUTUAL NON-DISCLOSURE AGREEMENT (template)\nTerm: 3 years\nGoverning law: as per the main agreement\n")
    drive[f"{folder}/README.txt"] = ("Contracts folder. One file per document version; the tag at the end of a "
                                     "file name says its status. Ask Legal if unsure which version applies.\n")

    legal = colleague(names, "Legal counsel", "Legal",
                      Clue(f"{task_id}-binding", _RULES[rule],
                           [["version", "binding", "binds", "final", "draft", "signed", "countersigned", "executed",
                             "which file", "which document", "contract", "agreement", "amendment"]]))
    manager = colleague(names, "Procurement manager", "Procurement")
    note = f"{slug}_renewal_fee_{task_id}.txt"
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{manager.name} needs the renewal fee in our current agreement with {vendor} for next year's "
                    f"budget. All contract versions are in {folder}/ on the drive; Legal knows which version of a "
                    f"contract binds us. Write the fee to {note} in your workspace and message it to "
                    f"{manager.name} by {{deadline}}.",
                    [in_file("binding renewal fee found", 2, "The fee must come from the document that binds us under "
                             "Legal's rule for versions, including any amendment that rule says replaces it; ask Legal "
                             "rather than taking the newest or most final-looking file.", note, [str(answer)]),
                     not_in_file("no figure from other versions", 1, "The note should give only the binding renewal "
                                 "fee — not a figure from a draft, a superseded version, an amendment that does not "
                                 "apply, or the annual fee.", note, [str(w) for w in wrong]),
                     told("manager told", 2, "Send the binding renewal fee to the manager who asked.",
                          manager.name, [str(answer)])],
                    [call("open_folder", folder_path=folder),
                     send_message(legal.name,
                                  f"Which version of the {vendor} agreement is binding, and do amendments apply?"),
                     *(read_file(path) for path in reads),
                     write_file(note, f"{vendor} renewal fee: EUR {answer:,}\n"),
                     send_message(manager.name,
                                  f"The renewal fee in our binding agreement with {vendor} is EUR {answer:,}.")],
                    hints=(f"Every version of the {vendor} agreement, and any amendment, is in {folder}/ on the "
                           "drive; the tag at the end of a file name gives the document's status.",
                           f"Ask {legal.name} (Legal) which version of a contract binds us and whether amendments "
                           f"replace its figures; {manager.name} (Procurement) is the one who needs the fee.",
                           f"List {folder}/ with open_folder, ask Legal which version binds and how amendments count, "
                           f"read the binding {vendor} agreement and the amendment Legal's rule says applies (if "
                           f"any), write only the binding renewal fee to {note} with write_file, and message "
                           f"that fee to {manager.name}."))],
        colleagues=[legal, manager],
        drive=drive,
    )


FAMILY = Family("document_lookup", "inquiry", "hard", "Business & Enterprise", build)
