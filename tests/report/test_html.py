"""The HTML report is one self-contained file: tables, charts as data URIs, trajectories as embedded JSON, and
model output that cannot inject markup."""

from __future__ import annotations

import base64
import json
import math
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from occubench.cli import main
from occubench.report import difficulty_chart, html_report, load_run_dirs, modes_chart, radar_chart
from tests.report.conftest import HEALTH, TECH, result, typed, write_run

PNG = b"\x89PNG\r\n\x1a\n"
EVIL_ANSWER = "<script>alert(1)</script>"
EVIL_DOMAIN = "<img src=x onerror=alert(2)>"
EVIL_OBSERVATION = {"note": "</script><script>alert(3)</script><!--"}


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.captions: list[str] = []
        self.text: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("script", "caption"):
            self._in = tag
            if tag == "script":
                self.scripts.append((dict(attrs), ""))
            else:
                self.captions.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in:
            self._in = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in == "script":
            attrs, body = self.scripts[-1]
            self.scripts[-1] = (attrs, body + data)
        elif self._in == "caption":
            self.captions[-1] += data


def _evil_run(root: Path) -> Path:
    steps = [{"content": "Looking it up.", "tool_calls": [
        {"name": "get_prescription", "arguments": '{"rx_id": "RX-100"}', "observation": {"refills": 2},
         "call_index": 0},
        {"name": "get_prescription", "arguments": '{"rx_id": "RX-100"}', "observation": EVIL_OBSERVATION,
         "call_index": 1}]}]
    return write_run(root, "A__sim__E1", [
        result(1, True, final_answer=EVIL_ANSWER, domain=EVIL_DOMAIN, steps=steps, env_mode="E1",
               fault_events=[{"call_index": 1, "tool": "get_prescription", "kind": "explicit", "fault": "http_500",
                              "detail": "HTTP 500"}],
               verdict_details={"checks": [{"name": "refill recorded", "passed": True, "message": "1 row"}]}),
        result(2, False, category=TECH, env_mode="E1"),
        result(3, None, env_mode="E1")])


@pytest.fixture()
def page(tmp_path: Path) -> tuple[str, _Page]:
    clean = write_run(tmp_path, "A__sim__E0", [result(1, True), result(2, True, category=TECH)])
    out = tmp_path / "report.html"
    assert main(["report", str(clean), str(_evil_run(tmp_path)), "--html", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    parser = _Page()
    parser.feed(text)
    return text, parser


def test_self_contained(page: tuple[str, _Page]) -> None:
    _, parsed = page
    for tag, attrs in parsed.tags:
        for name in ("src", "href", "action", "data"):
            value = (attrs.get(name) or "").strip().lower()
            assert not value.startswith(("http:", "https:", "//")), f"<{tag} {name}={value!r}> is not offline"
        assert tag not in ("link", "iframe", "object", "embed")
    assert [attrs.get("src") for attrs, _ in parsed.scripts] == [None, None]  # both scripts inline


def test_tables_and_charts(page: tuple[str, _Page]) -> None:
    _, parsed = page
    assert "Leaderboard" in parsed.captions
    assert "Completion by fault level; R = min(E1, E2, E3) / E0" in parsed.captions
    assert {"A__sim__E0: summary", "A__sim__E1: by category", "A__sim__E1: by domain"} <= set(parsed.captions)
    images = [attrs["src"] for tag, attrs in parsed.tags if tag == "img"]
    assert len(images) == 3
    for src in images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]).startswith(PNG)


def test_embedded_trajectories(page: tuple[str, _Page]) -> None:
    _, parsed = page
    (data_attrs, body), = [(a, b) for a, b in parsed.scripts if a.get("type") == "application/json"]
    assert data_attrs["id"] == "occubench-data"
    tasks = {t["key"]: t for t in json.loads(body)["tasks"]}
    assert set(tasks) == {"0/1/0", "0/2/0", "1/1/0", "1/2/0", "1/3/0"}
    evil = tasks["1/1/0"]
    assert evil["final_answer"] == EVIL_ANSWER and evil["domain"] == EVIL_DOMAIN
    assert evil["steps"][0]["tool_calls"][1]["observation"] == EVIL_OBSERVATION
    assert evil["fault_events"][0]["call_index"] == 1
    assert evil["verdict_details"]["checks"][0]["name"] == "refill recorded"
    assert [tasks[k]["outcome"] for k in ("1/1/0", "1/2/0", "1/3/0")] == ["pass", "fail", "error"]


def test_model_output_cannot_inject_markup(page: tuple[str, _Page]) -> None:
    text, parsed = page
    assert EVIL_ANSWER not in text and "alert(3)</script>" not in text and "<img src=x" not in text
    assert text.count("<script") == 2 and text.count("</script>") == 2
    assert [tag for tag, _ in parsed.tags].count("img") == 3  # the charts, and no injected image
    assert EVIL_DOMAIN in "".join(parsed.text)  # shown as text in the domain table


def test_charts_and_api(tmp_path: Path) -> None:
    runs = load_run_dirs([write_run(tmp_path, "r", [result(1, True), result(2, False, category=HEALTH,
                                                                                   difficulty_level=3)])])
    results = runs[0].results
    for chart in (radar_chart, modes_chart, difficulty_chart):
        assert chart(results).startswith(PNG)
    assert radar_chart(results) == radar_chart(results)  # no timestamp in the file
    assert "<!DOCTYPE html>" in html_report(runs)


ODD_NAMES = ["$a_b^c_d$", "$x$", r"C:\models\$new", "under_score^caret"]


def test_model_names_are_drawn_and_shown_as_written(tmp_path: Path) -> None:
    # Matplotlib would typeset "$...$" as math: "$a_b^c_d$" does not parse (the report failed) and "$x$" came out
    # as an italic x.
    dirs = [str(write_run(tmp_path, f"run{i}", [result(1, True, agent_model=name), result(2, False, agent_model=name)]))
            for i, name in enumerate(ODD_NAMES)]
    out = tmp_path / "report.html"
    assert main(["report", *dirs, "--html", str(out)]) == 0
    parsed = _Page()
    parsed.feed(out.read_text(encoding="utf-8"))
    shown = "".join(parsed.text)
    for name in ODD_NAMES:
        assert name in shown
    (_, body), = [(a, b) for a, b in parsed.scripts if a.get("type") == "application/json"]
    assert {t["agent_model"] for t in json.loads(body)["tasks"]} == set(ODD_NAMES)


@pytest.mark.parametrize("chart", [radar_chart, modes_chart, difficulty_chart])
def test_chart_labels_are_not_mathtext(chart: Any) -> None:
    # Math mode ignores spaces: "$a b$" and "$ab$" would be the same picture; as text they differ.
    def drawn(name: str) -> bytes:
        return chart([typed(1, True, agent_model=name), typed(2, False, agent_model="$b$")])

    assert drawn("$a b$") != drawn("$ab$")


def test_a_category_without_tasks_is_a_gap_on_the_radar_not_zero() -> None:
    from occubench.report.charts import CATEGORY_ABBREVIATIONS, category_rates

    rates = dict(zip(CATEGORY_ABBREVIATIONS, category_rates([typed(1, True, category=HEALTH),
                                                             typed(2, False, category=TECH)])))
    assert (rates[HEALTH], rates[TECH]) == (1.0, 0.0)  # a failed category is 0 %, drawn at the centre
    assert all(math.isnan(rate) for category, rate in rates.items() if category not in (HEALTH, TECH))
