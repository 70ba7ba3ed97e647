"""Run summary: completion rate without errors, tokens per role over every record, cost from a price file."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from occubench.core.results import Result
from occubench.engine.summary import Price, load_prices, print_summary, summarize, usage_row
from occubench.errors import ConfigError
from occubench.llm import Usage

HEALTH, TRANSPORT = "Healthcare & Life Sciences", "Transportation & Logistics"


def _usage(prompt: int, completion: int, calls: int) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "calls": calls}


# Written as results files hold them, read as every reader gets them.
RECORDS = [Result.from_dict(record) for record in [
    {"task_id": 1, "category": HEALTH, "status": "ok", "is_correct": True, "agent_model": "gpt-4o",
     "world_model": "qwen-max", "verifier_model": "gpt-4o-mini",
     "usage": {"agent": _usage(120_000, 8_000, 10), "world": _usage(60_000, 4_000, 9),
               "verifier": _usage(9_000, 300, 3)}},
    {"task_id": 2, "category": HEALTH, "status": "error", "is_correct": None, "agent_model": "gpt-4o",
     "world_model": "qwen-max", "verifier_model": "gpt-4o-mini", "error": {"kind": "infrastructure", "message": "x"},
     "usage": {"agent": _usage(40_000, 2_000, 4), "world": _usage(20_000, 1_000, 4)}},
    # Written by the original OccuBench harness: no status, no usage, no verifier_model.
    {"task_id": 3, "category": TRANSPORT, "is_correct": False, "agent_model": "gpt-4o", "world_model": "qwen-max"},
]]
PRICES = {"gpt-4o": Price(2.5, 10.0), "qwen-max": Price(1.6, 6.4), "gpt-4o-mini": Price(0.15, 0.6)}


def _usage_rows(summary_text: str) -> dict[str, list[str]]:
    """The usage table's rows by role, as lists of cells."""
    table = summary_text.split("Usage", 1)[1]
    rows = [[cell.strip() for cell in re.split(r"[│┃|]", line) if cell.strip()] for line in table.splitlines()]
    return {row[0]: row[1:] for row in rows if row and row[0] in ("agent", "world", "verifier", "npc", "All")}


def _printed(summary_records: list[Result], prices: dict[str, Price] | None) -> str:
    out = io.StringIO()
    print_summary(summarize(summary_records, prices), Console(file=out, width=200, force_terminal=False), "run")
    return out.getvalue()


def test_rates_leave_errors_out_and_usage_counts_every_record() -> None:
    summary = summarize(RECORDS)
    assert (summary.overall.passed, summary.overall.evaluated) == (1, 2)
    assert (summary.by_category[HEALTH].evaluated, summary.by_category[TRANSPORT].evaluated) == (1, 1)
    assert [r.task_id for r in summary.errors] == [2]
    assert summary.usage == {"agent": Usage(160_000, 10_000, 14), "world": Usage(80_000, 5_000, 13),
                             "verifier": Usage(9_000, 300, 3)}
    assert not summary.priced and summary.cost_by_role == {} and summary.unpriced_models == set()


def test_cost_per_role_uses_each_roles_model() -> None:
    summary = summarize(RECORDS, PRICES)
    # agent  gpt-4o      160,000 x 2.50 + 10,000 x 10.0 per 1M = 0.40 + 0.10     = 0.5
    # world  qwen-max     80,000 x 1.60 +  5,000 x  6.4 per 1M = 0.128 + 0.032   = 0.16
    # judge  gpt-4o-mini   9,000 x 0.15 +    300 x  0.6 per 1M = 0.00135 + 0.00018 = 0.00153
    assert summary.cost_by_role == pytest.approx({"agent": 0.5, "world": 0.16, "verifier": 0.00153})
    assert summary.cost_total == pytest.approx(0.66153)
    assert summary.unpriced_models == set()


def test_verifier_defaults_to_the_world_model_and_other_roles_use_their_own_field() -> None:
    record = Result.from_dict({
        "task_id": 1, "status": "ok", "is_correct": True, "agent_model": "gpt-4o", "world_model": "qwen-max",
        "npc_model": "gpt-4o-mini", "usage": {"verifier": _usage(1_000_000, 0, 3), "npc": _usage(0, 1_000_000, 2)}})
    summary = summarize([record], PRICES)
    assert summary.cost_by_role == pytest.approx({"verifier": 1.6, "npc": 0.6})
    assert summary.cost_total == pytest.approx(2.2)


