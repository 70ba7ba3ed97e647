"""Live hints in `occubench view` (occubench.report.live): the episodes in progress of a run with --live-hints are
listed with their calls, and POST /api/hint appends a hint to one only for a request carrying that run's token (403
and nothing written otherwise; 400 for a bad tier, text or name). The token is never in anything the server sends.
And every report keeps results with live hints apart from results without."""

from __future__ import annotations

import http.client
import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest

from occubench.core.hints import HINTS_DIR, MAX_NAME, MAX_TEXT, STEPS_DIR, create_token, episode_key
from occubench.engine.summary import Price, summarize
from occubench.report import load_run_dirs, markdown_report, run_stats
from occubench.report.live import ViewServer, ViewState
from occubench.report.live_episodes import MAX_BODY
from occubench.report.robustness import robustness_table
from tests.report.conftest import result, write_run
from tests.report.test_view import TIMEOUT_S, api, request, serving

KEY = episode_key("day-1", 0)
HINT = {"who": "Ana", "at": "2026-01-01T10:00:00+00:00", "tier": 2, "text": "Ask Dana", "step": 3}


def live_run(root: Path, name: str, *, running: bool = True) -> tuple[Path, str]:
    """A run directory with one result and one episode in progress (its lock held by this process when
    ``running``); its token."""
    run = write_run(root, name, [result(1, True)])
    token = create_token(run / "live")
    (run / "live" / STEPS_DIR / f"{KEY}.jsonl").write_text(
        json.dumps({"episode": KEY, "task_id": "day-1", "trial": 0, "scenario": "A day", "started": "t0"}) + "\n" +
        json.dumps({"call": 1, "at": "t1", "tool": "clock_now", "arguments": "{}", "observation": "{}"}) + "\n")
    if running:
        (run / "run.lock").write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname()}))
    return run, token


