"""Charts as PNG bytes, drawn with matplotlib's Agg renderer on a bare Figure: no display, no pyplot global state."""

from __future__ import annotations

import io
import math
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import cast

from matplotlib import rc_context
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.projections.polar import PolarAxes
from matplotlib.ticker import PercentFormatter

from occubench.config import CLEAN_LEVEL, FAULT_LEVELS
from occubench.core.results import Result
from occubench.core.tables import Chart
from occubench.core.task import CATEGORY_ABBREVIATIONS
from occubench.report.robustness import UNKNOWN_SUITE, robustness_table, suite_of, with_guidance
from occubench.report.stats import breakdown

#: Labels are model names, run names and categories, drawn as written: without this, a name with two "$" is
#: typeset as mathtext (or fails to parse, failing the report). Text objects read it when made, so the whole chart
#: function runs under it.
_LITERAL = rc_context({"text.parse_math": False})
#: A character the font lacks (a control character in a hostile name among them) is drawn as a box; matplotlib's
#: warning about it would print the character itself to the terminal.
warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)


def _png(figure: Figure) -> bytes:
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    # No Software/date metadata: the same records give the same bytes.
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    return buffer.getvalue()


#: A chart series: (suite, agent model, world model or "-"), as the robustness rows group results; the agent names
#: its workplace guidance tier when it has one (:func:`occubench.report.robustness.with_guidance`).
SeriesKey = tuple[str, str, str]


def world_label(world_model: str | None, suite: str) -> str:
    """What a chart calls a world: its simulator model when it is simulated, else its suite (``executable``,
    ``workplace``, a third-party suite's name); ``unknown world`` for a result of an older file with neither."""
    if world_model and world_model != "-":
        return world_model
    return "unknown world" if suite == UNKNOWN_SUITE else suite


def series_labels(keys: Iterable[SeriesKey]) -> dict[SeriesKey, str]:
    """A distinct label per (suite, agent, world) key: the agent alone when every key has the same world, else
    ``agent (world)`` (see :func:`world_label`), with the suite added when two keys would still share a label
    (one simulator under two suites)."""
    keys = sorted(set(keys))
    several_worlds = len({(suite, world) for suite, _, world in keys}) > 1
    labels = {k: f"{k[1]} ({world_label(k[2], k[0])})" if several_worlds else k[1] for k in keys}
    shared = Counter(labels.values())
    return {k: f"{k[1]} ({world_label(k[2], k[0])}, {k[0]})" if shared[label] > 1 else label
            for k, label in labels.items()}


def _series(results: Iterable[Result]) -> dict[str, list[Result]]:
    """Results per (suite, agent model and guidance tier, world model), by label (:func:`series_labels`)."""
    by_key: dict[SeriesKey, list[Result]] = defaultdict(list)
    for r in results:
        by_key[(suite_of(r), with_guidance(str(r.agent_model), r.guidance), r.world_model or "-")].append(r)
    labels = series_labels(by_key)
    return dict(sorted((labels[key], records) for key, records in by_key.items()))


def _nan_if_none(rate: float | None) -> float:
    return math.nan if rate is None else rate  # matplotlib leaves NaN undrawn: no bar, a gap in a line


def _percent_axis(axis: Axis) -> None:
    axis.set_major_formatter(PercentFormatter(1.0))


def _clean(records: Iterable[Result]) -> tuple[list[Result], str]:
    """The E0 results when there are any, else all, and the title suffix that says which: faults would blur
    a profile of the agents themselves."""
    records = list(records)
    clean = [r for r in records if r.env_mode == CLEAN_LEVEL]
    return (clean, " (E0)") if clean and len(clean) < len(records) else (records, "")


def category_rates(results: list[Result]) -> list[float]:
    """Completion per industry category, in :data:`CATEGORY_ABBREVIATIONS`' order; NaN (drawn as a gap, never as 0 %)
    for a category with no evaluated task."""
    counts = breakdown(results, "category")
    return [_nan_if_none(counts[c].rate) if c in counts else math.nan for c in CATEGORY_ABBREVIATIONS]


