"""KB Link Fix: knowledge-base articles on the cloud disk carry broken chart links, each naming the chart's owner;
the agent asks each owner for the new chart IDs and writes the fixed articles to its workspace.

Scored as the reference: four checkpoints of 4 points, the first (the KB manual downloaded, every fixed article
written) 1.2, the others 0.9333 each: every owner's chat mentions the old and new IDs of their links, every link
replaced, nothing else in any article changed."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

from occubench.errors import ConfigError
from occubench.traineebench.families import _common as common
from occubench.traineebench.family import Day, Employee, Hints, Outcome, Score, TaskSpec
from occubench.util.untrusted import folder_files, read_file

ARTICLES = "schemas/tasks/kb_fix/templates/articles"
MANUAL = "manuals_for_kb_fix.md"
#: difficulty → articles, fewest and most links an article, owners an article
DIFFICULTIES = {"easy": (1, 1, 2, 1), "medium": (3, 1, 3, 2), "hard": (5, 2, 5, 3)}
KNOBS = ("num_articles", "links_per_article_min", "links_per_article_max", "owners_per_article")
#: The most links or owners an article may be given (a config could otherwise ask for a billion).
MAX_KNOB = 100

_MANUAL_TEXT = """# Fixing links in the knowledge base

- The articles are in `CloudDisk://kb/articles/`.
- A broken chart link names the chart's owner: ask that owner for the chart's new ID.
- Never make an ID up; check each one before you change a link.
"""


def link(chart: str, owner: str) -> str:
    """A chart link as the articles write it (the checks look for exactly this)."""
    return f"kb.internal.com/charts?id={chart} (Chart Owner: {owner})"


def _digest(text: str) -> str:
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()


def _templates(day: Day) -> list[tuple[str, str]]:
    """The reference's articles (markdown files), by name, with their text."""
    folder = day.reference / ARTICLES
    found = sorted((name, path) for name, path in folder_files(folder).items()
                   if "/" not in name and name.lower().endswith(".md"))
    if not found:
        raise ConfigError(f"{folder}: no markdown articles")
    try:
        return [(name, read_file(path).decode("utf-8")) for name, path in found]
    except UnicodeDecodeError:
        raise ConfigError(f"{folder}: an article is not UTF-8 text") from None


class KbLinkFix:
    name = "KB Link Fix"
    #: Easy: however many links there are, each names the one colleague to ask, and the fix is a plain
    #: replacement; no clue is hidden behind another.
    difficulty = "easy"

    def generate(self, day: Day, **given: Any) -> TaskSpec:
        task_params = common.arguments(self.name, given,
                                       {"task_params": ((dict, type(None)), None)})["task_params"] or {}
        params = common.arguments(self.name, task_params, {"difficulty": (str, "medium"),
                                                           **dict.fromkeys(KNOBS, (int, None))}, "task_params.")
        difficulty = params["difficulty"].lower()
        common.one_of(self.name, "task_params.difficulty", difficulty, list(DIFFICULTIES))
        count, fewest, most, owners = (preset if params[knob] is None else params[knob]
                                       for knob, preset in zip(KNOBS, DIFFICULTIES[difficulty]))
        for knob, value, least in zip(KNOBS, (count, fewest, most, owners), (1, 0, 0, 1)):
            common.at_least(self.name, f"task_params.{knob}", value, least)
            if knob != "num_articles" and value > MAX_KNOB:
                raise ConfigError(f"{self.name}: argument task_params.{knob} may be {MAX_KNOB} at most, not {value}")
        fewest, most = min(fewest, most), max(fewest, most)  # given the wrong way round, as the reference allows
        templates = _templates(day)
        kb = day.cloud_disk / "kb"
        common.place(kb / MANUAL, _MANUAL_TEXT)
        candidates = [e for e in day.company.employees if e.department != "Executive"] or day.company.employees
        articles = []
        for name, text in day.rng.sample(templates, min(count, len(templates))):
            team = [day.rng.choice(candidates) for _ in range(owners)]  # one colleague may own several charts
            links = [{"old_id": f"OLD{day.rng.randint(100000, 999999)}",
                      "new_id": f"NEW{day.rng.randint(100000, 999999)}",
                      "owner_name": team[i % owners].name, "owner_department": team[i % owners].department}
                     for i in range(day.rng.randint(fewest, most))]
            broken = self._broken(day, text, links)
            stem = Path(name).stem
            common.place(kb / "articles" / name, broken)
            # As the reference, each article's old and new IDs are also left on the cloud disk, for the agent to find.
            common.place(kb / "articles_meta" / f"{stem}.json", json.dumps(
                {"subject": stem.replace("_", " ").title(), "owner_count": owners,
                 "broken_links": [{"old_id": x["old_id"], "new_id": x["new_id"]} for x in links]}, indent=2))
            articles.append({"subject": stem.replace("_", " ").title(), "article_filename": name,
                             "fixed_filename": f"{stem}_fixed.md", "broken_links": links, "original": _digest(broken)})
            self._tell_owners(day, team, links)
        return TaskSpec(self.name, _description(articles), common.deadline(day), {"articles": articles})

    def _broken(self, day: Day, text: str, links: list[dict[str, str]]) -> str:
        """``text`` with a line holding each broken link put in at a random line."""
        lines = text.split("\n")
        places = list(range(len(lines)))
        day.rng.shuffle(places)
        for i, broken in enumerate(links):
            chart = link(broken["old_id"], broken["owner_name"])
            lines.insert(places[i % len(places)], f"\nSee the chart at {chart}\n")
        return "\n".join(lines)

    def _tell_owners(self, day: Day, team: list[Employee], links: list[dict[str, str]]) -> None:
        mapping = "\n".join(f"- {x['old_id']} -> {x['new_id']}" for x in links)
        for owner in dict.fromkeys(team):
            day.company.add_rule(owner, "When asked how the IDs of the charts you own map to new ones, reply with "
                                        f"exactly these lines and take no other action:\n{mapping}\n"
                                        "If asked to change files or links yourself, decline: you are busy with other "
                                        "work and can only give the mapping.\n"
                                        f"When asked how to map chart IDs, point to `CloudDisk://kb/{MANUAL}`.")

    def sample_arguments(self, rng: random.Random) -> dict[str, Any]:
        return {"task_params": {"difficulty": rng.choice(list(DIFFICULTIES))}}

    def hints(self, task: TaskSpec) -> Hints:
        articles = task.check["articles"]
        sources = ", ".join(f"`kb/articles/{a['article_filename']}`" for a in articles)
        outputs = ", ".join(f"`{a['fixed_filename']}`" for a in articles)
        return (
            "The new chart IDs are known only to the charts' owners, and each broken link names its owner: the fix "
            "is to get the mapping from each of them and change nothing in the articles but those IDs.",
            "Ask every owner named in a broken link for the new IDs of their charts, quoting the old IDs (one "
            "owner may have charts in several articles). The KB manual in `CloudDisk:kb/` has to be in your "
            "workspace too.",
            f"download_file `kb/{MANUAL}` and each article: {sources}; in each, find every "
            "`kb.internal.com/charts?id=<OLD> (Chart Owner: <name>)` link and group the old IDs by owner; "
            "send_message each owner listing their old IDs and asking for the new ones; with a Python script "
            "replace each old ID by its new one inside its link, leaving every other character as it is, and "
            f"save the articles as {outputs} at the root of the workspace; done.")

    def evaluate(self, task: TaskSpec, outcome: Outcome) -> Score:
        articles, notes = task.check["articles"], list[str]()
        manual = common.noted((outcome.workspace / MANUAL).is_file(), f"Download `{MANUAL}` from the cloud disk.",
                              notes)
        asked = _asked(articles, outcome, notes)
        written = intact = fixed = 0
        for article in articles:
            path = outcome.workspace / article["fixed_filename"]
            if not common.noted(path.is_file(), f"Put the fixed `{article['fixed_filename']}` ('{article['subject']}') "
                                "in the root of your workspace.", notes):
                continue
            written += 1
            text = common.read_text(path) or ""
            intact += _intact(text, article, notes)
            fixed += _fixed(text, article, notes)
        links = sum(len(a["broken_links"]) for a in articles)
        basics = manual and written == len(articles)
        passed = basics + asked + (fixed == links) + (intact == len(articles))
        return Score(common.weighted_score(passed, 4, basics), 4.0, tuple(notes))


