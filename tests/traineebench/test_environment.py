"""A Trainee-Bench day on the day engine (its toolset, ``occubench.traineebench.plugin.TOOLSET``): colleagues
answer from the day's reply rules, the cloud disk is listed and downloaded from, shell commands run in the sandbox
over the workspace (a day without a sandbox offers no shell), and a path that leaves its folder or runs through a
planted link is refused, with nothing written outside; every call moves the day's clock by the reference's cost for
it, and the calculator works out bounded arithmetic only."""

from __future__ import annotations

import base64
import json
import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from occubench.sandbox import Provider
from occubench.sandbox.provider import Unconfined
from occubench.traineebench.families import family
from occubench.traineebench.families.meeting_book import add_rooms
from occubench.traineebench.family import Day
from occubench.traineebench.plugin import TOOLSET
from occubench.workplace.environment import TOOLS, WorkplaceEnvironment, _clock
from occubench.workplace.people import AGENT


def env_of(day: Day, provider: Provider | None = None) -> WorkplaceEnvironment:
    """The day with Trainee-Bench's tools and no tasks of its own; shell commands run by ``provider`` (None: no
    shell)."""
    return WorkplaceEnvironment(day, [], TOOLSET, family, provider=provider)


def test_colleagues_answer_from_their_rules_and_every_message_is_kept(day: Day, sandbox: Provider) -> None:
    manager = day.company.manager_of("Finance")
    day.company.add_rule(manager, "The review manual is CloudDisk:financial/manual.md.")
    env = env_of(day, sandbox)
    answer = env.call("send_message", {"to": manager.name, "text": "How do I review transactions?"})
    assert "financial/manual.md" in answer["reply"]
    assert "error" in env.call("send_message", {"to": "Nobody Here", "text": "hi"})
    other = day.company.in_department("Engineering")[0]
    unruled = env.call("send_message", {"to": other.name, "text": "How do I review transactions?"})["reply"]
    assert other.name in unruled and "not sure what you need" in unruled  # no rule of theirs to give
    assert "financial/manual.md" not in unruled
    chat = env.outcome().chat_with(manager.name)
    assert [(m.sender, m.recipient) for m in chat] == [(AGENT, manager.name), (manager.name, AGENT)]
    assert {u["name"] for u in env.call("list_users", {})["users"]} == {e.name for e in day.company.employees}


def test_the_cloud_disk_is_listed_and_downloaded_from_and_commands_work_the_workspace(day: Day,
                                                                                     sandbox: Provider) -> None:
    (day.cloud_disk / "financial").mkdir()
    (day.cloud_disk / "financial" / "manual.md").write_text("rules")
    env = env_of(day, sandbox)
    assert env.call("open_folder", {"folder_path": "./"})["entries"] == ["financial/"]
    assert env.call("download_file", {"file_path": "financial/manual.md", "target_path": "manual.md"})["to"] == \
        "manual.md"
    ran = env.call("execute_command", {"command": "python -c \"print(open('manual.md').read().upper())\" > up.txt"})
    assert ran["exit_code"] == 0 and (day.workspace / "up.txt").read_text() == "RULES\n"
    assert env.call("done", {"notes": "Download the manual first."})["done"]
    assert "error" in env.call("list_users", {})
    assert env.info()["day_notes"] == "Download the manual first."  # given back on the next day


