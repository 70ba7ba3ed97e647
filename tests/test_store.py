"""The results file survives interruption: whole lines, a half-written tail dropped, garbled lines named."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from occubench.core.results import ErrorInfo, Result
from occubench.engine.summary import summarize
from occubench.errors import ConfigError
from occubench.llm.types import Usage
from occubench.store import (
    CONTEXT_FILE,
    RESULTS_FILE,
    ResultStore,
    latest_by_task,
    load_results,
    read_context,
    read_results,
)
from occubench.util.redact import Redactor, redact_url


def _store(tmp_path: Path, redactor: Redactor | None = None) -> ResultStore:
    (tmp_path / "run").mkdir()
    return ResultStore(tmp_path / "run", redactor)


def test_concurrent_appends_give_whole_lines(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: store.append(Result(task_id=i, feedback="x" * 5000)), range(200)))
    records = read_results(store.path)
    assert sorted(r["task_id"] for r in records) == list(range(200))


def test_half_written_last_line_is_ignored_and_cut(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = _store(tmp_path)
    store.append(Result(task_id=1, status="ok"))
    with store.path.open("a") as handle:
        handle.write('{"task_id": 2, "sta')
    assert [r.task_id for r in store.load()] == [1]
    assert "half-written last line" in capsys.readouterr().err
    store.append(Result(task_id=3, status="ok"))
    assert [r["task_id"] for r in read_results(store.path)] == [1, 3]


def test_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.path.write_text('{"task_id": 1}')
    assert [r.task_id for r in store.load()] == [1]
    store.append(Result(task_id=2))
    assert [r["task_id"] for r in read_results(store.path)] == [1, 2]


def test_garbled_line_in_the_middle_names_file_and_line(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.path.write_text('{"task_id": 1}\nnot json\n{"task_id": 3}\n')
    with pytest.raises(ConfigError, match=r"results\.jsonl:2: not a valid result line"):
        store.load()
    assert store.path.read_text().count("\n") == 3  # nothing was thrown away


#: Lines no run writes: nested 50,000 deep (a recursive parser's stack) and 20 MB long (past MAX_LINE_BYTES).
DEEP = b'{"task_id": "x", "extra": ' + b"[" * 50_000 + b"]" * 50_000 + b"}\n"
LONG = b'{"task_id": "y", "extra": "' + b"a" * (20 << 20) + b'"}\n'


def test_deep_and_long_lines_are_left_out_with_one_warning_and_kept_through_a_replace(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = _store(tmp_path)
    store.append(Result(task_id=1, status="error"))
    with store.path.open("ab") as handle:
        handle.write(DEEP + LONG)
    store.append(Result(task_id=2, status="ok"))
    assert [r["task_id"] for r in read_results(store.path)] == [1, 2]
    err = capsys.readouterr().err
    assert err.count("warning:") == 1 and "results.jsonl:2: 2 line(s) left out" in err
    assert "nested deeper than 256 levels" in err
    earlier = store.load()
    assert [(r.task_id, r.status) for r in earlier] == [(1, "error"), (2, "ok")]
    store.supersede(earlier[:1])
    store.append(Result(task_id=1, status="ok"))
    assert [(r.task_id, r.status) for r in store.load()] == [(2, "ok"), (1, "ok")]  # the error line dropped
    lines = store.path.read_bytes().splitlines(keepends=True)
    assert lines[:2] == [DEEP, LONG]  # byte for byte: left out, never rewritten


def test_context_lines_too_deep_or_long_are_skipped(tmp_path: Path) -> None:
    store = _store(tmp_path)
    (store.run_dir / CONTEXT_FILE).write_bytes(DEEP + b'{"id": "a", "value": "kept"}\n' + LONG)
    assert read_context(store.run_dir) == {"a": "kept"}


def test_a_retried_error_is_replaced_and_what_it_spent_kept(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for result in (Result(task_id=1, status="error", usage={"agent": Usage(calls=3, prompt_tokens=300)}),
                   Result(task_id=2, status="ok")):
        store.append(result)
    store.supersede(r for r in store.load() if r.status == "error")
    assert [r["status"] for r in read_results(store.path)] == ["error", "ok"]  # kept until the retry's result
    store.append(Result(task_id=1, status="ok", usage={"agent": Usage(calls=1, prompt_tokens=100)}))
    # Appended: a run killed now has both lines, and readers take the later one.
    assert [(r["task_id"], r["status"]) for r in read_results(store.path)] == [(1, "error"), (2, "ok"), (1, "ok")]
    assert summarize(list(latest_by_task(load_results(store.path)).values())).usage["agent"].calls == 4
    records = store.load()  # the run's next load drops the replaced line
    assert [(r.task_id, r.status) for r in records] == [(2, "ok"), (1, "ok")]
    assert records[1].earlier_usage["agent"].prompt_tokens == 300
    assert summarize(records).usage["agent"].calls == 4


def test_a_pair_retried_twice_across_a_killed_run_counts_each_attempt_once(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.append(Result(task_id=1, status="error", usage={"agent": Usage(calls=3)}))
    store.supersede(store.load())
    store.append(Result(task_id=1, status="error", usage={"agent": Usage(calls=2)}))  # killed before a load
    again = ResultStore(store.run_dir)  # the resume
    again.supersede(again.load())
    assert len(read_results(store.path)) == 1  # compacted by the load
    again.append(Result(task_id=1, status="ok", usage={"agent": Usage(calls=1)}))
    (record,) = again.load()
    assert record.ok and summarize([record]).usage["agent"].calls == 6


def test_secrets_are_redacted_in_records_and_args(tmp_path: Path) -> None:
    store = _store(tmp_path, Redactor(["placeholder.secret.value", None, "ab"]))
    store.append(Result(task_id=1, status="error",
                        error=ErrorInfo("request_rejected", "Incorrect API key provided: placeholder.secret.value")))
    store.write_args({"api_key": "placeholder.secret.value", "nested": ["placeholder.secret.value!"]})
    text = store.path.read_text() + (store.run_dir / "args.json").read_text()
    assert "placeholder.secret.value" not in text and text.count("<redacted>") == 3
    assert json.loads(store.path.read_text())["error"]["message"].endswith("<redacted>")


def test_urls_lose_passwords_and_token_parameters() -> None:
    assert redact_url("https://user:pw@host/v1?api-key=abc&x=1") == "https://user:<redacted>@host/v1?api-key=<redacted>&x=1"
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert redact_url(None) is None


def test_context_values_are_kept_once_and_referenced_by_id(tmp_path: Path) -> None:
    store = ResultStore(tmp_path, Redactor(["sk-secret"]))
    tools = [{"type": "function", "function": {"name": "t", "parameters": {}}}]
    for task_id in (1, 2):
        store.append(Result(task_id=task_id, context_values={"tools": tools, "instruction": f"do {task_id} sk-secret"}))
    lines = (tmp_path / CONTEXT_FILE).read_text().splitlines()
    assert len(lines) == 3  # the shared tool list once, two instructions
    context = read_context(tmp_path)
    first, second = (Result.from_dict(r) for r in read_results(tmp_path / RESULTS_FILE))
    assert first.context["tools"] == second.context["tools"] and context[first.context["tools"]] == tools
    assert context[second.context["instruction"]] == "do 2 <redacted>"
    assert "sk-secret" not in (tmp_path / CONTEXT_FILE).read_text()


def test_context_after_a_half_written_line_starts_on_its_own_line(tmp_path: Path) -> None:
    (tmp_path / CONTEXT_FILE).write_text('{"id": "a", "value": "kept"}\n{"id": "b", "val')
    store = ResultStore(tmp_path)
    store.append(Result(task_id=1, context_values={"instruction": "new"}))
    result = Result.from_dict(read_results(tmp_path / RESULTS_FILE)[0])
    assert read_context(tmp_path) == {"a": "kept", result.context["instruction"]: "new"}
