"""One self-contained HTML report: tables, charts inlined as data URIs, and the trajectory viewer
(:mod:`occubench.report.viewer`) with its data embedded as JSON. Works offline; every piece of model output is escaped
or set as text, never parsed as markup."""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from occubench.core.results import Result
from occubench.engine.summary import Price
from occubench.errors import ConfigError
from occubench.hub.worlds import cited
from occubench.report.charts import bar_chart, difficulty_chart, modes_chart, radar_chart
from occubench.report.paired import PairedComparison, paired_comparisons
from occubench.report.robustness import robustness_table
from occubench.report.runs import Run
from occubench.report.stats import RunStats, run_stats
from occubench.report.tables import (
    Table,
    domain_table,
    leaderboard_table,
    modes_table,
    overview_charts,
    overview_tables,
    paired_table,
    report_warnings,
    run_tables,
    suite_tables,
)
from occubench.report.viewer import VIEWER_HTML, asset, entry, summary
from occubench.store import read_context
from occubench.util.jsonsafe import dumps


def _contexts(run: Run) -> dict[str, Any]:
    """The run's context values its results refer to: each stored once, however many results share it."""
    values = read_context(run.path)
    return {i: values[i] for result in run.results for i in result.context.values() if i in values}


def _script_json(data: Any) -> str:
    # Inside <script>, "</script>" or "<!--" in a string would end or break the element; \u escapes keep the JSON.
    text = dumps(data)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _table_html(table: Table) -> str:
    def cell(tag: str, i: int, text: str) -> str:
        cls = ' class="num"' if i >= table.text_columns else ""
        return f"<{tag}{cls}>{html.escape(text)}</{tag}>"

    head = "".join(cell("th", i, c) for i, c in enumerate(table.columns))
    body = "".join("<tr>" + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>" for row in table.rows)
    note = f'<p class="note">{html.escape(table.note)}</p>' if table.note else ""
    return (f"<div><table><caption>{html.escape(table.title)}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>{note}</div>")


def _image(png: bytes, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">'


def _warnings_html(warnings: list[str]) -> str:
    if not warnings:
        return ""
    items = "".join(f"<li>{html.escape(w)}</li>" for w in warnings)
    return f'<section id="warnings" class="warnings"><h2>Warnings</h2><ul>{items}</ul></section>'


#: Longer answers are cut in the fidelity section; the trajectory viewer shows them whole.
_ANSWER_LIMIT = 2000


def _pretty(value: Any) -> str:
    """JSON text indented (``value`` itself when it is text that is not JSON), cut at :data:`_ANSWER_LIMIT`."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            pass
    text = value if isinstance(value, str) else dumps(value, indent=2)
    return text if len(text) <= _ANSWER_LIMIT else text[:_ANSWER_LIMIT] + "…"


def _disagreements(run_index: int, run: Run, result: Result, calls: list[Any]) -> list[str]:
    """Table rows of ``result``'s twin calls that did not agree, each linked to the result's trajectory."""
    key = quote(summary(run_index, run.name, 1, result)["key"], safe="")
    task = f'<a href="#task={html.escape(key)}">{html.escape(str(result.task_id))}</a>'
    rows = []
    for call in calls:
        if call.get("agree") is True:
            continue
        cells = [task, *(html.escape(str(call.get(name, ""))) for name in ("call_index", "tool")),
                 *(f"<pre>{html.escape(_pretty(call.get(name)))}</pre>" for name in ("arguments", "real", "simulated")),
                 *(html.escape(str(call.get(name) or "-")) for name in ("kind", "by", "reason"))]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return rows


def _fidelity_html(runs: list[Run]) -> str:
    """Twin runs' calls on which the simulated world did not agree with the real one (including the calls the judge
    could not decide), side by side; empty when no run recorded twin calls. Errored episodes are left out."""
    parts = []
    head = "".join(f"<th>{c}</th>" for c in ("Task", "Call", "Tool", "Arguments", "Real answer", "Simulator's answer",
                                             "Kind", "Decided by", "Reason"))
    for i, run in enumerate(runs):
        rows, compared = [], 0
        for result in run.results:
            calls = result.env_info.get("twin_calls") if result.ok else None
            if isinstance(calls, list):
                compared += len(calls)
                rows += _disagreements(i, run, result, calls)
        if not compared:
            continue
        body = (f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>" if rows
                else '<p class="note">Every compared call agreed.</p>')
        parts.append(f"<h3>{html.escape(run.name)}: {len(rows)} of {compared} call(s) not agreeing</h3>{body}")
    if not parts:
        return ""
    return ('<section id="fidelity"><h2>Simulator fidelity</h2><p class="note">Tool calls answered by the simulated '
            "twin and the real world that did not agree; judge_error: the judge could not decide. Long answers are "
            f"cut here; the trajectory shows them whole.</p>{''.join(parts)}</section>")


def html_report(runs: list[Run], stats: list[RunStats] | None = None, *,
                prices: Mapping[str, Price] | None = None, title: str = "OccuBench report",
                notes: Iterable[str] = (), paired: list[PairedComparison] | None = None) -> str:
    """The whole report as one HTML document; ``stats`` defaults to ``run_stats`` of each run, ``paired`` to the
    paired comparisons of the runs' agents. ``notes`` are warnings to show beside the robustness rows' own (say,
    the directories skipped while loading)."""
    stats = stats if stats is not None else [run_stats(run, prices) for run in runs]
    records = [r for run in runs for r in run.results]
    paired = paired if paired is not None else paired_comparisons(records)
    modes = robustness_table({run.name: run.results for run in runs})
    warnings = report_warnings(modes, notes)
    extra = suite_tables(runs)
    fidelity = _fidelity_html(runs)
    run_sections = []
    for i, s in enumerate(stats):
        main = "".join(_table_html(t) for t in run_tables(s, by_domain=False))
        suite = "".join(_table_html(t) for t in extra.get(s.name, []))
        worlds = f"<p>Worlds: <code>{html.escape(cited(s.worlds, s.worlds_digest))}</code></p>" if s.worlds else ""
        run_sections.append(f'<section class="run" id="run-{i}"><h3>{html.escape(s.name)}</h3>{worlds}'
                            f'<div class="run-tables">{main}</div>'
                            + (f'<div class="run-tables">{suite}</div>' if suite else "") +
                            f"<details><summary>By domain</summary>{_table_html(domain_table(s))}</details></section>")
    charts = [_image(radar_chart(records), "Completion by industry category per agent model"),
              _image(modes_chart(records), "Completion by fault level per agent"),
              _image(difficulty_chart(records), "Completion by difficulty per agent model")]
    # The suites' tables over all runs, with their charts beside them.
    overview = "".join(_table_html(t) for t in overview_tables(runs)) + "".join(
        _image(bar_chart(chart), chart.title) for chart in overview_charts(runs))
    entries = [entry(i, run.name, s.trials, result)
               for i, (run, s) in enumerate(zip(runs, stats)) for result in run.results]
    data = {"tasks": entries, "contexts": [_contexts(run) for run in runs]}
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>{asset("viewer.css")}</style>
</head>
<body>
<header>
<h1>{html.escape(title)}</h1>
<p>{len(runs)} run(s), {len(records)} result(s). Completion = passed / evaluated; errors are counted apart and not
scored. Completion intervals: Wilson score (on the effective sample size when tasks are repeated).</p>
<nav>{'<a href="#warnings">Warnings</a>' if warnings else ""}<a href="#leaderboard">Leaderboard</a>
<a href="#modes">Fault levels</a>{'<a href="#paired">Paired</a>' if paired else ""}
<a href="#charts">Charts</a>{'<a href="#overview">Across runs</a>' if overview else ""}
<a href="#runs">Runs</a>{'<a href="#fidelity">Fidelity</a>' if fidelity else ""}
<a href="#trajectories">Trajectories</a></nav>
</header>
<main>
{_warnings_html(warnings)}
<section id="leaderboard"><h2>Leaderboard</h2>{_table_html(leaderboard_table(stats))}</section>
<section id="modes"><h2>Fault levels and robustness</h2>{_table_html(modes_table(modes))}</section>
{f'<section id="paired"><h2>Paired comparison</h2>{_table_html(paired_table(paired))}</section>' if paired else ""}
<section id="charts" class="charts"><h2>Charts</h2>{"".join(charts)}</section>
{f'<section id="overview" class="charts"><h2>Across runs</h2>{overview}</section>' if overview else ""}
<section id="runs"><h2>Runs</h2>{"".join(run_sections)}</section>
{fidelity}
{VIEWER_HTML}
</main>
<script type="application/json" id="occubench-data">{_script_json(data)}</script>
<script>{asset("viewer.js")}</script>
</body>
</html>
"""


def write_html(path: Path, runs: list[Run], stats: list[RunStats] | None = None, *,
               prices: Mapping[str, Price] | None = None, notes: Iterable[str] = (),
               paired: list[PairedComparison] | None = None) -> Path:
    text = html_report(runs, stats, prices=prices, notes=notes, paired=paired)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the HTML report to {path}: {exc.strerror}") from None
    return path
