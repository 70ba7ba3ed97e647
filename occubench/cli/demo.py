"""``occubench demo``: a real evaluation end to end with no key and no network, as a first command.

Two runs: the executable worlds with their reference solutions (code checks decide, in sandbox workers where the
machine has them), and the OccuBench-format sample shipped with the package (3 tasks in 2 simulated worlds) with the
project's own mock endpoint, started on 127.0.0.1, as agent, world model and judge. Then the leaderboard of the two
and an HTML report. Run again, it resumes: nothing is evaluated twice.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from occubench.config import RunConfig
from occubench.util.console import rich_console

REPORT = "demo-report.html"


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("demo", help="a first evaluation, offline and without a key: the executable worlds with "
                            "their reference solutions, a simulated-world sample with the project's mock endpoint, "
                            "the leaderboard and an HTML report", description=__doc__)
    parser.add_argument("--output-dir", default="results", metavar="DIR", help="where the runs and demo-report.html "
                        "go (default: results)")
    parser.set_defaults(func=_command)


def _command(args: argparse.Namespace) -> int:
    return demo(args.output_dir)


def demo(output_dir: str) -> int:
    from occubench import report
    from occubench.engine.run import run
    from occubench.simulated.data import SAMPLE  # the data module's downloader loads only for this command
    from occubench.testing import MockLLMServer

    sample = {"eval_data": str(SAMPLE / "tasks.jsonl"), "scenario_pool": str(SAMPLE / "scenarios.jsonl"),
              "config_dir": str(SAMPLE / "worlds")}
    console = rich_console(stderr=True)
    executable = RunConfig.create({"suite": "executable", "agent": "reference", "output_dir": output_dir})
    summaries = [run(executable, console=console)]
    with MockLLMServer() as server:
        console.print(f"The project's mock endpoint answers at {server.base_url} as agent, world model and judge")
        simulated = RunConfig.create({"suite": "occubench", "agent_model": "mock-agent", "world_model": "mock-world",
                                      "base_url": server.base_url, "api_key": "no-key-needed",
                                      **sample, "output_dir": output_dir})
        summaries.append(run(simulated, console=console))
    runs = [report.Run(s.run_name, s.run_dir, s.results) for s in summaries]
    stats = [report.run_stats(r) for r in runs]
    rich_console().print(report.leaderboard_table(stats))
    html = Path(output_dir) / REPORT
    report.write_html(html, runs, stats)
    console.print(f"HTML report written to {html} (open it in a browser; `occubench view` follows runs live)")
    return 0 if all(not s.errors for s in summaries) else 1
