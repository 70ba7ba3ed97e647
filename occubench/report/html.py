"""One self-contained HTML report: tables, charts inlined as data URIs, and a trajectory viewer whose data is
embedded as JSON. Works offline; every piece of model output is escaped or set as text, never parsed as markup."""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from occubench._jsonsafe import dumps
from occubench.errors import ConfigError
from occubench.report.charts import difficulty_chart, modes_chart, radar_chart
from occubench.report.runs import Run
from occubench.report.stats import RunStats, run_stats
from occubench.report.tables import (
    Table,
    category_label,
    domain_table,
    leaderboard_table,
    modes_table,
    report_warnings,
    run_tables,
)
from occubench.results import Result
from occubench.robustness import robustness_table, suite_of
from occubench.summary import Price

_CSS = """
:root { --pass: #1b7f3b; --fail: #b3261e; --err: #8a6d00; --line: #d0d7de; --muted: #57606a; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1f2328; }
header, main { padding: 0 24px; }
header { border-bottom: 1px solid var(--line); }
nav a { margin-right: 14px; }
h2 { margin-top: 32px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
table { border-collapse: collapse; margin: 8px 0 4px; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { border: 1px solid var(--line); padding: 3px 8px; vertical-align: top; }
th { background: #f6f8fa; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
p.note { color: var(--muted); margin: 0 0 12px; font-size: 12px; }
.warnings ul { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 4px; padding: 8px 8px 8px 28px; }
.run { margin-bottom: 24px; }
.run-tables { display: flex; flex-wrap: wrap; gap: 0 28px; align-items: flex-start; }
.charts img { max-width: 100%; border: 1px solid var(--line); margin: 6px 6px 0 0; }
#viewer { display: grid; grid-template-columns: minmax(260px, 360px) 1fr; gap: 16px; }
#filters { display: flex; flex-wrap: wrap; gap: 6px; margin-bottom: 8px; }
#filters select, #filters input { font: inherit; padding: 2px 4px; }
#task-count { color: var(--muted); font-size: 12px; }
#task-list { list-style: none; margin: 0; padding: 0; max-height: 75vh; overflow: auto; border: 1px solid var(--line); }
#task-list li a { display: block; padding: 5px 8px; border-bottom: 1px solid #eaeef2; color: inherit; text-decoration: none; }
#task-list li a:hover { background: #f6f8fa; }
#task-list li a.selected { background: #ddf4ff; }
.sub { color: var(--muted); font-size: 12px; }
.badge { display: inline-block; border-radius: 8px; padding: 0 7px; font-size: 12px; color: #fff; margin-left: 6px; }
.badge.pass { background: var(--pass); } .badge.fail { background: var(--fail); } .badge.error { background: var(--err); }
.badge.fault { background: #6f42c1; }
#task-detail { min-width: 0; position: sticky; top: 0; max-height: 100vh; overflow: auto; }
#task-detail dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; }
#task-detail dt { color: var(--muted); }
#task-detail dd { margin: 0; }
pre { white-space: pre-wrap; word-break: break-word; background: #f6f8fa; padding: 6px 8px; margin: 4px 0; max-height: 360px; overflow: auto; }
.step { border-left: 3px solid var(--line); padding-left: 10px; margin: 10px 0; }
.call { border: 1px solid var(--line); border-radius: 4px; padding: 4px 8px; margin: 6px 0; }
.call.faulted { border-color: #6f42c1; background: #f8f4ff; }
.label { font-size: 12px; color: var(--muted); }
"""

