"""One self-contained HTML report: tables, charts inlined as data URIs, and the trajectory viewer
(:mod:`occubench.report.viewer`) with its data embedded as JSON. Works offline; every piece of model output is escaped
or set as text, never parsed as markup."""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from occubench.engine.summary import Price
from occubench.errors import ConfigError
from occubench.report.charts import difficulty_chart, modes_chart, radar_chart
from occubench.report.paired import PairedComparison, paired_comparisons
from occubench.report.robustness import robustness_table
from occubench.report.runs import Run
from occubench.report.stats import RunStats, run_stats
from occubench.report.tables import (
    Table,
    domain_table,
    leaderboard_table,
    modes_table,
    paired_table,
    report_warnings,
    run_tables,
)
from occubench.report.viewer import VIEWER_HTML, asset, entry
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
    run_sections = []
    for i, s in enumerate(stats):
        main = "".join(_table_html(t) for t in run_tables(s, by_domain=False))
        run_sections.append(f'<section class="run" id="run-{i}"><h3>{html.escape(s.name)}</h3>'
                            f'<div class="run-tables">{main}</div>'
                            f"<details><summary>By domain</summary>{_table_html(domain_table(s))}</details></section>")
    charts = [_image(radar_chart(records), "Completion by industry category per agent model"),
              _image(modes_chart(records), "Completion by environment mode E0–E3 per agent"),
              _image(difficulty_chart(records), "Completion by difficulty per agent model")]
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
scored. Confidence intervals: percentile bootstrap over tasks.</p>
<nav>{'<a href="#warnings">Warnings</a>' if warnings else ""}<a href="#leaderboard">Leaderboard</a>
<a href="#modes">Modes</a>{'<a href="#paired">Paired</a>' if paired else ""}
<a href="#charts">Charts</a><a href="#runs">Runs</a>
<a href="#trajectories">Trajectories</a></nav>
</header>
<main>
{_warnings_html(warnings)}
<section id="leaderboard"><h2>Leaderboard</h2>{_table_html(leaderboard_table(stats))}</section>
<section id="modes"><h2>Environment modes and robustness</h2>{_table_html(modes_table(modes))}</section>
{f'<section id="paired"><h2>Paired comparison</h2>{_table_html(paired_table(paired))}</section>' if paired else ""}
<section id="charts" class="charts"><h2>Charts</h2>{"".join(charts)}</section>
<section id="runs"><h2>Runs</h2>{"".join(run_sections)}</section>
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
