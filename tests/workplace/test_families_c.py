"""Three families that need the day engine's mechanics, each alone in a day of its own over seeded draws, played
through the real environment and scoring: the shell (a gateway log too large to read, counted with a command in the
sandbox), an image (a photographed form whose number is nowhere else) and the calendar (a meeting booked at a time
only a colleague knows, then chaired on time). The reference meets every checkpoint by its deadline, doing nothing
none; clues need the right question; hints and feedback give no checked value; the obvious shortcut is wrong. Day
files written before days had images still load, and `validate --suite workplace` refuses without a sandbox."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from occubench.core.images import Image
from occubench.core.task import CATEGORY_ABBREVIATIONS
from occubench.sandbox.provider import Provider
from occubench.workplace.drawing import draw
from occubench.workplace.environment import READ_BYTES
from occubench.workplace.generate import generate_day, generate_days, read_days, write_days
from occubench.workplace.model import Day
from occubench.workplace.schedule import TOOLSET, reference_schedule
from occubench.workplace.scoring import _has
from occubench.workplace.templates import FAMILIES
from occubench.workplace.validate import validate_day
from tests.workplace import families
from tests.workplace.test_clues import GENERIC

#: name → (kind, difficulty, category, the tool it brings)
MINE = {"incident_log_analysis": ("inquiry", "hard", "Technology & IT", "execute_command"),
        "fleet_mileage_claim": ("synthesis", "easy", "Transportation & Logistics", "read_image"),
        "case_conference": ("scheduling", "hard", "Healthcare & Life Sciences", None)}
SHELL = "incident_log_analysis"
#: Draws of each family: the shell's reference commands only take their minutes here (their sandboxed runs are
#: tested on a few draws below, a sandbox per command); fewer of the image family, whose every draw renders its PNG.
DRAWS = {SHELL: 60, "fleet_mileage_claim": 40, "case_conference": 300}
SANDBOXED_DRAWS = 3
#: A seed whose first day (of two tasks) holds the shell family.
SHELL_SEED = 6


def alone(family: str, draw: int) -> Day:
    return families.alone(family, draw, "families-c")


@pytest.fixture(scope="module")
def days() -> dict[str, list[Day]]:
    return {family: [alone(family, draw) for draw in range(DRAWS[family])] for family in MINE}


def test_the_families_are_registered_as_intended() -> None:
    for name, (kind, difficulty, category, tool) in MINE.items():
        family = FAMILIES[name]
        assert (family.kind, family.difficulty, family.category) == (kind, difficulty, category)
        assert category in CATEGORY_ABBREVIATIONS and family.tools == frozenset({tool} - {None})
    assert not {"execute_command", "read_image"} & TOOLSET.tools  # only days that need them have them


@pytest.mark.parametrize("family", sorted(MINE))
def test_reference_solves_every_draw_and_doing_nothing_solves_none(family: str, days: dict[str, list[Day]]) -> None:
    for day in days[family]:
        validation = validate_day(day)
        assert not validation.errors, (day.id, validation.errors)
        assert all(s.points == s.full for s in validation.reference), (day.id, validation.reference)
        assert all(s.points == 0 for s in validation.noop), day.id
        assert all(t.deadline and "{" not in t.objective for t in day.tasks)


@pytest.mark.parametrize("family", sorted(MINE))
def test_clues_need_the_right_question_and_are_not_on_the_drive(family: str, days: dict[str, list[Day]]) -> None:
    for day in days[family]:
        asked = [s["arguments"] for s in reference_schedule(day)[0] if s["tool"] == "send_message"]
        public = "\n".join([*day.drive.values(), *(t.objective for t in day.tasks)])
        clues = [(c, clue) for c in day.colleagues for clue in c.clues]
        assert clues, day.id
        for colleague, clue in clues:
            assert any(clue.asked_by(a["text"]) for a in asked if a["to"] == colleague.name), (day.id, clue.id)
            assert not any(clue.asked_by(message) for message in GENERIC), (day.id, clue.id)
            assert clue.text not in public, (day.id, clue.id)


def _checked(day: Day) -> list[str]:
    return [value for t in day.tasks for c in t.checkpoints
            for value in [*c.check.get("values", []), *(c.check[k] for k in ("start", "end") if k in c.check)]]


@pytest.mark.parametrize("family", sorted(MINE))
def test_hints_and_feedback_guide_without_giving_the_answer(family: str, days: dict[str, list[Day]]) -> None:
    tools = TOOLSET.tools | {"execute_command", "read_image"}
    for day in days[family]:
        people = [c.name for c in day.colleagues]
        [work] = day.tasks
        assert len(work.hints) == 3 and len(set(work.hints)) == 3, day.id
        where, whom, plan = work.hints
        assert any(name in whom for name in people) and sum(tool in plan for tool in tools) >= 2, day.id
        seats = [c.check["min_capacity"] for c in work.checkpoints if "min_capacity" in c.check]
        for text in [*work.hints, *(c.feedback for c in work.checkpoints)]:
            assert not [v for v in _checked(day) if _has(text, [v])], (day.id, text)
            assert not [n for n in seats if re.search(rf"\b{n}\b", text)], (day.id, text)
        assert not [v for c in work.checkpoints for v in c.check.get("values", []) if _has(work.objective, [v])]


def _log(day: Day) -> list[tuple[str, str, str]]:
    """The gateway log's lines as (HH:MM, endpoint, status)."""
    [text] = day.drive.values()
    return [(line[11:16], line.split()[2], line.split()[3]) for line in text.splitlines()]


