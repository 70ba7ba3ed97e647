"""Live hints (occubench.core.hints): the wrapper shows each call in the episode's steps file and hands the agent, with
its next observation, what a person appended to the episode's hints file; whatever else is in that file (bad JSON,
huge lines, wrong types, lines half written, a hint seen before) is skipped and never stops the episode. Through a
real run: --live-hints makes the run's token and files, and the hints delivered are in results.jsonl."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from occubench import load_results
from occubench.cli import main as cli
from occubench.core.environment import Environment, JSONObject
from occubench.core.hints import (
    HINTS_DIR,
    MAX_HINTS,
    MAX_LINE,
    MAX_TEXT,
    STEPS_DIR,
    TOKEN_FILE,
    LiveHints,
    create_token,
    episode_key,
    hint_record,
    is_episode_key,
    read_token,
)
from occubench.core.results import LIVE_HINTS_LABEL, LiveHint, Result, agent_model_of, live_groups
from occubench.core.task import Task
from occubench.core.tools import ToolSpec

TASK = Task(task_id="day/1", instruction="Work.", scenario="A day", category="Science & Research", domain="D",
            difficulty=1, env_name="e")
LOOK = ToolSpec("look", "Look around.", {"type": "object", "additionalProperties": False})


class Room(Environment):
    def __init__(self, observation: JSONObject | None = None) -> None:
        self.observation = observation or {"seen": "a desk"}
        self.closed = False

    def tools(self) -> list[ToolSpec]:
        return [LOOK]

    def _call(self, name: str, arguments: JSONObject) -> JSONObject:
        return dict(self.observation)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def live(tmp_path: Path) -> Path:
    folder = tmp_path / "live"
    create_token(folder)
    return folder


def hints_file(live: Path) -> Path:
    return live / HINTS_DIR / f"{episode_key(TASK.task_id, 0)}.jsonl"


def append(live: Path, *lines: str | bytes | dict) -> None:
    with open(hints_file(live), "ab") as handle:
        for line in lines:
            data = json.dumps(line).encode() + b"\n" if isinstance(line, dict) else \
                line if isinstance(line, bytes) else line.encode()
            handle.write(data)


def hint(text: str, tier: int = 2, who: str = "Ana") -> dict:
    return hint_record(who, tier, text)


def steps(live: Path) -> list[dict]:
    path = live / STEPS_DIR / f"{episode_key(TASK.task_id, 0)}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_hint_reaches_the_agent_with_the_next_observation_once(live: Path) -> None:
    env = LiveHints(Room(), live, TASK, 0)
    assert env.call("look", {}) == {"seen": "a desk"}
    append(live, hint("Ask Dana for the Q3 numbers"))
    assert env.call("look", {}) == {"seen": "a desk", "hint": [{"tier": 2, "text": "Ask Dana for the Q3 numbers"}]}
    assert env.call("look", {}) == {"seen": "a desk"}  # delivered once
    [delivered] = env.delivered
    assert (delivered.who, delivered.tier, delivered.text, delivered.step) == ("Ana", 2, "Ask Dana for the Q3 numbers",
                                                                                2)
    env.close()
    assert env.env.closed  # type: ignore[attr-defined]
    header, *calls, end = steps(live)
    assert header["episode"] == episode_key(TASK.task_id, 0) and header["task_id"] == "day/1"
    assert [c["call"] for c in calls] == [1, 2, 3] and calls[1]["hints"][0]["text"] == "Ask Dana for the Q3 numbers"
    assert end["end"] and end["hints"] == 1


def test_hostile_lines_are_skipped_and_never_raise(live: Path) -> None:
    env = LiveHints(Room(), live, TASK, 0)
    good = hint("the good one", tier=3)
    append(live, b"not json\n", b"[1, 2]\n", b"\xff\xfe\n", "{" * 100_000 + "\n",
           {**hint("x"), "tier": "2"}, {**hint("x"), "tier": 5}, {**hint("x"), "tier": True},
           {**hint("x"), "text": 123}, {**hint("x"), "text": "   "}, {**hint("x"), "who": None},
           {**hint("x"), "who": "a\x1b[31mb"}, {**hint("x"), "at": 5}, hint("y" * (MAX_TEXT + 1)),
           b"x" * (3 * MAX_LINE) + b"\n", good, good)  # the same hint twice: delivered once
    # A bounded read per call: the flood takes a few calls to get through, each answered as usual.
    observations = [env.call("look", {}) for _ in range(6)]
    assert [h for o in observations for h in o.get("hint", [])] == [{"tier": 3, "text": "the good one"}]
    assert [h.text for h in env.delivered] == ["the good one"]
    assert all(o["seen"] == "a desk" for o in observations)


def test_a_line_longer_than_a_hint_is_skipped_even_across_reads(live: Path) -> None:
    env = LiveHints(Room(), live, TASK, 0)
    append(live, b"z" * (5 * MAX_LINE))  # no end yet: more than one read's worth
    assert env.call("look", {}) == {"seen": "a desk"}
    append(live, b"z" * MAX_LINE + b"\n", hint("after the flood"))
    assert env.call("look", {})["hint"] == [{"tier": 2, "text": "after the flood"}]


def test_a_half_written_line_waits_until_whole(live: Path) -> None:
    env = LiveHints(Room(), live, TASK, 0)
    line = json.dumps(hint("patience")).encode()
    append(live, line[:10])
    assert "hint" not in env.call("look", {})
    append(live, line[10:] + b"\n")
    assert env.call("look", {})["hint"][0]["text"] == "patience"


def test_hints_sent_to_an_earlier_attempt_are_not_delivered(live: Path) -> None:
    append(live, hint("for the attempt that failed"))
    env = LiveHints(Room(), live, TASK, 0)
    assert "hint" not in env.call("look", {})
    append(live, hint("for this one"))
    assert [h["text"] for h in env.call("look", {})["hint"]] == ["for this one"]


def test_a_replaced_hints_file_is_read_anew_without_delivering_twice(live: Path) -> None:
    env = LiveHints(Room(), live, TASK, 0)
    first = hint("first")
    append(live, first)
    assert env.call("look", {})["hint"][0]["text"] == "first"
    hints_file(live).unlink()
    append(live, first, hint("second"))
    assert [h["text"] for h in env.call("look", {})["hint"]] == ["second"]


def test_a_link_planted_as_the_hints_file_is_not_followed(live: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text(json.dumps(hint("through a link")) + "\n")
    env = LiveHints(Room(), live, TASK, 0)
    hints_file(live).symlink_to(elsewhere)
    assert env.call("look", {}) == {"seen": "a desk"}


def test_a_flood_of_hints_is_cut_at_the_episodes_share(live: Path) -> None:
    env = LiveHints(Room(), live, TASK, 0)
    append(live, *(hint(f"hint {i}") for i in range(MAX_HINTS + 5)))
    delivered = 0
    for _ in range(10):
        delivered += len(env.call("look", {}).get("hint", []))
    assert delivered == len(env.delivered) == MAX_HINTS


def test_a_worlds_own_hint_key_is_kept(live: Path) -> None:
    env = LiveHints(Room({"hint": "the world's"}), live, TASK, 0)
    append(live, hint("the person's"))
    assert env.call("look", {}) == {"result": {"hint": "the world's"}, "hint": [{"tier": 2, "text": "the person's"}]}


def test_episode_keys_are_safe_file_names_and_distinct() -> None:
    keys = {episode_key(task_id, trial) for task_id in ("../../etc/passwd", "", ".", "ünï cödé", 1, "1", "a b", "a_b")
            for trial in (0, 1)}
    assert len(keys) == 16
    assert all(is_episode_key(key) and not key.startswith(".") and "/" not in key for key in keys)


def test_the_token_is_private_and_kept_when_the_run_resumes(tmp_path: Path) -> None:
    live = tmp_path / "live"
    token = create_token(live)
    assert stat.S_IMODE(os.stat(live / TOKEN_FILE).st_mode) == 0o600 and len(token) >= 32
    assert create_token(live) == read_token(live) == token
    (live / TOKEN_FILE).write_text("")
    assert read_token(live) is None and create_token(live) != token


def test_live_hints_round_trip_and_are_left_out_when_there_are_none() -> None:
    result = Result(task_id=1, agent_model="m", live_hints=[LiveHint("Ana", "2026-01-01T10:00:00+00:00", 2, "t", 4)])
    data = json.loads(json.dumps(result.to_dict()))
    assert data["live_hints"] == [{"who": "Ana", "at": "2026-01-01T10:00:00+00:00", "tier": 2, "text": "t", "step": 4}]
    assert Result.from_dict(data).live_hints == result.live_hints
    assert "live_hints" not in Result(task_id=1).to_dict()
    garbled = Result.from_dict({"task_id": 1, "live_hints": [{"who": "A", "at": "t", "tier": "2", "text": "x",
                                                             "step": 1}, "x", {"who": 1}]})
    assert garbled.live_hints == []


def test_results_with_live_hints_are_a_group_of_their_own() -> None:
    plain = Result(task_id=1, agent_model="m")
    hinted = Result(task_id=2, agent_model="m", live_hints=[LiveHint("Ana", "t", 1, "x", 1)])
    [(first, alone), (suffix, helped)] = live_groups([hinted, plain])
    assert (first, alone, suffix) == ("", [plain], LIVE_HINTS_LABEL)
    assert helped[0].agent_model == "m + live hints" and agent_model_of(helped[0]) == "m"
    assert live_groups(helped)[0][1][0].agent_model == "m + live hints"  # labelled once
    assert live_groups([plain]) == [("", [plain])]


AGENT = '''
import json
from pathlib import Path

from occubench.core.trajectory import Step, ToolCall


class Prompted:
    """Sends itself a hint through the files the viewer writes (standing in for a person), then calls on."""

    def __init__(self, context):
        self.live = Path(context.config.output_dir) / context.config.run_name / "live"

    def run(self, task, env, trajectory):
        name = env.tools()[0].name
        for call in range(3):
            if call == 1:
                for path in (self.live / "steps").iterdir():
                    hint = {"id": "h1", "at": "2026-01-01T10:00:00+00:00", "who": "Ana", "tier": 2, "text": "Look left"}
                    (self.live / "hints" / path.name).write_text(json.dumps(hint) + "\\n")
            trajectory.steps.append(Step(None, [ToolCall(name, "{}", env.call(name, {}))]))
        trajectory.final_answer = "done"
        trajectory.stop_reason = "answer"
'''


def test_a_run_with_live_hints_records_the_hints_delivered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "prompted_agent.py").write_text(AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    assert cli(["run", "--suite", "executable", "--agent", "prompted_agent:Prompted", "--live-hints", "--run-name",
                "r", "--task-ids", "clinic_scheduling/book_urgent_cardiology", "--output-dir", str(out)]) == 0
    [result] = load_results(out / "r" / "results.jsonl")
    assert [(h.who, h.tier, h.text, h.step) for h in result.live_hints] == [("Ana", 2, "Look left", 2)]
    observations = [step.tool_calls[0].observation for step in result.steps]
    assert ["hint" in observation for observation in observations] == [False, True, False]
    assert json.loads((out / "r" / "args.json").read_text())["live_hints"] is True
    assert read_token(out / "r" / "live") is not None
    [steps_file] = (out / "r" / "live" / STEPS_DIR).iterdir()
    assert "end" in json.loads(steps_file.read_text().splitlines()[-1])


def test_live_hints_are_refused_where_the_run_folder_is_not_shared(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["run", "--suite", "executable", "--agent", "reference", "--live-hints", "--executor", "ray",
                "--output-dir", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "--live-hints" in error and "--executor ray" in error
    assert not any(tmp_path.iterdir())