def post(server: ViewServer, body: Any, token: str | None = None, *, kind: str = "application/json",
         origin: str | None = None) -> tuple[int, dict[str, Any]]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    connection = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=TIMEOUT_S)
    try:
        headers = {"Host": f"127.0.0.1:{server.server_port}", "Content-Type": kind,
                   **({"X-Occubench-Token": token} if token is not None else {}),
                   **({"Origin": origin} if origin else {})}
        connection.request("POST", "/api/hint", body=data, headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        connection.close()


def hint(**fields: Any) -> dict[str, Any]:
    return {"run": 0, "episode": KEY, "tier": 2, "text": "Ask Dana for the Q3 numbers", "name": "Ana", **fields}


def sent(run: Path) -> list[dict[str, Any]]:
    path = run / "live" / HINTS_DIR / f"{KEY}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_hint_without_the_runs_token_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    run, token = live_run(tmp_path / "results", "R")
    other, other_token = live_run(tmp_path / "results", "S")
    with serving(output_dir=tmp_path / "results") as server:
        assert post(server, hint())[0] == 403
        assert post(server, hint(), "")[0] == 403
        assert post(server, hint(), token[:-1] + ("A" if token[-1] != "A" else "B"))[0] == 403
        assert post(server, hint(run=1), token)[0] == 403  # a token is its run's only
        assert post(server, b"garbage", None, kind="text/plain")[0] == 403  # nothing is read before the token
        assert post(server, hint(), token, origin="http://evil.example")[0] == 403
    assert sent(run) == sent(other) == []


@pytest.mark.parametrize("fields", [{"tier": 0}, {"tier": 4}, {"tier": "2"}, {"tier": True}, {"tier": None},
                                    {"text": ""}, {"text": "  "}, {"text": "x" * (MAX_TEXT + 1)}, {"text": 5},
                                    {"name": ""}, {"name": "x" * (MAX_NAME + 1)}, {"name": "a\nb"}, {"name": []}])
def test_a_bad_tier_text_or_name_is_400(tmp_path: Path, fields: dict[str, Any]) -> None:
    run, token = live_run(tmp_path / "results", "R")
    with serving(output_dir=tmp_path / "results") as server:
        status, body = post(server, hint(**fields), token)
    assert status == 400 and body["error"].split(":")[0] in fields
    assert sent(run) == []


def test_other_bad_requests(tmp_path: Path) -> None:
    run, token = live_run(tmp_path / "results", "R")
    with serving(output_dir=tmp_path / "results") as server:
        assert post(server, hint(), token, kind="text/plain")[0] == 415
        assert post(server, b"x" * (MAX_BODY + 1), token)[0] == 400
        assert post(server, b"[1]", token)[0] == 400
        assert post(server, b"{", token)[0] == 400
        assert post(server, hint(episode="../../token"), token)[0] == 404
        assert post(server, hint(episode="nope-0-00000000"), token)[0] == 404
        with open(run / "live" / STEPS_DIR / f"{KEY}.jsonl", "a") as steps:
            steps.write(json.dumps({"end": "t2", "calls": 1}) + "\n")
        assert post(server, hint(), token)[0] == 404  # it ended
    assert sent(run) == []


def test_a_hint_with_the_token_is_appended_and_shown(tmp_path: Path) -> None:
    run, token = live_run(tmp_path / "results", "R")
    with serving(output_dir=tmp_path / "results") as server:
        [episode] = api(server, "/api/state")["live"]
        assert (episode["key"], episode["task_id"], episode["calls"], episode["sent"]) == (KEY, "day-1", 1, [])
        status, answer = post(server, hint(text="  Ask Dana for the Q3 numbers  ", name=" Ana "), token,
                              origin=f"http://127.0.0.1:{server.server_port}")
        assert status == 200 and answer["tier"] == 2
        [line] = sent(run)
        assert (line["who"], line["tier"], line["text"], line["id"]) == ("Ana", 2, "Ask Dana for the Q3 numbers",
                                                                         answer["sent"])
        assert line["at"] == answer["at"]
        [episode] = api(server, "/api/state")["live"]
        assert [h["text"] for h in episode["sent"]] == ["Ask Dana for the Q3 numbers"]


def test_the_token_is_in_nothing_the_server_sends(tmp_path: Path) -> None:
    run, token = live_run(tmp_path / "results", "R")
    with serving(output_dir=tmp_path / "results") as server:
        post(server, hint(), token)
        bodies = [request(server, path)[2] for path in ("/", f"/?token={token}", "/viewer.js", "/viewer.css",
                                                        "/api/state", "/api/result?run=0&task=1&trial=0")]
        bodies.append(json.dumps(post(server, hint(), token)[1]).encode())
    assert all(token.encode() not in body for body in bodies)
    assert token.encode() in (run / "live" / "token").read_bytes()


def test_the_viewer_announces_each_live_runs_url_once(tmp_path: Path) -> None:
    _, token = live_run(tmp_path / "results", "R")
    write_run(tmp_path / "results", "plain", [result(1, True)])
    announced: list[tuple[str, str]] = []
    view = ViewState(output_dir=tmp_path / "results")
    view.announce = lambda name, value: announced.append((name, value))
    view.state()
    view.state()
    assert announced == [("R", token)]
    with serving(output_dir=tmp_path / "results") as server:
        assert server.live_url(token) == f"{server.url}?token={token}"


def test_a_run_that_is_not_running_has_no_episodes_in_progress(tmp_path: Path) -> None:
    live_run(tmp_path / "results", "R", running=False)
    dead, _ = live_run(tmp_path / "results", "S", running=False)
    (dead / "run.lock").write_text(json.dumps({"pid": 2 ** 22 + 7, "host": socket.gethostname()}))
    assert ViewState(output_dir=tmp_path / "results").state()["live"] == []


def test_a_live_run_before_its_first_result_is_found(tmp_path: Path) -> None:
    run, _ = live_run(tmp_path / "results", "R")
    (run / "results.jsonl").unlink()
    state = ViewState(output_dir=tmp_path / "results").state()
    assert [r["name"] for r in state["runs"]] == ["R"] and state["runs"][0]["error"] is None
    assert [e["key"] for e in state["live"]] == [KEY]


def test_results_with_live_hints_are_reported_apart(tmp_path: Path) -> None:
    root = tmp_path / "results"
    write_run(root, "R", [result(1, True), result(2, False), result(3, True, live_hints=[HINT])])
    write_run(root, "T", [result(1, False), result(2, False), result(3, False)])
    runs = load_run_dirs([root / "R", root / "T"])
    assert [(run.name, [r.task_id for r in run.results]) for run in runs] == \
        [("R", [1, 2]), ("R + live hints", [3]), ("T", [1, 2, 3])]
    rows = robustness_table({run.name: run.results for run in runs})
    assert sorted((row.agent_model, row.evaluated["E0"]) for row in rows) == [("A", 5), ("A + live hints", 1)]
    stats = [run_stats(run) for run in runs]
    assert [s.agent_model for s in stats] == ["A", "A + live hints", "A"]
    assert "## Run R + live hints" in markdown_report(stats, rows)
    # Priced as the model it is.
    usage = {"agent": {"prompt_tokens": 1_000_000, "completion_tokens": 0, "calls": 1}}
    write_run(root, "U", [result(1, True, live_hints=[HINT], usage=usage)])
    [priced] = load_run_dirs([root / "U"])
    summary = summarize(priced.results, {"A": Price(input=2.0, output=0.0)})
    assert summary.cost_total == pytest.approx(2.0) and not summary.unpriced_models


def test_the_live_viewer_keeps_them_apart_too(tmp_path: Path) -> None:
    write_run(tmp_path / "results", "R", [result(1, True), result(2, True, live_hints=[HINT])])
    state = ViewState(output_dir=tmp_path / "results").state()
    assert [row[1] for row in state["report"]["leaderboard"]["rows"]] == ["R", "R + live hints"]
    titles = [table["title"] for table in state["report"]["runs"][0]["tables"]]
    assert "R: summary" in titles and "R + live hints: summary" in titles
    record = ViewState(output_dir=tmp_path / "results").result(0, "2", 0)
    assert record is not None and record["agent_model"] == "A + live hints" and record["live_hints"][0]["who"] == "Ana"