def _window(day: Day) -> tuple[str, str]:
    [clue] = [clue for c in day.colleagues for clue in c.clues]
    return re.findall(r"\d\d:\d\d", clue.text)  # type: ignore[return-value]


def _top(lines: list[tuple[str, str, str]], least: str = "5", window: tuple[str, str] = ("00:00", "24:00")) \
        -> tuple[str, int]:
    counts = Counter(e for when, e, status in lines if window[0] <= when < window[1] and status >= least)
    return counts.most_common(1)[0]


def test_the_log_needs_a_command_and_the_shortcuts_count_wrong(days: dict[str, list[Day]], tmp_path: Path) -> None:
    for day in days[SHELL]:
        [path] = day.drive
        assert len(day.drive[path].encode()) > READ_BYTES, day.id  # read_file refuses it
        endpoint, count = families.values(day, "failing endpoint found")[0], families.values(day, "server errors "
                                                                                              "counted")[0]
        lines = _log(day)
        assert _top(lines, window=_window(day)) == (endpoint, int(count)), day.id
        assert _top(lines)[0] != endpoint, day.id  # the whole log: the earlier deploy's blip
        assert _top(lines, "4", _window(day)) != (endpoint, int(count)), day.id  # client errors counted too
    day = days[SHELL][0]
    refused = families.played(day, tmp_path / "day").call("read_file", {"file_path": next(iter(day.drive))})
    assert refused["error"] == "tool_error" and "shell commands" in refused["message"]


def test_the_shell_family_s_reference_counts_in_the_sandbox(days: dict[str, list[Day]], sandbox: Provider,
                                                            tmp_path: Path) -> None:
    for day in days[SHELL][:SANDBOXED_DRAWS]:
        assert validate_day(day, sandbox).ok, day.id
        env = families.played(day, tmp_path / day.id, provider=sandbox)
        assert "execute_command" in {spec.name for spec in env.tools()}
        outputs = [env.call(s["tool"], s["arguments"]) for s in reference_schedule(day)[0]
                   if s["tool"] in ("download_file", "execute_command")]
        endpoint, count = (families.values(day, name)[0] for name in ("failing endpoint found", "server errors "
                                                                                                 "counted"))
        assert outputs[-1]["exit_code"] == 0 and f"('{endpoint}', {count})" in outputs[-1]["output"], outputs
    without = families.played(days[SHELL][0], tmp_path / "no shell")  # no provider: no shell offered
    assert "execute_command" not in {spec.name for spec in without.tools()}


def test_the_form_s_numbers_are_only_in_the_image(days: dict[str, list[Day]], tmp_path: Path) -> None:
    for day in days["fleet_mileage_claim"]:
        [(path, drawing)] = day.images.items()
        returned = dict(drawing.spec["fields"])["Odometer at return (km)"]
        assert f"Odometer at return (km): {returned}." in drawing.text
        assert not any(returned in text for text in [*day.drive.values(), day.tasks[0].objective]), day.id
        km, charge = families.values(day, "trip distance")[0], families.values(day, "charge at the pool-van rate")[0]
        departures = [int(row["odometer_out_km"]) for row in families.rows(day, "departures")
                      if row["vehicle"] in path]
        assert int(returned) - departures[-1] == int(km) and int(returned) - departures[-2] != int(km)
        [rate, car_rate] = re.findall(r"0\.\d\d", next(clue.text for c in day.colleagues for clue in c.clues))
        assert f"{int(km) * float(rate):.2f}" == charge != f"{int(km) * float(car_rate):.2f}", day.id
    day = days["fleet_mileage_claim"][0]
    [(path, drawing)] = day.images.items()
    env = families.played(day, tmp_path / "day")
    seen = env.read_image(path)["image"]
    assert isinstance(seen, Image) and seen.media_type == "image/png" and seen.data.startswith(b"\x89PNG")
    assert seen.data == draw(drawing.spec) and seen.text == drawing.text
    assert env.world.image_text == {hashlib.sha256(seen.data).hexdigest(): drawing.text}
    copy = env.call("download_file", {"file_path": path, "target_path": "form.png"})["to"]
    assert env.read_image(copy)["image"].text == drawing.text  # the agent's copy is the same image
    assert "read_image" in {spec.name for spec in env.tools()}


