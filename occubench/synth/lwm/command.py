"""``occubench synth lwm``: flags → :class:`LWMSynthConfig` → :func:`synthesize`, then the report."""

from __future__ import annotations

import argparse
import os

from rich.console import Console

from occubench.evaluate import config_from_args, json_object, non_negative_int, positive_int
from occubench.synth.command import add_synth_arguments


def _run(args: argparse.Namespace) -> int:
    from occubench.synth.lwm.config import LWMSynthConfig
    from occubench.synth.lwm.pipeline import synthesize

    config = config_from_args(args, LWMSynthConfig)
    try:
        report = synthesize(config)
    except KeyboardInterrupt:
        # Stage answers and calibration results on disk are whole; the same command resumes from them.
        os._exit(130)
    console = Console(highlight=False)
    report.print(console)
    console.print(f"{report.kept} task(s) written to {config.out} (report: {config.out}/synthesis/report.json); "
                  f"run them with: occubench run --data-dir {config.out} ...")
    return 0 if report.kept else 1


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "lwm", help="LLM-simulated worlds and tasks, calibrated for solvability, in the OccuBench data layout",
        description="From scenarios: sub-topics, a reference document, per sub-topic an environment configuration "
        "and a task with its solution plan and rubric; each task run with and without its plan to prove it "
        "solvable and measure its difficulty, unsolvable ones repaired, trivial ones dropped.")
    models = add_synth_arguments(parser, ("agent", "world", "verifier", "repair"))
    models.add_argument("--agent-model", nargs="+", metavar="MODEL",
                        help="calibration agent(s), strongest first: the last is the weakest (required)")
    models.add_argument("--world-model", help="model that simulates the environments in calibration (required)")
    models.add_argument("--verifier-model", help="model that judges calibration runs (default: the world model)")
    models.add_argument("--repair-model", help="model that diagnoses and repairs unsolvable tasks (default: the "
                        "synth model)")
    for role in ("agent", "world", "verifier", "repair"):
        models.add_argument(f"--{role}-params", type=json_object, help=f"{role} request parameters as a JSON object")
    scenarios = parser.add_argument_group("scenarios (give one of --scenario, --scenarios-file, "
                                          "--generate-scenarios)")
    scenarios.add_argument("--scenario", help='one scenario, e.g. "Pharmacy discharge reconciliation"')
    scenarios.add_argument("--category", help="its industry category (required with --scenario and "
                           "--generate-scenarios), e.g. Healthcare")
    scenarios.add_argument("--domain", help="its domain (default: the category)")
    scenarios.add_argument("--scenarios-file", metavar="FILE", help="JSONL of scenarios, one per line with "
                           "category, domain and task_scenario_name (the task_scenario_all_pool.jsonl shape)")
    scenarios.add_argument("--generate-scenarios", type=positive_int, metavar="N",
                           help="make up N scenarios for --category (names de-duplicated)")
    scenarios.add_argument("--tasks-per-scenario", type=int, help="non-overlapping sub-topics, hence tasks, per "
                           "scenario, at most 16 (default: 4)")
    calibration = parser.add_argument_group("calibration and repair")
    calibration.add_argument("--runs", type=positive_int, help="runs per task and agent, with the plan and again "
                             "without it (default: 3)")
    calibration.add_argument("--solvable-threshold", type=float, help="solvable when the best agent's pass rate "
                             "with the plan is at least this (default: 0.67)")
    calibration.add_argument("--trivial-threshold", type=float, help="trivial, and dropped, when the weakest "
                             "agent's pass rate without the plan is at least this (default: 1.0)")
    calibration.add_argument("--easy-threshold", type=float, help="difficulty 1 when the mean pass rate without "
                             "the plan is at least this (default: 0.67)")
    calibration.add_argument("--hard-threshold", type=float, help="difficulty 3 when it is below this, 2 between "
                             "(default: 0.34)")
    calibration.add_argument("--repair-rounds", type=non_negative_int, help="repairs of an unsolvable task before it "
                             "is dropped (default: 2)")
    calibration.add_argument("--max-steps", type=positive_int, help="agent turns per calibration run (default: 30)")
    calibration.add_argument("--num-votes", type=positive_int, help="judge votes per calibration run (default: 3)")
    calibration.add_argument("--date", help="date in the agent's prompt, YYYY-MM-DD (default: today)")
    parser.set_defaults(func=_run)
