"""Run progress: one numbered line per task and a running tally off a terminal, a live bar on one; safe across
worker threads."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text

from occubench.cli import main as cli
from occubench.core.results import Result
from occubench.engine.progress import RunProgress
from occubench.testing import MockLLMServer
from tests.conftest import write_small_data


def _console(*, terminal: bool) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=terminal, width=120), out


def _record(task_id: int, outcome: str, *, steps: int = 1, tokens: tuple[int, int] = (10, 5)) -> Result:
    """A result as the runner writes it, read back; ``outcome`` is pass, fail or an error kind."""
    error = outcome not in ("pass", "fail")
    usage = {"agent": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1], "calls": 1},
             "world": {"prompt_tokens": 300, "completion_tokens": 50, "calls": 1}}
    if not error:
        usage["verifier"] = {"prompt_tokens": 100, "completion_tokens": 10, "calls": 3}
    return Result.from_dict({
        "task_id": task_id, "status": "error" if error else "ok", "is_correct": None if error else outcome == "pass",
        "error": {"kind": outcome, "message": "boom"} if error else None, "step_count": steps, "duration_s": 4.2,
        "usage": usage})


def test_plain_mode_prints_a_line_per_task_and_a_tally_every_tenth_and_last() -> None:
    console, out = _console(terminal=False)
    outcomes = ["pass", "fail", "pass", "infrastructure", "fail", "pass", "fail", "fail", "verifier", "pass",
                "pass", "pass"]
    with RunProgress(12, console) as progress:
        for task_id, outcome in enumerate(outcomes, start=1):
            progress.add(_record(task_id, outcome, steps=task_id, tokens=(1000, 200)))

    # Tokens: 1000 + 200 + 300 + 50 = 1550 per record, plus 110 for the verifier on ok records.
    # After 10: 8 ok x 1660 + 2 errors x 1550 = 16,380; passed 4 of 8 evaluated.
    # After 12: 10 x 1660 + 2 x 1550 = 19,700; passed 6 of 10 evaluated.
    assert out.getvalue().splitlines() == [
        "[1/12] task 1: PASS (1 steps, 4.2 s)",
        "[2/12] task 2: FAIL (2 steps, 4.2 s)",
        "[3/12] task 3: PASS (3 steps, 4.2 s)",
        "[4/12] task 4: ERROR infrastructure (4 steps, 4.2 s)",
        "[5/12] task 5: FAIL (5 steps, 4.2 s)",
        "[6/12] task 6: PASS (6 steps, 4.2 s)",
        "[7/12] task 7: FAIL (7 steps, 4.2 s)",
        "[8/12] task 8: FAIL (8 steps, 4.2 s)",
        "[9/12] task 9: ERROR verifier (9 steps, 4.2 s)",
        "[10/12] task 10: PASS (10 steps, 4.2 s)",
        "— 10/12 done, pass rate 50.0 %, 2 error(s), 16,380 tokens",
        "[11/12] task 11: PASS (11 steps, 4.2 s)",
        "[12/12] task 12: PASS (12 steps, 4.2 s)",
        "— 12/12 done, pass rate 60.0 %, 2 error(s), 19,700 tokens",
    ]
    assert (progress.done, progress.passed, progress.errors, progress.tokens) == (12, 6, 2, 19_700)
    assert "\x1b" not in out.getvalue()


def test_pass_rate_is_a_dash_until_a_task_is_evaluated() -> None:
    console, out = _console(terminal=False)
    with RunProgress(1, console) as progress:
        progress.add(_record(7, "infrastructure"))
    assert out.getvalue().splitlines()[-1] == "— 1/1 done, pass rate -, 1 error(s), 365 tokens"


def test_records_without_usage_count_no_tokens() -> None:
    console, _ = _console(terminal=False)
    # Written by the original harness: no status, no usage.
    record = Result.from_dict({"task_id": 1, "is_correct": True, "step_count": 3, "duration_s": 1.0})
    with RunProgress(1, console) as progress:
        progress.add(record)
    assert (progress.done, progress.passed, progress.errors, progress.tokens) == (1, 1, 0, 0)


def test_live_mode_on_a_terminal_shows_the_bar_and_the_tally_not_lines() -> None:
    console, out = _console(terminal=True)
    with RunProgress(3, console) as progress:
        for task_id, outcome in enumerate(["pass", "infrastructure", "fail"], start=1):
            progress.add(_record(task_id, outcome))
    text = out.getvalue()
    assert "\x1b" in text  # a live display draws with control codes
    assert "━" in text  # the bar
    assert "pass rate -, 0 error(s), 0 tokens" in text  # first frame
    # 3 records x (15 + 350) + 2 ok x 110 verifier tokens = 1,315; 1 passed of 2 evaluated.
    assert "3/3" in text and "pass rate 50.0 %, 1 error(s), 1,315 tokens" in text
    assert "ETA" in text
    assert "task 1:" not in text
    assert (progress.done, progress.passed, progress.errors, progress.tokens) == (3, 1, 1, 1315)


def test_live_false_prints_lines_on_a_terminal() -> None:
    console, out = _console(terminal=True)
    with RunProgress(1, console, live=False) as progress:
        progress.add(_record(5, "pass"))
    plain = Text.from_ansi(out.getvalue()).plain
    assert plain.splitlines()[0] == "[1/1] task 5: PASS (1 steps, 4.2 s)" and "━" not in plain


@pytest.mark.parametrize("terminal", [False, True], ids=["plain", "live"])
def test_adds_from_many_threads_are_all_counted(terminal: bool) -> None:
    console, out = _console(terminal=terminal)
    # Every 8th task an error (50), every odd one a pass (200), the rest fail; 15 + 350 tokens each plus 110 on
    # the 350 ok ones = 400 x 365 + 350 x 110 = 184,500.
    records = [_record(i, "infrastructure" if i % 8 == 0 else "pass" if i % 2 else "fail") for i in range(400)]
    start = threading.Barrier(8)

    def worker(chunk: list[Result]) -> None:
        start.wait()
        for record in chunk:
            progress.add(record)

    with RunProgress(400, console) as progress:
        threads = [threading.Thread(target=worker, args=(records[n::8],)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    assert (progress.done, progress.passed, progress.errors, progress.tokens) == (400, 200, 50, 184_500)
    final = "400/400 done, pass rate 57.1 %, 50 error(s), 184,500 tokens"
    if terminal:
        assert "400/400" in out.getvalue() and "pass rate 57.1 %, 50 error(s), 184,500 tokens" in out.getvalue()
        assert "task " not in out.getvalue()
    else:
        lines = out.getvalue().splitlines()
        numbered = [line for line in lines if line.startswith("[")]
        assert [line.split("]")[0] for line in numbered] == [f"[{n}/400" for n in range(1, 401)]
        assert len(lines) == 400 + 40 and lines[-1] == f"— {final}"


def test_after_a_resume_the_tally_counts_what_the_final_table_counts(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    data = write_small_data(tmp_path / "data")
    common = ["run", "--agent-model", "a", "--world-model", "w", "--api-key", "k", "--data-dir", str(data),
              "--output-dir", str(tmp_path), "--run-name", "r"]
    with MockLLMServer() as server:
        assert cli([*common, "--base-url", server.base_url, "--task-ids", "3"]) == 0  # a FAIL, kept
        capsys.readouterr()
        assert cli([*common, "--base-url", server.base_url]) == 0
    tally = [line for line in capsys.readouterr().err.splitlines() if "done, pass rate" in line][-1]
    assert cli(["report", str(tmp_path / "r"), "--format", "json"]) == 0
    final = json.loads(capsys.readouterr().out)["runs"][0]
    assert tally.startswith("— 2/2 done")  # the session ran two tasks ...
    assert f"pass rate {100 * final['completion']['rate']:.1f} %" in tally  # ... and reports the folder's rate
    tokens = sum(u["prompt_tokens"] + u["completion_tokens"] for u in final["usage"].values())
    assert f"{tokens:,} tokens" in tally