def _description(articles: list[dict[str, Any]]) -> str:
    targets = "\n".join(f"- `{a['subject']}`: source `CloudDisk://kb/articles/{a['article_filename']}`, output "
                        f"`{a['fixed_filename']}`" for a in articles)
    outputs = "\n".join(f"- `{a['fixed_filename']}` in the root of your workspace." for a in articles)
    return ("Mentor: I need to cite some knowledge-base articles in a report, but some of their chart links are "
            "broken. Please fix them and give me the corrected articles.\n\n"
            f"Resources:\n- Articles: `CloudDisk://kb/articles/`.\n\nArticles to fix:\n{targets}\n\n"
            "Objective:\n- In each article above, replace every broken chart link `kb.internal.com/charts?id=<OLD>` "
            "with the right `<NEW>` ID.\n- Get the mapping from each chart's owner; do not make IDs up.\n\n"
            f"Required output:\n{outputs}\n")


def _asked(articles: list[dict[str, Any]], outcome: Outcome, notes: list[str]) -> bool:
    """Whether the chat with every owner mentions the old and the new ID of each of their links (said by either
    side, as the reference reads the chat)."""
    owners: dict[str, list[dict[str, str]]] = {}
    for article in articles:
        for broken in article["broken_links"]:
            owners.setdefault(broken["owner_name"], []).append(broken)
    verified = 0
    for owner, links in owners.items():
        chat = "\n".join(m.text for m in outcome.chat_with(owner))
        missing = next(((key, x[key]) for x in links for key in ("old_id", "new_id") if x[key] not in chat), None)
        if missing is None:
            verified += 1
        elif missing[0] == "old_id":
            notes.append(f"Ask {owner} about the old ID {missing[1]}.")
        else:
            notes.append(f"Get the new ID {missing[1]} from {owner}.")
    return verified == len(owners)


def _intact(text: str, article: dict[str, Any], notes: list[str]) -> bool:
    """Whether the article, with each fixed link turned back into the broken one, is the article as it was."""
    for x in article["broken_links"]:
        text = text.replace(link(x["new_id"], x["owner_name"]), link(x["old_id"], x["owner_name"]), 1)
    return common.noted(_digest(text) == article["original"],
                        f"Change nothing in `{article['fixed_filename']}` but the broken links.", notes)


def _fixed(text: str, article: dict[str, Any], notes: list[str]) -> int:
    """How many of the article's links were replaced: the broken one gone, the new one there."""
    count = 0
    for x in article["broken_links"]:
        gone, there = link(x["old_id"], x["owner_name"]) not in text, link(x["new_id"], x["owner_name"]) in text
        count += gone and there
        if not gone:
            notes.append(f"Remove the broken link {x['old_id']} from `{article['fixed_filename']}`.")
        if not there:
            notes.append(f"Put the link with the new ID {x['new_id']} in `{article['fixed_filename']}`.")
    return count


FAMILY = KbLinkFix()
