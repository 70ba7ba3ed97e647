"""KB Link Fix: articles with broken chart links generated from stand-in articles, fixed by asking each chart's
owner, and scored in the reference's points (four checkpoints of 4: 1.2 for the manual and every fixed file, 2.8 / 3
for each of every owner asked, every link fixed, nothing else changed)."""

from __future__ import annotations

import json
import re
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from occubench.errors import ConfigError
from occubench.traineebench.families.kb_fix import ARTICLES, FAMILY, MANUAL
from occubench.traineebench.family import Day, Message, Outcome, TaskSpec
from tests.traineebench.conftest import make_day
from tests.traineebench.families.outputs import assert_seeded, hostile, reread

REST = 2.8 / 3
BROKEN = re.compile(r"charts\?id=(OLD\d+) \(Chart Owner: ([^)]+)\)")
AT = datetime(2025, 10, 1, 10)


def stand_in(day: Day, count: int = 6) -> None:
    folder = day.reference / ARTICLES
    folder.mkdir(parents=True)
    for i in range(count):
        (folder / f"guide_number_{i}.md").write_text(f"# Guide {i}\n\nFirst paragraph of guide {i}.\n\n- a point\n"
                                                     f"- another point\n\nClosing words.\n")
    (folder / "notes.txt").write_text("not an article")


def generated(day: Day, **params: Any) -> TaskSpec:
    stand_in(day)
    return FAMILY.generate(day, task_params=params or {"difficulty": "medium"})


def mapping(day: Day, owner: str) -> dict[str, str]:
    """What ``owner`` was told to give when asked: their charts' old IDs and the new ones."""
    return dict(re.findall(r"- (OLD\d+) -> (NEW\d+)", "\n".join(day.company.rules.get(owner, []))))


def work(day: Day, task: TaskSpec, manual: bool = True, ask: bool = True, skip: int = 0,
         edit: Any = None) -> Outcome:
    """An outcome: the manual downloaded or not; each owner asked about their charts (the answer they were told
    to give), or the IDs read from the articles' metadata left on the cloud disk; every article but the last
    ``skip`` fixed and written, passed through ``edit`` when given."""
    if manual:
        shutil.copy(day.cloud_disk / "kb" / MANUAL, day.workspace / MANUAL)
    messages, new = [], {}
    for article in task.check["articles"]:
        text = (day.cloud_disk / "kb/articles" / article["article_filename"]).read_text()
        stem = article["article_filename"][:-3]
        meta = json.loads((day.cloud_disk / "kb/articles_meta" / f"{stem}.json").read_text())
        for old, owner in BROKEN.findall(text):
            if ask:
                told = mapping(day, owner)
                messages += [Message("Intern", owner, f"What is the new ID of chart {old}?", AT),
                             Message(owner, "Intern", f"- {old} -> {told[old]}", AT)]
                new[old] = told[old]
            else:
                new[old] = next(x["new_id"] for x in meta["broken_links"] if x["old_id"] == old)
    for article in task.check["articles"][: len(task.check["articles"]) - skip]:
        text = (day.cloud_disk / "kb/articles" / article["article_filename"]).read_text()
        fixed = BROKEN.sub(lambda m: f"charts?id={new[m[1]]} (Chart Owner: {m[2]})", text)
        (day.workspace / article["fixed_filename"]).write_text(edit(fixed) if edit else fixed)
    return Outcome(day.workspace, messages)


def test_the_right_work_earns_full_points(day: Day) -> None:
    task = generated(day)
    outcome = work(day, task)
    score = FAMILY.evaluate(task, outcome)
    assert (score.points, score.full, score.notes) == (4.0, 4.0, ())
    assert FAMILY.evaluate(reread(task), outcome) == score


@pytest.mark.parametrize(("parts", "points"), [
    ({"manual": False}, 3 * REST),
    ({"ask": False}, 1.2 + 2 * REST),  # the IDs read from the metadata the reference leaves on the cloud disk
    ({"skip": 1}, REST),  # one article missing: the owners were asked, nothing else holds
    ({"edit": lambda text: text + "\nAn extra line.\n"}, 1.2 + 2 * REST),
    ({"edit": lambda text: re.sub(r"id=NEW\d+", "id=NEW000000", text)}, 1.2 + REST),  # made-up IDs
])
def test_each_miss_costs_its_checkpoint(day: Day, parts: dict[str, Any], points: float) -> None:
    task = generated(day)
    score = FAMILY.evaluate(task, work(day, task, **parts))
    assert (score.points, score.full) == (round(points, 6), 4.0) and score.notes


def test_a_link_left_broken_costs_the_links_only(day: Day) -> None:
    task = generated(day)
    first = task.check["articles"][0]["broken_links"][0]
    outcome = work(day, task, edit=lambda text: text.replace(first["new_id"], first["old_id"]))
    assert FAMILY.evaluate(task, outcome).points == round(1.2 + 2 * REST, 6)