_JS = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("occubench-data").textContent);
  var tasks = data.tasks, byKey = new Map();
  tasks.forEach(function (t) { byKey.set(t.key, t); });
  var list = document.getElementById("task-list"), detail = document.getElementById("task-detail");
  var fRun = document.getElementById("f-run"), fCategory = document.getElementById("f-category");
  var fOutcome = document.getElementById("f-outcome"), fText = document.getElementById("f-text");
  var count = document.getElementById("task-count");

  // Every string from the results goes in through textContent: model output is never parsed as markup.
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function pretty(value) {
    if (typeof value === "string") {
      try { return JSON.stringify(JSON.parse(value), null, 2); } catch (e) { return value; }
    }
    return JSON.stringify(value, null, 2);
  }
  function options(select, values) {
    values.forEach(function (v) { var o = el("option", null, v[1]); o.value = v[0]; select.appendChild(o); });
  }
  function unique(field, label) {
    var seen = new Map();
    tasks.forEach(function (t) { seen.set(String(t[field]), label ? t[label] : String(t[field])); });
    return Array.from(seen.entries()).sort(function (a, b) { return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0; });
  }
  options(fRun, unique("run_index", "run"));
  options(fCategory, unique("category", "category_label"));

  function matches(t) {
    var text = fText.value.trim().toLowerCase();
    return (!fRun.value || String(t.run_index) === fRun.value) &&
      (!fCategory.value || String(t.category) === fCategory.value) &&
      (!fOutcome.value || t.outcome === fOutcome.value) &&
      (!text || (String(t.task_id) + " " + t.scenario + " " + t.domain).toLowerCase().indexOf(text) >= 0);
  }
  function badge(outcome) { return el("span", "badge " + outcome, outcome); }
  function renderList() {
    list.replaceChildren();
    var shown = 0;
    tasks.forEach(function (t) {
      if (!matches(t)) return;
      shown += 1;
      var a = el("a");
      a.href = "#task=" + encodeURIComponent(t.key);
      a.dataset.key = t.key;
      var title = el("div", null, "#" + t.task_id + (t.trials > 1 ? " (trial " + t.trial + ")" : "") + " " + t.scenario);
      title.appendChild(badge(t.outcome));
      a.appendChild(title);
      a.appendChild(el("div", "sub", t.run + " · " + t.category_label + " · level " + t.difficulty));
      var li = el("li");
      li.appendChild(a);
      list.appendChild(li);
    });
    count.textContent = shown + " of " + tasks.length + " results";
    markSelected();
  }
  function markSelected() {
    var key = currentKey();
    list.querySelectorAll("a").forEach(function (a) { a.classList.toggle("selected", a.dataset.key === key); });
  }
  function currentKey() {
    var m = /^#task=(.*)$/.exec(location.hash);
    if (!m) return null;
    try { return decodeURIComponent(m[1]); } catch (e) { return null; }
  }
  function field(dl, name, value) {
    if (value === undefined || value === null || value === "") return;
    dl.appendChild(el("dt", null, name));
    dl.appendChild(el("dd", null, value));
  }
  function block(parent, label, text) {
    parent.appendChild(el("div", "label", label));
    parent.appendChild(el("pre", null, text));
  }
  function show(key) {
    detail.replaceChildren();
    var t = byKey.get(key);
    if (!t) { detail.appendChild(el("p", "sub", "No result " + key + " in this report.")); return; }
    var h = el("h3", null, "Task " + t.task_id + " · " + t.scenario);
    h.appendChild(badge(t.outcome));
    detail.appendChild(h);
    var dl = el("dl");
    field(dl, "Run", t.run); field(dl, "Suite", t.suite); field(dl, "Agent", t.agent_model);
    field(dl, "World model", t.world_model);
    field(dl, "Mode", t.env_mode); field(dl, "Category", t.category); field(dl, "Domain", t.domain);
    field(dl, "Difficulty", t.difficulty); if (t.trials > 1) field(dl, "Trial", t.trial);
    field(dl, "Stop reason", t.stop_reason); field(dl, "Judge label", t.judge_label);
    detail.appendChild(dl);
    if (t.error) block(detail, "Error", (t.error.kind || "") + ": " + (t.error.message || ""));

    var faults = new Map();
    (t.fault_events || []).forEach(function (f) { faults.set(f.call_index, f); });
    detail.appendChild(el("h4", null, "Trajectory"));
    if (!t.steps.length && t.trajectory) block(detail, "Trajectory (text)", t.trajectory);
    t.steps.forEach(function (step, i) {
      var s = el("div", "step");
      s.appendChild(el("div", "label", "Step " + (i + 1)));
      if (step.content) s.appendChild(el("pre", null, step.content));
      (step.tool_calls || []).forEach(function (call) {
        var fault = call.call_index !== null && call.call_index !== undefined ? faults.get(call.call_index) : undefined;
        var c = el("div", fault ? "call faulted" : "call");
        var head = el("div", null);
        head.appendChild(el("strong", null, call.name));
        head.appendChild(el("span", "sub", call.call_index === null || call.call_index === undefined
          ? "  (rejected before the environment)" : "  call " + call.call_index));
        if (fault) {
          head.appendChild(el("span", "badge fault", "fault: " + fault.kind + " / " + fault.fault));
          if (fault.detail) head.appendChild(el("span", "sub", " " + fault.detail));
        }
        c.appendChild(head);
        block(c, "Arguments", pretty(call.arguments));
        block(c, "Observation", pretty(call.observation));
        s.appendChild(c);
      });
      detail.appendChild(s);
    });
    block(detail, "Final answer", t.final_answer || "");
    if (t.feedback) block(detail, "Verdict feedback", t.feedback);
    if (t.votes && t.votes.length) {
      detail.appendChild(el("h4", null, "Judge votes"));
      var ol = el("ol");
      t.votes.forEach(function (v) {
        var verdict = v.is_correct === true ? "PASS" : v.is_correct === false ? "FAIL" : "unparsable";
        var li = el("li", null, verdict + (v.attempts ? " (attempts: " + v.attempts + ")" : ""));
        if (v.feedback) li.appendChild(el("pre", null, v.feedback));
        ol.appendChild(li);
      });
      detail.appendChild(ol);
    }
    if (t.checks && t.checks.length) {
      detail.appendChild(el("h4", null, "Checks"));
      var table = el("table"), head = el("tr");
      ["Check", "Passed", "Message"].forEach(function (x) { head.appendChild(el("th", null, x)); });
      table.appendChild(head);
      t.checks.forEach(function (k) {
        var tr = el("tr");
        tr.appendChild(el("td", null, k.name)); tr.appendChild(el("td", null, k.passed ? "yes" : "no"));
        tr.appendChild(el("td", null, k.message || ""));
        table.appendChild(tr);
      });
      detail.appendChild(table);
    }
    if (t.judge_feedback) block(detail, "Judge feedback", t.judge_feedback);
  }
  function fromHash() {
    var key = currentKey();
    if (key !== null) { show(key); markSelected(); }
  }
  [fRun, fCategory, fOutcome].forEach(function (s) { s.addEventListener("change", renderList); });
  fText.addEventListener("input", renderList);
  window.addEventListener("hashchange", fromHash);
  renderList();
  if (currentKey() !== null) {
    fromHash();
    // A link to one result (report.html#task=...) opens on the viewer, not the top of the page.
    document.getElementById("trajectories").scrollIntoView();
  }
})();
"""


def _outcome(result: Result) -> str:
    if not result.ok:
        return "error"
    return "pass" if result.passed else "fail"


def _entry(run_index: int, run: Run, trials: int, result: Result) -> dict[str, Any]:
    """What the viewer shows of one result; the key is also its URL fragment (``#task=<key>``)."""
    category = result.category or "?"
    record = result.to_dict()
    details = result.verdict_details
    return {
        "key": f"{run_index}/{result.task_id}/{result.trial}", "run_index": run_index, "run": run.name,
        "task_id": result.task_id, "trial": result.trial, "trials": trials, "outcome": _outcome(result),
        "suite": suite_of(result),
        "scenario": result.task_scenario_name, "category": category,
        "category_label": category_label(category), "domain": result.domain,
        "difficulty": result.difficulty_level,
        **{name: record[name] for name in ("agent_model", "world_model", "env_mode", "error", "final_answer",
                                           "stop_reason", "feedback", "votes", "fault_events", "steps")},
        **{name: details.get(name) for name in ("checks", "judge_label", "judge_feedback")},
        # Results of the original harness have only the rendered text.
        "trajectory": "" if result.steps else result.trajectory,
    }


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
                notes: Iterable[str] = ()) -> str:
    """The whole report as one HTML document; ``stats`` defaults to ``run_stats`` of each run. ``notes`` are
    warnings to show beside the robustness rows' own (say, the directories skipped while loading)."""
    stats = stats if stats is not None else [run_stats(run, prices) for run in runs]
    records = [r for run in runs for r in run.results]
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
    entries = [_entry(i, run, s.trials, result)
               for i, (run, s) in enumerate(zip(runs, stats)) for result in run.results]
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>{_CSS}</style>
</head>
<body>
<header>
<h1>{html.escape(title)}</h1>
<p>{len(runs)} run(s), {len(records)} result(s). Completion = passed / evaluated; errors are counted apart and not
scored. Confidence intervals: percentile bootstrap over tasks.</p>
<nav>{'<a href="#warnings">Warnings</a>' if warnings else ""}<a href="#leaderboard">Leaderboard</a><a href="#modes">Modes</a><a href="#charts">Charts</a>
<a href="#runs">Runs</a><a href="#trajectories">Trajectories</a></nav>
</header>
<main>
{_warnings_html(warnings)}
<section id="leaderboard"><h2>Leaderboard</h2>{_table_html(leaderboard_table(stats))}</section>
<section id="modes"><h2>Environment modes and robustness</h2>{_table_html(modes_table(modes))}</section>
<section id="charts" class="charts"><h2>Charts</h2>{"".join(charts)}</section>
<section id="runs"><h2>Runs</h2>{"".join(run_sections)}</section>
<section id="trajectories"><h2>Trajectories</h2>
<div id="viewer">
<div>
<div id="filters">
<select id="f-run" aria-label="Run"><option value="">All runs</option></select>
<select id="f-category" aria-label="Category"><option value="">All categories</option></select>
<select id="f-outcome" aria-label="Outcome"><option value="">Pass, fail and error</option>
<option value="pass">Passed</option><option value="fail">Failed</option><option value="error">Errors</option></select>
<input id="f-text" type="search" placeholder="Task id, scenario, domain" aria-label="Search">
</div>
<div id="task-count"></div>
<ul id="task-list"></ul>
</div>
<div id="task-detail"><p class="sub">Pick a result on the left to see its trajectory.</p></div>
</div>
</section>
</main>
<script type="application/json" id="occubench-data">{_script_json({"tasks": entries})}</script>
<script>{_JS}</script>
</body>
</html>
"""


def write_html(path: Path, runs: list[Run], stats: list[RunStats] | None = None, *,
               prices: Mapping[str, Price] | None = None, notes: Iterable[str] = ()) -> Path:
    text = html_report(runs, stats, prices=prices, notes=notes)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the HTML report to {path}: {exc.strerror}") from None
    return path
