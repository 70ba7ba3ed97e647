"""``occubench synth simulated`` and ``occubench synth executable``: flags → the track's settings → its ``synthesize``,
then the report."""

from __future__ import annotations

import argparse
import os

from occubench.cli.run import (
    add_model_call_arguments,
    add_trust_argument,
    config_from_args,
    json_object,
    non_negative_int,
    positive_int,
)
from occubench.util.console import rich_console

#: ``occubench synth simulated``'s calibration thresholds (``--<name>-threshold``), each a pass rate.
_SIMULATED_THRESHOLDS = (
    ("solvable", "solvable when the best agent's pass rate with the plan is at least this (default: 0.67)"),
    ("trivial", "trivial, and dropped, when the weakest agent's pass rate without the plan is at least this "
     "(default: 1.0)"),
    ("easy", "difficulty 1 when the mean pass rate without the plan is at least this (default: 0.67)"),
    ("hard", "difficulty 3 when it is below this, 2 between (default: 0.34)"),
)


def _simulated(args: argparse.Namespace) -> int:
    from occubench.synth.simulated.config import SimulatedSynthConfig
    from occubench.synth.simulated.pipeline import synthesize

    config = config_from_args(args, SimulatedSynthConfig)
    try:
        report = synthesize(config)
    except KeyboardInterrupt:
        # Stage answers and calibration results on disk are whole; the same command resumes from them.
        os._exit(130)
    console = rich_console()
    report.print(console)
    console.print(f"{report.kept} task(s) written to {config.out} (report: {config.out}/synthesis/report.json); "
                  f"run them with: occubench run --data-dir {config.out} ...")
    return 0 if report.kept else 1


def _executable(args: argparse.Namespace) -> int:
    from occubench.synth.executable.config import ExecutableSynthConfig
    from occubench.synth.executable.pipeline import synthesize

    config = config_from_args(args, ExecutableSynthConfig)
    console = rich_console()
    try:
        report = synthesize(config, console)
    except KeyboardInterrupt:
        # Every accepted answer on disk is whole; the same command resumes from them.
        os._exit(130)
    report.print(console)
    console.print(f"{len(report.worlds)} world(s) written to {config.out} (report: {config.out}/synthesis/"
                  f"report.json); check them with: occubench validate --worlds-dir {config.out}")
    return 0 if len(report.worlds) == report.requested else 1


def _add_synth_arguments(parser: argparse.ArgumentParser, roles: tuple[str, ...] = ()) -> argparse._ArgumentGroup:
    """The flags both tracks share; ``roles`` are the track's roles besides ``synth`` (their ``--<role>-base-url``
    and ``--<role>-api-key``). Returns the models group for the track's model flags. As for ``occubench run``, a
    flag not given is absent, so a ``--config`` file's value stands; defaults live in the track's settings class."""
    parser.argument_default = argparse.SUPPRESS
    parser.add_argument("--config", metavar="FILE", help="read the settings from a TOML file (keys as the flags "
                        "without dashes); flags given here win over it")
    parser.add_argument("--out", help="folder to write into (required); the synthesis keeps its work, report and "
                        "lock in <out>/synthesis/, and running the same command again resumes")
    models = parser.add_argument_group("models and endpoints")
    models.add_argument("--synth-model", help="model that writes every stage (required)")
    models.add_argument("--synth-params", type=json_object,
                        help="synthesis request parameters as a JSON object, e.g. '{\"temperature\": 0.7}'")
    models.add_argument("--api-key", help="API key for every role (default: $OPENAI_API_KEY)")
    models.add_argument("--base-url", help="OpenAI-compatible endpoint for every role (default: $OPENAI_BASE_URL, "
                        "else OpenAI)")
    for role in ("synth", *roles):
        models.add_argument(f"--{role}-base-url", help=f"endpoint for the {role} role (default: --base-url)")
        models.add_argument(f"--{role}-api-key", help=f"API key for the {role} role (default: --api-key)")
    add_model_call_arguments(parser.add_argument_group("requests"))
    return models


def _add_simulated_parser(tracks: argparse._SubParsersAction) -> None:
    parser = tracks.add_parser(
        "simulated", help="LLM-simulated worlds and tasks, calibrated for solvability, in the OccuBench data layout",
        description="From scenarios: sub-topics, a reference document, per sub-topic an environment configuration "
        "and a task with its solution plan and rubric; each task run with and without its plan to prove it "
        "solvable and measure its difficulty, unsolvable ones repaired, trivial ones dropped.")
    models = _add_synth_arguments(parser, ("agent", "world", "verifier", "repair"))
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
    for name, text in _SIMULATED_THRESHOLDS:
        calibration.add_argument(f"--{name}-threshold", type=float, help=text)
    calibration.add_argument("--repair-rounds", type=non_negative_int, help="repairs of an unsolvable task before it "
                             "is dropped (default: 2)")
    calibration.add_argument("--max-steps", type=positive_int, help="agent turns per calibration run (default: 30)")
    twin = parser.add_argument_group("twin gate (scenarios that also have an executable world)")
    twin.add_argument("--min-agreement", type=float, metavar="SHARE", help="keep a world made for such a scenario "
                      "only if it answers that world's reference calls as the world does at least this often "
                      "(default: 0.9)")
    twin.add_argument("--worlds-dir", metavar="DIR", help="the executable worlds to hold scenarios to (default: the "
                      "built-in ones)")
    add_trust_argument(twin)
    calibration.add_argument("--num-votes", type=positive_int, help="judge votes per calibration run (default: 3)")
    calibration.add_argument("--date", help="date in the agent's prompt, YYYY-MM-DD (default: today)")
    parser.set_defaults(func=_simulated)


def _add_executable_parser(tracks: argparse._SubParsersAction) -> None:
    parser = tracks.add_parser(
        "executable", help="executable SQLite worlds from scenarios, every stage executed and corrected",
        description="From a scenario line: tasks, a SQLite schema, seed rows, tools as Python functions and per task "
        "code checks with a reference and a wrong solution. Every stage's answer is executed in a sandbox (tables "
        "created, rows inserted, tools called, checks run on the initial database and after each solution) and "
        "its errors fed back for up to 4 correction rounds; what still fails is dropped with its reason. Each "
        "world is written to <out>/<name>/, in the shape of the built-in worlds (load it with --worlds-dir).")
    _add_synth_arguments(parser)
    worlds = parser.add_argument_group("worlds")
    worlds.add_argument("--scenario", action="append", help='a scenario, e.g. "Insurance claims adjudication" '
                        "(required; repeat for several)")
    worlds.add_argument("--category", help="one of the ten categories, name or abbreviation, for every world "
                        "(default: the model picks)")
    worlds.add_argument("--domain", help="the domain of every world (default: the model names it)")
    worlds.add_argument("--worlds", type=int, help="worlds made of each scenario, as different variants (default: 1)")
    worlds.add_argument("--tasks", type=int, help="tasks per world, at least 3 (default: 3); a world is kept with "
                        "at least 3 valid tasks covering difficulties 1, 2 and 3")
    add_trust_argument(worlds)
    parser.set_defaults(func=_executable)


def add_parser(sub: argparse._SubParsersAction) -> None:
    synth = sub.add_parser("synth", help="make new worlds and tasks from scenarios: simulated (LLM-simulated, "
                           "calibrated for solvability) or executable (SQLite, every stage executed)")
    tracks = synth.add_subparsers(dest="synth_command", required=True, metavar="TRACK")
    _add_simulated_parser(tracks)
    _add_executable_parser(tracks)