def test_an_owner_who_never_gave_the_new_id_fails_the_chat(day: Day) -> None:
    task = generated(day)
    outcome = work(day, task)
    outcome.messages = [m for m in outcome.messages if "->" not in m.text]
    score = FAMILY.evaluate(task, outcome)
    assert score.points == round(1.2 + 2 * REST, 6) and any("new ID" in note for note in score.notes)


def test_doing_nothing_earns_nothing(day: Day) -> None:
    score = FAMILY.evaluate(generated(day), Outcome(day.workspace))
    assert (score.points, score.full) == (0.0, 4.0) and score.notes


def test_the_day_holds_the_broken_articles_their_owners_and_the_manual(day: Day) -> None:
    task = generated(day, difficulty="HARD")
    articles = task.check["articles"]
    assert len(articles) == 5 and (day.cloud_disk / "kb" / MANUAL).is_file()
    for article in articles:
        text = (day.cloud_disk / "kb/articles" / article["article_filename"]).read_text()
        found = BROKEN.findall(text)
        assert 2 <= len(found) <= 5 and len(found) == len(article["broken_links"])
        for old, owner in found:
            assert old in mapping(day, owner) and any(MANUAL in rule for rule in day.company.rules[owner])
        assert article["fixed_filename"] in task.description and article["subject"].startswith("Guide Number")
    assert not (day.cloud_disk / "kb/articles/notes.txt").exists()


def test_the_knobs_override_the_difficulty(day: Day) -> None:
    task = generated(day, difficulty="easy", num_articles=9, links_per_article_min=4, links_per_article_max=3,
                     owners_per_article=1)
    articles = task.check["articles"]
    assert len(articles) == 6  # every article there is
    assert all(3 <= len(a["broken_links"]) <= 4 and len({x["owner_name"] for x in a["broken_links"]}) == 1
               for a in articles)


@pytest.mark.parametrize(("params", "named"), [
    ({"difficulty": "extreme"}, "task_params.difficulty"),
    ({"difficulty": 3}, "task_params.difficulty"),
    ({"num_articles": 0}, "task_params.num_articles"),
    ({"num_articles": "2"}, "task_params.num_articles"),
    ({"links_per_article_min": -1}, "task_params.links_per_article_min"),
    ({"links_per_article_max": 10**9}, "task_params.links_per_article_max"),
    ({"owners_per_article": 0}, "task_params.owners_per_article"),
    ({"owners_per_article": 2.0}, "task_params.owners_per_article"),
    ({"seed": 1}, "task_params.seed"),
])
def test_bad_arguments_are_config_errors_naming_them(day: Day, params: dict[str, Any], named: str) -> None:
    stand_in(day)
    with pytest.raises(ConfigError, match=re.escape(named)):
        FAMILY.generate(day, task_params=params)


@pytest.mark.parametrize("args", [{"difficulty": "easy"}, {"task_params": ["easy"]}, {"task_params": "easy"}])
def test_arguments_outside_task_params_are_config_errors(day: Day, args: dict[str, Any]) -> None:
    stand_in(day)
    with pytest.raises(ConfigError, match="difficulty|task_params"):
        FAMILY.generate(day, **args)


def test_missing_or_odd_reference_articles_are_config_errors(tmp_path: Path) -> None:
    day = make_day(tmp_path / "none")
    with pytest.raises(ConfigError, match="articles"):
        FAMILY.generate(day)
    day = make_day(tmp_path / "empty")
    (day.reference / ARTICLES).mkdir(parents=True)
    with pytest.raises(ConfigError, match="no markdown articles"):
        FAMILY.generate(day)
    day = make_day(tmp_path / "link")
    stand_in(day)
    (day.reference / ARTICLES / "secret.md").symlink_to(tmp_path / "outside.md")
    with pytest.raises(ConfigError, match="secret.md"):
        FAMILY.generate(day)


def test_the_same_seed_gives_the_same_day(tmp_path: Path) -> None:
    assert_seeded(tmp_path, generated)


@pytest.mark.parametrize("shape", sorted(hostile(b"")))
def test_a_hostile_fixed_article_scores_without_the_fixes(day: Day, shape: str) -> None:
    task = generated(day)
    first = day.workspace / task.check["articles"][0]["fixed_filename"]
    outcome = work(day, task)
    right = first.read_bytes()
    first.unlink()
    hostile(right)[shape](first)
    score = FAMILY.evaluate(task, outcome)
    # A file that is not a regular one is missing (the first checkpoint fails too); any other is read as nothing.
    assert score.points in (round(REST, 6), round(1.2 + REST, 6)) and score.full == 4.0