def test_paths_that_leave_their_folder_or_run_through_a_link_are_refused(day: Day, sandbox: Provider,
                                                                        tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (day.cloud_disk / "a.txt").write_text("a")
    env = env_of(day, sandbox)
    # The agent plants links in its workspace (inside the sandbox they point at /workspace/../..., here outside).
    env.call("execute_command", {"command": f"ln -s {outside} out && ln -s {outside}/x.txt file"})
    for target in ("../escaped.txt", "out/escaped.txt", "out", "file", f"{outside}/escaped.txt"):
        answer = env.call("download_file", {"file_path": "a.txt", "target_path": target})
        assert "error" in answer or not str(answer.get("to", "")).startswith(".."), answer
    for source in ("../secret", "/etc/passwd", "../../"):
        assert "error" in env.call("download_file", {"file_path": source, "target_path": "x"})
        assert "error" in env.call("open_folder", {"folder_path": source})
    assert list(outside.iterdir()) == [] and not (tmp_path / "escaped.txt").exists()


def test_the_reference_s_tools_are_offered_and_the_shell_only_with_a_sandbox(day: Day) -> None:
    offered = [spec.name for spec in env_of(day, Unconfined()).tools()]  # no shell command runs here
    assert offered == [name for name in TOOLS if name in TOOLSET.tools] and set(offered) == TOOLSET.tools
    # The engine's own task list, file reading and writing and meeting list are not the reference's tools.
    assert not {"list_tasks", "read_file", "write_file", "list_meetings"} & set(offered)
    assert [spec.name for spec in env_of(day).tools()] == [name for name in offered if name != "execute_command"]
    assert env_of(day).call("execute_command", {"command": "echo hi"})["error"] == "unknown_tool"


def test_each_call_moves_the_clock_by_the_reference_s_cost_and_every_answer_says_the_time(day: Day) -> None:
    (day.cloud_disk / "a.txt").write_text("a")
    add_rooms(day)  # the reference's rooms, as every generated day has them
    env = env_of(day)
    manager = day.company.manager_of("Finance").name
    calls: list[tuple[str, dict[str, Any], int]] = [
        ("list_users", {}, 1), ("open_folder", {"folder_path": "./"}, 1),
        ("send_message", {"to": manager, "text": "hi"}, 5),
        ("download_file", {"file_path": "a.txt", "target_path": "a.txt"}, 10),
        ("get_available_rooms", {"start": "2025-10-01T10:00:00", "end": "2025-10-01T11:00:00"}, 1),
        ("book_meeting", {"attendees": [manager], "room_name": "Room_01", "start": "2025-10-01T10:00:00",
                          "end": "2025-10-01T11:00:00"}, 5),
        ("cancel_meeting", {"room_name": "Room_01", "start": "2025-10-01T10:00:00", "end": "2025-10-01T11:00:00"}, 1),
        ("calculator", {"expression": "1+1"}, 1), ("get_system_health", {}, 1), ("jump_time", {"minutes": 30}, 31),
        ("list_users", {"extra": 1}, 0),  # rejected by the tool contract: it never runs
    ]
    for name, arguments, minutes in calls:
        before = env.now
        answer = env.call(name, arguments)
        assert env.now - before == timedelta(minutes=minutes), name
        if minutes:
            assert "error" not in answer and answer["now"] == _clock(env.now), (name, answer)
        else:
            assert answer["error"] == "invalid_arguments" and "now" not in answer
    # The message was sent at the time the call began, as the reference's chat records it.
    assert env.outcome().chat_with(manager)[0].at == datetime(2025, 10, 1, 8, 2)
    assert env.call("done", {})["now"] == _clock(env.now)


@pytest.mark.parametrize(("expression", "result"), [
    ("1+2*3", 7), ("(1+2)/3", 1), ("1/3", 0.333333333333333), ("-.5 * 8", -4), ("0.1 + 0.2", 0.3),
    ("1 + 3/4 + 3.4", 5.15), ("2*(3.5+0.5)", 8), ("2**10", 1024), ("7 // 2 + 7 % 2", 4),
])
def test_the_calculator_works_out_arithmetic_as_the_reference_shows_it(day: Day, expression: str,
                                                                       result: float) -> None:
    answer = env_of(day).call("calculator", {"expression": expression})
    assert answer["result"] == result and type(answer["result"]) is type(result)


@pytest.mark.parametrize(("expression", "words"), [
    ("1/0", "division by zero"), ("2**10**10", "too large"), ("9" * 400, "too large"), ("1e308*10", "too large"),
    ("9" * 5000, "longer than"), ("__import__('os').system('id')", "unsupported"), ("abs(-1)", "unsupported"),
    ("x + 1", "unsupported"), ("(" * 220 + "1" + ")" * 220, "not an arithmetic"), ("", "not an arithmetic"),
    ("2(3)", "unsupported"), ("'a' * 10", "only numbers"), ("(-8) ** 0.5", "not a real number"),
    ("1+" * 240 + "1", "too long"),
])
def test_the_calculator_refuses_what_is_not_bounded_arithmetic(day: Day, expression: str, words: str) -> None:
    answer = env_of(day).call("calculator", {"expression": expression})
    assert answer["error"] == "tool_error" and words in answer["message"], answer


def test_read_image_gives_the_image_and_the_text_of_what_it_shows(day: Day) -> None:
    from occubench.traineebench.families.ads_strategy import FAMILY as ADS
    ADS.generate(day, task_params={"city": "Shenzhen", "difficulty": "very_easy"})  # heatmaps of 8 x 8 cells
    env = env_of(day)
    name = "ads_strategy/target_user_density_seniors_60_plus.png"
    image = env.call("read_image", {"file_path": name})["image"]["$image"]
    assert base64.b64decode(image["data"]) == (day.cloud_disk / name).read_bytes()
    assert image["media_type"] == "image/png"
    # The fallback text holds every cell's density, row by row from the top, as the image shows them.
    lines = image["text"].splitlines()[1:]
    assert len(lines) == 8 and all(len(line.split(": ")[1].split()) == 8 for line in lines)
    assert lines[0].startswith("grid_j=7: ") and lines[-1].startswith("grid_j=0: ")
    # A copy in the workspace is the same image, with the same text; the workspace is looked at first.
    env.call("download_file", {"file_path": name, "target_path": "mine.png"})
    assert env.call("read_image", {"file_path": "mine.png"})["image"]["$image"]["text"] == image["text"]


def test_read_image_shows_nothing_from_outside_and_survives_any_file(day: Day, tmp_path: Path) -> None:
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG\r\n\x1a\n" + b"SECRET" * 10)
    (day.workspace / "link.png").symlink_to(secret)
    (day.workspace / "text.png").write_text("not an image at all")
    (day.workspace / "huge.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(2_000_000))
    os.mkfifo(day.workspace / "pipe.png")
    (day.workspace / "notes.txt").write_text("hello")
    env = env_of(day)
    for path in ("link.png", str(secret), "../secret.png", "huge.png", "pipe.png", "notes.txt", "missing.png"):
        answer = env.call("read_image", {"file_path": path})
        assert "error" in answer and "SECRET" not in json.dumps(answer), (path, answer)
    refused = env.call("read_image", {"file_path": "text.png"})["image"]["$image"]
    assert "data" not in refused and "not of type image/png" in refused["note"]


def test_a_group_chat_gets_every_member_s_reply_and_stays_out_of_the_direct_chats(day: Day) -> None:
    finance, engineer = day.company.manager_of("Finance"), day.company.in_department("Engineering")[0]
    day.company.add_rule(finance, "The review manual is CloudDisk:financial/manual.md.")
    env = env_of(day)
    group = env.call("create_chat_group", {"members": [finance.name, engineer.name]})
    assert group["members"][0] == AGENT
    assert env.call("create_chat_group", {"members": [engineer.name, finance.name]})["group_id"] == group["group_id"]
    replies = env.call("send_group_message", {"group_id": group["group_id"], "text": "Where is the manual?"})
    assert [r["from"] for r in replies["replies"]] == sorted([finance.name, engineer.name])
    assert "financial/manual.md" in replies["replies"][[r["from"] for r in replies["replies"]].index(finance.name)][
        "reply"]
    assert env.outcome().messages == [] and env.call("list_chat_groups", {})["groups"][0]["group_id"] == 1
    assert "error" in env.call("create_chat_group", {"members": ["Nobody Here"]})
    assert "error" in env.call("create_chat_group", {"members": []})
    assert "error" in env.call("send_group_message", {"group_id": 99, "text": "hi"})


def test_a_download_into_a_new_folder_makes_the_folder(day: Day) -> None:
    (day.cloud_disk / "a.md").write_text("a")
    env = env_of(day)
    assert env.call("download_file", {"file_path": "a.md", "target_path": "docs/"})["to"] == "docs/a.md"
    assert (day.workspace / "docs" / "a.md").read_text() == "a"


def test_the_shell_tool_sees_only_the_workspace_and_its_output_is_bounded(day: Day, sandbox: Provider) -> None:
    (day.cloud_disk / "answers.md").write_text("cloud-secret-5e2a")  # to be downloaded, never read in place
    env = env_of(day, sandbox)
    looked = env.call("execute_command", {"command": f"cat ../cloud_disk/answers.md {day.cloud_disk}/answers.md; "
                                                     f"ls .. {day.cloud_disk.parent}; cat /proc/1/environ"})
    assert "cloud-secret-5e2a" not in json.dumps(looked)
    flood = env.call("execute_command", {"command": "head -c 50000000 /dev/zero | tr '\\0' a"})
    assert len(flood["output"]) <= 10_240 and flood["left_out_bytes"] > 0
    assert env.call("execute_command", {"command": "echo still here"})["output"] == "still here\n"
