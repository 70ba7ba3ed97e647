"""Day files given with --workplace-dir: a file that is not a day stops the run before anything is written, with
exit code 2 and a message naming the file and what is wrong in it; days written before tasks had categories (and
before triggers matched whole words) still load, and their references still pass."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from occubench import cli
from occubench.store import read_results
from occubench.workplace.generate import _draw, generate_days, read_days, write_days
from occubench.workplace.templates import FAMILIES
from occubench.workplace.validate import validate_day
from tests.workplace.families import played


def run(days: Path, output: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli.main(["run", "--suite", "workplace", "--agent", "reference", "--workplace-dir", str(days),
                     "--output-dir", str(output), "--run-name", "r"])
    return code, capsys.readouterr().err


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def days(tmp_path: Path) -> Path:
    folder = tmp_path / "days"
    write_days(generate_days(3, 2), folder)
    return folder


def edit(change: Callable[[dict], object]) -> Callable[[Path], None]:
    """Damage a day file: ``change`` alters its JSON in place."""
    def damage(path: Path) -> None:
        data = json.loads(path.read_text(encoding="utf-8"))
        change(data)
        path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return damage


def truncate(path: Path) -> None:
    path.write_text("\n".join(path.read_text(encoding="utf-8").splitlines()[:3]) + "\n", encoding="utf-8")


CASES = {
    "truncated": (truncate, ':4:1: invalid JSON: Expecting property name enclosed in double quotes'),
    "not UTF-8": (lambda path: path.write_bytes(b"\xff" + path.read_bytes()), ": not UTF-8 text (byte 0 is 0xff)"),
    "no tasks key": (edit(lambda data: data.pop("tasks")), ": missing key 'tasks'"),
    "not an object": (lambda path: path.write_text("[]"), ": expected an object, got a list"),
    "wrong type": (edit(lambda data: data.update(seed="3")), ': seed: expected an integer, got "3"'),
    "a bool for a number": (edit(lambda data: data["rooms"].update(Aurora=True)),
                            ": rooms.Aurora: expected an integer, got true"),
    "wrong type deep down": (edit(lambda data: data["tasks"][1]["checkpoints"][1].update(weight="2")),
                             ': tasks[1].checkpoints[1].weight: expected an integer, got "2"'),
    "wrong container": (edit(lambda data: data.update(colleagues={})), ": colleagues: expected a list, got an object"),
    "missing key deep down": (edit(lambda data: data["meetings"].insert(0, {"id": "m"})),
                              ": meetings[0]: missing key 'title'"),
    "unknown key": (edit(lambda data: data["tasks"][1].update(dealine="10:00")), ": tasks[1]: unknown key 'dealine'"),
    "no tasks": (edit(lambda data: data.update(tasks=[])), ": tasks: a day needs at least one task"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_day_file_is_named_with_what_is_wrong(case: str, days: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    damage, problem = CASES[case]
    bad = days / "s3-d002.json"
    damage(bad)
    code, err = run(days, tmp_path / "results", capsys)
    assert code == 2
    assert err == f"occubench: error: {bad}{problem}\n"
    assert not (tmp_path / "results").exists()  # nothing was created


def test_a_bad_day_file_leaves_earlier_results_alone(days: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert run(days, tmp_path / "results", capsys)[0] == 0
    before = snapshot(tmp_path / "results")
    assert len(read_results(tmp_path / "results" / "r" / "results.jsonl")) == 2
    truncate(days / "s3-d001.json")
    code, err = run(days, tmp_path / "results", capsys)
    assert code == 2 and f"{days / 's3-d001.json'}:4:1: invalid JSON" in err
    assert snapshot(tmp_path / "results") == before


def test_two_files_with_one_day_id(days: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (days / "zz-copy.json").write_bytes((days / "s3-d001.json").read_bytes())
    code, err = run(days, tmp_path / "results", capsys)
    assert code == 2
    assert err == f"occubench: error: {days / 'zz-copy.json'}: day id 's3-d001' is taken by {days / 's3-d001.json'}\n"


def test_the_days_folder_must_be_a_folder(days: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = days / "s3-d001.json"
    assert run(file, tmp_path / "results", capsys) == (2, f"occubench: error: {file}: not a directory\n")
    missing = tmp_path / "nowhere"
    assert run(missing, tmp_path / "results", capsys) == (2, f"occubench: error: {missing}: no such directory\n")
    assert not (tmp_path / "results").exists()


#: The triggers the earlier version wrote for day 4 of seed 0, which it matched as substrings.
EARLIER_TRIGGERS = {
    "t1-window": [["campaign", "date", "period", "window", "when", "start", "end"]],
    "t1-line": [["line", "sku", "product", "belong", "include", "definition", "define", "consist", "range",
                 "which items"]],
    "t2-cost-centres": [["cost cent", "cost-cent", "costcent", "cost code", "cc code", "cost center"]],
    "t3-threshold": [["threshold", "limit", "cutoff", "approval rule", "second approv"]],
}


def test_days_of_an_earlier_version_still_load_and_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The day an earlier version wrote as seed 0's fourth: drawn with its families, as the family set has grown since.
    data = _draw(0, 4, 1, ["sales_summary", "data_completion", "transaction_audit"], 0).to_json()
    earlier = {"read_file": ("drive_read", "file_path", "path"), "write_file": ("workspace_write", "file_path", "path"),
               "open_folder": ("drive_list", "folder_path", "folder")}
    for task in data["tasks"]:
        del task["category"]
        for step in task["reference"]:  # the tools' names before the day engine
            if step["tool"] in earlier:
                step["tool"], new, old = earlier[step["tool"]]
                step["arguments"][old] = step["arguments"].pop(new)
    for colleague in data["colleagues"]:
        for clue in colleague["clues"]:
            clue["trigger"] = EARLIER_TRIGGERS[clue["id"]]
    (tmp_path / "days").mkdir()
    (tmp_path / "days" / "s0-d004.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    [day] = read_days(tmp_path / "days")
    assert [t.category for t in day.tasks] == [FAMILIES[t.family].category for t in day.tasks]
    assert validate_day(day).ok  # "cost cent" still asks for cost centres
    assert {"drive_read", "workspace_write"} & {s["tool"] for t in data["tasks"] for s in t["reference"]}
    env = played(day, tmp_path / "day")
    for colleague in day.colleagues:
        observation = env.call("send_message", {"to": colleague.name, "text": "please send me everything"})
        assert not any(clue.text in observation["reply"] for clue in colleague.clues)  # "end"
    code, _ = run(tmp_path / "days", tmp_path / "results", capsys)
    [record] = read_results(tmp_path / "results" / "r" / "results.jsonl")
    assert code == 0 and record["is_correct"] and record["category"] == "Commerce & Consumer"


@pytest.mark.parametrize("plant", ["link", "sparse", "deep"])
def test_a_day_folder_is_read_as_any_outside_folder(plant: str, days: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A link to a file of the user's (here a day of its own, which would run), an 8 GB sparse file or a file nested
    100,000 deep among the day files: the run stops (exit 2) naming it, and writes nothing."""
    day = json.loads(min(days.glob("*.json")).read_text())
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({**day, "id": "SECRET-VALUE"}))
    planted = days / "zz_planted.json"
    if plant == "link":
        planted.symlink_to(secret)
    elif plant == "sparse":
        with planted.open("wb") as handle:
            handle.truncate(8 << 30)
    else:
        planted.write_text("[" * 100_000 + "]" * 100_000)
    code, err = run(days, tmp_path / "out", capsys)
    assert code == 2 and "zz_planted.json" in err and "Traceback" not in err and "SECRET-VALUE" not in err
    assert not (tmp_path / "out" / "r" / "results.jsonl").exists()
