"""Reports over run directories: statistics with confidence intervals, agreement between groups of runs (say, two
simulators), charts, and a self-contained HTML report with a trajectory viewer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.util.lazy import lazy_exports

#: Names load on first use: matplotlib, which only charts need, costs seconds to import.
_EXPORTS = {
    "bar_chart": "occubench.report.charts", "difficulty_chart": "occubench.report.charts",
    "modes_chart": "occubench.report.charts", "radar_chart": "occubench.report.charts",
    "series_labels": "occubench.report.charts", "world_label": "occubench.report.charts",
    "PairAgreement": "occubench.report.compare", "compare_groups": "occubench.report.compare",
    "group_rates": "occubench.report.compare",
    "PairedComparison": "occubench.report.paired", "PairedSetting": "occubench.report.paired",
    "TrialsNeeded": "occubench.report.paired", "mcnemar_p": "occubench.report.paired",
    "paired_comparisons": "occubench.report.paired", "trials_needed": "occubench.report.paired",
    "html_report": "occubench.report.html", "write_html": "occubench.report.html",
    "Run": "occubench.report.runs", "apart": "occubench.report.runs", "load_run": "occubench.report.runs",
    "load_run_dirs": "occubench.report.runs",
    "Count": "occubench.report.stats", "Interval": "occubench.report.stats", "PassK": "occubench.report.stats",
    "RunStats": "occubench.report.stats", "Unanimity": "occubench.report.stats",
    "breakdown": "occubench.report.stats", "completion_ci": "occubench.report.stats",
    "pass_at_k": "occubench.report.stats", "pass_hat_k": "occubench.report.stats", "pass_k": "occubench.report.stats",
    "run_stats": "occubench.report.stats", "trial_counts": "occubench.report.stats",
    "unanimity": "occubench.report.stats",
    "Table": "occubench.report.tables", "compare_json": "occubench.report.tables",
    "compare_tables": "occubench.report.tables", "leaderboard": "occubench.report.tables",
    "leaderboard_table": "occubench.report.tables", "markdown_report": "occubench.report.tables",
    "modes_table": "occubench.report.tables", "overview_charts": "occubench.report.tables",
    "overview_tables": "occubench.report.tables",
    "paired_json": "occubench.report.tables",
    "paired_table": "occubench.report.tables", "report_csv": "occubench.report.tables",
    "report_json": "occubench.report.tables", "report_warnings": "occubench.report.tables",
    "run_tables": "occubench.report.tables",
    "suite_tables": "occubench.report.tables", "to_markdown": "occubench.report.tables",
}

__all__ = [
    "Count", "Interval", "PairAgreement", "PairedComparison", "PairedSetting", "PassK", "Run", "RunStats", "Table",
    "TrialsNeeded", "Unanimity", "apart", "bar_chart", "breakdown", "compare_groups", "compare_json", "compare_tables",
    "completion_ci", "difficulty_chart", "group_rates", "html_report", "leaderboard", "leaderboard_table", "load_run",
    "load_run_dirs", "markdown_report", "mcnemar_p", "modes_chart", "modes_table", "overview_charts", "overview_tables",
    "paired_comparisons", "paired_json", "paired_table", "pass_at_k", "pass_hat_k", "pass_k", "radar_chart",
    "report_csv", "report_json", "report_warnings", "run_stats", "run_tables", "series_labels", "suite_tables",
    "to_markdown", "trial_counts", "trials_needed", "unanimity", "world_label", "write_html"
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from occubench.report.charts import (
        bar_chart,
        difficulty_chart,
        modes_chart,
        radar_chart,
        series_labels,
        world_label,
    )
    from occubench.report.compare import PairAgreement, compare_groups, group_rates
    from occubench.report.html import html_report, write_html
    from occubench.report.paired import (
        PairedComparison,
        PairedSetting,
        TrialsNeeded,
        mcnemar_p,
        paired_comparisons,
        trials_needed,
    )
    from occubench.report.runs import Run, apart, load_run, load_run_dirs
    from occubench.report.stats import (
        Count,
        Interval,
        PassK,
        RunStats,
        Unanimity,
        breakdown,
        completion_ci,
        pass_at_k,
        pass_hat_k,
        pass_k,
        run_stats,
        trial_counts,
        unanimity,
    )
    from occubench.report.tables import (
        Table,
        compare_json,
        compare_tables,
        leaderboard,
        leaderboard_table,
        markdown_report,
        modes_table,
        overview_charts,
        overview_tables,
        paired_json,
        paired_table,
        report_csv,
        report_json,
        report_warnings,
        run_tables,
        suite_tables,
        to_markdown,
    )
