"""The trajectory viewer both HTML reports share (``occubench report --html`` and ``occubench view``): what it shows
of a result, its page fragment, and its script and stylesheet (``viewer.js``, ``viewer.css`` beside this module).

Every piece of model output reaches the page as JSON and is set as text by the script, never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import Any

from occubench.core.results import Result
from occubench.report.robustness import suite_of
from occubench.report.tables import category_label

#: What the viewer shows of a result beyond its summary.
_RECORD_FIELDS = ("agent_model", "world_model", "verifier_model", "npc_model", "env_mode", "fault_mode", "seed",
                  "status", "error", "final_answer", "stop_reason", "feedback", "votes", "usage", "duration_s", "steps",
                  "messages", "fault_events", "fault_windows", "env_info", "verdict_details", "context",
                  "agent_output", "live_hints")

#: The viewer's markup: filters, the list of results and the open result, filled in by viewer.js.
VIEWER_HTML = """<section id="trajectories"><h2>Trajectories</h2>
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
</section>"""


def asset(name: str) -> str:
    """``viewer.js`` or ``viewer.css``."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def outcome(result: Result) -> str:
    if not result.ok:
        return "error"
    return "pass" if result.passed else "fail"


def summary(run_index: int, run: str, trials: int, result: Result) -> dict[str, Any]:
    """What the list of results shows and filters on; its key is also the result's URL fragment (``#task=<key>``)."""
    category = result.category or "?"
    return {
        "key": f"{run_index}/{result.task_id}/{result.trial}", "run_index": run_index, "run": run,
        "task_id": result.task_id, "trial": result.trial, "trials": trials, "outcome": outcome(result),
        "suite": suite_of(result), "scenario": result.task_scenario_name, "category": category,
        "category_label": category_label(category), "domain": result.domain, "difficulty": result.difficulty_level,
    }


def entry(run_index: int, run: str, trials: int, result: Result) -> dict[str, Any]:
    """Everything the viewer shows of one result: its summary and its record. ``context`` holds the ids of the
    run's context values (see :func:`resolve_context`)."""
    record = result.to_dict()
    return {**summary(run_index, run, trials, result), **{name: record.get(name) for name in _RECORD_FIELDS},
            # Results of the original harness have only the rendered text.
            "trajectory": "" if result.steps else result.trajectory}


def resolve_context(ids: Mapping[str, str], values: Mapping[str, Any]) -> dict[str, Any]:
    """A result's context ids replaced by their values; an id missing from ``context.jsonl`` becomes None."""
    return {kind: values.get(context_id) for kind, context_id in ids.items()}
