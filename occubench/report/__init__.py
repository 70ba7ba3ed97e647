"""Reports over run directories: statistics with confidence intervals, agreement between groups of runs (say, two
simulators), charts, and a self-contained HTML report with a trajectory viewer."""

from occubench.report.charts import difficulty_chart, modes_chart, radar_chart
from occubench.report.compare import PairAgreement, compare_groups, group_rates
from occubench.report.html import html_report, write_html
from occubench.report.runs import Run, load_run, load_run_dirs
from occubench.report.stats import (Count, Interval, PassK, RunStats, Unanimity, breakdown, completion_ci, pass_at_k,
                                    pass_hat_k, pass_k, run_stats, trial_counts, unanimity)
from occubench.report.tables import (Table, compare_json, compare_tables, leaderboard, leaderboard_table, markdown_report,
                                     modes_table, report_csv, report_json, run_tables, suite_tables, to_markdown)

__all__ = [
    "Count", "Interval", "PairAgreement", "PassK", "Run", "RunStats", "Table", "Unanimity", "breakdown",
    "compare_groups", "compare_json", "compare_tables", "completion_ci", "difficulty_chart", "group_rates", "html_report",
    "leaderboard", "leaderboard_table", "load_run", "load_run_dirs", "markdown_report",
    "modes_chart", "modes_table", "pass_at_k", "pass_hat_k", "pass_k", "radar_chart", "report_csv", "report_json",
    "run_stats", "run_tables", "suite_tables", "to_markdown", "trial_counts", "unanimity", "write_html",
]