@_LITERAL
def radar_chart(records: Iterable[Result]) -> bytes:
    """Industry profile: completion per category (10 axes), one polygon per agent model, over the clean (E0)
    results when there are any. A category without results leaves a gap; 0 % is the inner ring."""
    clean, scope = _clean(records)
    categories = list(CATEGORY_ABBREVIATIONS)
    angles = [2 * math.pi * i / len(categories) for i in range(len(categories))]
    figure = Figure(figsize=(7, 6.5))
    axes = cast(PolarAxes, figure.add_subplot(projection="polar"))
    axes.set_theta_zero_location("N")
    axes.set_theta_direction(-1)  # clockwise from the top, in the categories' order
    for label, series in _series(clean).items():
        values = category_rates(series)
        # The fewer categories a series has, the higher it is drawn: its lone points are not hidden under a polygon.
        # Unclipped, a point on the 0 % ring shows whole.
        axes.plot(angles + angles[:1], values + values[:1], marker="o", linewidth=1.5, label=label, clip_on=False,
                  zorder=2 + sum(map(math.isnan, values)) / len(values))
        if not any(math.isnan(v) for v in values):
            axes.fill(angles, values, alpha=0.08)
    axes.set_xticks(angles, [CATEGORY_ABBREVIATIONS[c] for c in categories])
    axes.set_ylim(0, 1)
    # A hole in the middle: 0 % is a ring, so a failed category's point stays on its own spoke instead of merging
    # with every other category's at the centre (where a reader would take it for no data).
    axes.set_rorigin(-0.15)
    axes.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    axes.set_rlabel_position(180 / len(categories))  # between the first two axes, clear of their labels
    _percent_axis(axes.yaxis)
    axes.set_title("Completion by industry" + scope, pad=18)
    axes.legend(loc="upper left", bbox_to_anchor=(1.08, 1.05), fontsize="small")
    return _png(figure)


@_LITERAL
def _grouped_bars(title: str, groups: list[str], bars: dict[str, list[float | None]], legend_title: str,
                  y_label: str = "Completion") -> bytes:
    figure = Figure(figsize=(max(6.0, 1.2 * len(groups) * max(1, len(bars)) / 2), 4.5))
    axes = figure.add_subplot()
    width = 0.8 / max(1, len(bars))
    for i, (label, values) in enumerate(bars.items()):
        xs = [g + (i - (len(bars) - 1) / 2) * width for g in range(len(groups))]
        axes.bar(xs, [_nan_if_none(v) for v in values], width=width, label=label)
    axes.set_xticks(range(len(groups)), groups, rotation=20 if max(map(len, groups), default=0) > 12 else 0)
    axes.set_ylim(0, 1)
    _percent_axis(axes.yaxis)
    axes.set_ylabel(y_label)
    axes.set_title(title)
    axes.grid(axis="y", alpha=0.3)
    axes.legend(title=legend_title, fontsize="small")
    figure.tight_layout()
    return _png(figure)


def modes_chart(records: Iterable[Result]) -> bytes:
    """Completion at each fault level side by side for each agent (and world: see :func:`series_labels`)."""
    rows = robustness_table(records)
    keys = [(r.suite, with_guidance(r.agent_model, r.guidance), r.world_model) for r in rows]
    labels = series_labels(keys)
    groups = [labels[key] for key in keys]
    return _grouped_bars("Completion by fault level", groups,
                         {level: [r.rates[level] for r in rows] for level in FAULT_LEVELS}, "Fault level")


def difficulty_chart(records: Iterable[Result]) -> bytes:
    """Completion at each difficulty level, one bar per agent model, over the clean (E0) results when there are
    any."""
    clean, scope = _clean(records)
    series = {label: breakdown(rs, "difficulty_level") for label, rs in _series(clean).items()}
    levels = sorted({level for counts in series.values() for level in counts},
                    key=lambda k: (not k.isdigit(), int(k) if k.isdigit() else 0, k))
    return _grouped_bars("Completion by difficulty" + scope, [f"Level {level}" for level in levels],
                         {label: [counts[lv].rate if lv in counts else None for lv in levels]
                          for label, counts in series.items()}, "Agent")


def bar_chart(chart: Chart) -> bytes:
    """A suite's chart (:class:`occubench.core.tables.Chart`) as grouped bars."""
    return _grouped_bars(chart.title, chart.groups, chart.series, chart.legend_title, chart.y_label)