def test_the_conference_counts_only_when_chaired_on_time(days: dict[str, list[Day]], tmp_path: Path) -> None:
    for day in days["case_conference"]:
        request = next(iter(day.drive.values()))
        assert re.search(r"perhaps do (\d\d:\d\d)", request)[1] != families.values(day, "ward manager told the "  # type: ignore[index]
                                                                                       "time")[0], day.id
    day = days["case_conference"][0]
    [work] = day.tasks
    steps = {s["tool"]: s["arguments"] for s in work.reference}
    booking = steps["book_meeting"]

    def play(name: str, *calls: tuple[str, dict]) -> list[float]:
        env = families.played(day, tmp_path / name)
        for tool, arguments in calls:
            assert "error" not in env.call(tool, arguments), (tool, env.call(tool, arguments))
        return [float(s.points) for s in families.scores(env)]

    booked = ("book_meeting", booking)
    told = ("send_message", steps["send_message"])
    attend = ("attend_meeting", steps["attend_meeting"])
    start = int(booking["start"][:2]) * 60 + int(booking["start"][3:])
    # From 09:00, booking and telling take 3 + 5 minutes, a jump its own one more: then in 10 minutes late.
    late = ("jump_time", {"minutes": start + 10 - (9 * 60 + 3 + 5 + 1)})
    cancel = ("cancel_meeting", {k: booking[k] for k in ("room_name", "start", "end")})
    assert play("booked only", booked, told) == [3]  # the booking and the message: not chaired
    assert play("chaired", booked, told, attend) == [5]
    assert play("late", booked, told, late, attend) == [3]
    assert play("cancelled", booked, told, cancel) == [1]
    assert play("nothing booked", told) == [1]


def test_day_files_without_images_still_load(tmp_path: Path) -> None:
    day = generate_day(SHELL_SEED, 1)
    data = day.to_json()
    assert data.pop("images") == {}
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "old.json").write_text(json.dumps(data), encoding="utf-8")
    [old] = read_days(tmp_path / "old")
    assert old.images == {} and old.to_json() == day.to_json()
    with_images = next(d for d in generate_days(1, 10) if d.images)
    write_days([with_images], tmp_path / "new")
    [back] = read_days(tmp_path / "new")
    assert back.to_json() == with_images.to_json() and validate_day(back).ok


def _validate(*args: str, sandbox: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "occubench", "validate", "--suite", "workplace", "--days", "1",
                           "--seed", str(SHELL_SEED), *args], capture_output=True, text=True, check=False,
                          env={**os.environ, "OCCUBENCH_SANDBOX": sandbox}, timeout=300)


def test_validate_runs_the_shell_in_the_sandbox_and_refuses_without_one(sandbox: Provider) -> None:
    assert SHELL in {t.family for t in generate_day(SHELL_SEED, 1).tasks}
    refused = _validate(sandbox="none")
    assert refused.returncode == 2 and "runs only in a sandbox" in refused.stderr, refused.stderr
    assert "--trust-world-code" in refused.stderr and "Traceback" not in refused.stderr
    done = _validate(sandbox="auto")
    assert done.returncode == 0 and "2/2 days valid" in done.stdout, done.stdout + done.stderr
    trusted = _validate("--trust-world-code", sandbox="none")
    assert trusted.returncode == 0 and "2/2 days valid" in trusted.stdout, trusted.stdout + trusted.stderr


@pytest.mark.parametrize("family", sorted(MINE))
def test_same_draw_same_piece(family: str) -> None:
    assert alone(family, 7).to_json() == alone(family, 7).to_json()
    assert alone(family, 7).to_json() != alone(family, 8).to_json()