def test_models_without_a_price_are_listed_not_priced_at_zero() -> None:
    records = [*RECORDS, Result.from_dict({"task_id": 4, "status": "ok", "is_correct": True, "agent_model": "gpt-4o",
                                           "world_model": "qwen-max", "usage": {"npc": _usage(10, 10, 1)}})]
    summary = summarize(records, {"gpt-4o": Price(2.5, 10.0)})
    assert summary.unpriced_models == {"qwen-max", "gpt-4o-mini", "(no npc model recorded)"}
    assert summary.cost_by_role == pytest.approx({"agent": 0.5, "world": 0.0, "verifier": 0.0, "npc": 0.0})
    text = _printed(records, {"gpt-4o": Price(2.5, 10.0)})
    assert "* No price for model(s) (no npc model recorded), gpt-4o-mini, qwen-max in the price file" in text
    assert {role: cells[-1] for role, cells in _usage_rows(text).items()} == {
        "agent": "0.5000", "world": "0.0000 *", "verifier": "0.0000 *", "npc": "0.0000 *", "All": "0.5000 *"}


def test_print_summary_shows_usage_and_cost() -> None:
    text = _printed(RECORDS, PRICES)
    assert text.index("Completion") < text.index("Usage")  # after the category table
    assert _usage_rows(text) == {
        "agent": ["14", "160,000", "0", "10,000", "0", "0.5000"],
        "world": ["13", "80,000", "0", "5,000", "0", "0.1600"],
        "verifier": ["3", "9,000", "0", "300", "0", "0.0015"],
        "All": ["30", "249,000", "0", "15,300", "0", "0.6615"],
    }
    assert "Cost (USD)" in text and "No price" not in text


def test_print_summary_without_prices_has_no_cost_column() -> None:
    text = _printed(RECORDS, None)
    assert _usage_rows(text)["All"] == ["30", "249,000", "0", "15,300", "0"]
    assert "Cost" not in text


def test_print_summary_of_original_harness_results_has_no_usage_table() -> None:
    assert "Usage" not in _printed([RECORDS[2]], PRICES)


def test_load_prices(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text('{"gpt-4o": {"input": 2.5, "output": 10}, "local": {"input": 0, "output": 0}}')
    assert load_prices(path) == {"gpt-4o": Price(2.5, 10.0), "local": Price(0.0, 0.0)}


@pytest.mark.parametrize(("text", "message"), [
    ('{\n  "gpt-4o": {"input": 2.5, "output": 10},\n  "qwen": {"input": 1,}\n}', r"prices\.json:3:\d+: invalid JSON"),
    ('["gpt-4o"]', r"prices\.json: expected a JSON object"),
    ('{"gpt-4o": 2.5}', r"prices\.json: model 'gpt-4o': expected \{\"input\""),
    ('{"gpt-4o": {"input": 2.5}}', r"prices\.json: model 'gpt-4o': expected"),
    ('{"gpt-4o": {"input": 2.5, "output": 10, "cached": 1}}', r"prices\.json: model 'gpt-4o': expected"),
    ('{"gpt-4o": {"input": "2.5", "output": 10}}', r"prices\.json: model 'gpt-4o': 'input' must be a number"),
    ('{"gpt-4o": {"input": 2.5, "output": null}}', r"model 'gpt-4o': 'output' must be a number .*got null"),
    ('{"gpt-4o": {"input": true, "output": 10}}', r"model 'gpt-4o': 'input' must be a number"),
    ('{"gpt-4o": {"input": NaN, "output": 10}}', r"model 'gpt-4o': 'input' must be a number"),
    ('{"ok": {"input": 1, "output": 1}, "gpt-4o": {"input": 2.5, "output": -10}}',
     r"prices\.json: model 'gpt-4o': 'output' must not be negative, got -10"),
], ids=["bad-json", "not-object", "not-entry", "missing-key", "unknown-key", "string", "null", "bool", "nan",
        "negative"])
def test_bad_price_files_are_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "prices.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_prices(path)


def test_missing_price_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"price file not found: .*nope\.json"):
        load_prices(tmp_path / "nope.json")


def test_cached_prompt_tokens_and_retries_are_shown_and_priced() -> None:
    record = Result.from_dict({"task_id": 1, "agent_model": "m", "world_model": "w", "usage": {"world": {
        "prompt_tokens": 1_000_000, "cached_tokens": 800_000, "completion_tokens": 0, "calls": 10,
        "retries": {"rate_limited": 2, "timeout": 1}}}})
    summary = summarize([record], {"w": Price(input=2.0, output=8.0, cached_input=0.5)})
    assert summary.cost_by_role["world"] == 200_000 * 2.0 / 1e6 + 800_000 * 0.5 / 1e6  # 0.4 + 0.4
    assert usage_row("world", summary.usage["world"], summary.cost_by_role["world"], False) == [
        "world", "10", "1,000,000", "800,000", "0", "2 rate limited, 1 timeout", "0.8000"]
    assert Price(input=2.0, output=8.0).cost(summary.usage["world"]) == 2.0  # no cached price: the input price
