"""``occubench suites``, ``occubench tasks`` and ``occubench validate``: what the installed suites hold, and whether
their tasks are sound."""

from __future__ import annotations

import argparse
import json

from occubench.cli import run as evaluate
from occubench.errors import ConfigError
from occubench.util.console import rich_console
from occubench.util.text import markup


def _suites(args: argparse.Namespace) -> int:
    from occubench.engine.registry import installed_suites

    if args.worlds_dir:  # the executable worlds of that folder, alone
        from occubench.executable import plugin

        suites = {plugin.NAME: plugin.suite}
        listings = {plugin.NAME: plugin.listing(args.worlds_dir, args.trust_world_code)}
    else:
        suites = installed_suites()
        listings = {name: definition.listing() if definition.listing else ([], None)
                    for name, definition in sorted(suites.items())}
    if args.json:
        print(json.dumps({name: {"description": suites[name].description, "listing": data}
                          for name, (_, data) in listings.items()}, indent=2))  # ASCII: no control byte printed
        return 0
    console = rich_console()
    for name, (tables, _) in listings.items():
        console.print(f"[bold]{markup(name)}[/bold]: {markup(suites[name].description)}")
        for table in tables:
            console.print(table)
    return 0


def _tasks(args: argparse.Namespace) -> int:
    from occubench.core.tables import Table
    from occubench.engine.registry import load_suite
    from occubench.hub.worlds import with_worlds

    as_json = vars(args).pop("json")
    config = with_worlds(evaluate.config_from_args(args))
    evaluate.print_worlds(config.worlds, config.worlds_digest, stderr=as_json)  # stdout carries the JSON
    tasks = load_suite(config.suite).plan(config, rich_console(stderr=True)).tasks
    rows = [{"task_id": t.task_id, "scenario": t.scenario, "category": t.category, "domain": t.domain,
             "difficulty": t.difficulty, "environment": t.env_name} for t in tasks]
    if as_json:
        print(json.dumps(rows, indent=2))  # ASCII: a world's string holds no control byte when printed
        return 0
    keys = ("task_id", "scenario", "category", "environment", "difficulty")
    table = Table(f"{config.suite}: {len(rows)} task(s)", ["Task", "Scenario", "Category", "Environment", "Difficulty"],
                  [[str(row[key]) for key in keys] for row in rows], text_columns=4,
                  optional=("Environment", "Category", "Scenario"))
    rich_console().print(table)
    return 0


def _validate(args: argparse.Namespace) -> int:
    from occubench.core.suite import ValidateOptions
    from occubench.engine.registry import load_suite

    definition = load_suite(args.suite)
    if definition.validate is None:
        raise ConfigError(f"--suite: {definition.name} has no reference solutions to validate")
    given = {"days": args.days, "seed": args.seed, "worlds_dir": args.worlds_dir, "data_dir": args.data_dir}
    if args.worlds:  # the package's worlds, installed (so validated once in the sandbox) and checked as any
        from occubench.config import RunConfig
        from occubench.hub.worlds import with_worlds

        resolved = with_worlds(RunConfig.create({"suite": args.suite, "worlds": args.worlds,
                                                 **{k: v for k, v in given.items() if v is not None}}))
        given = {**given, **{k: v for k, v in resolved.suite_options.items() if k in given}, "seed": resolved.seed}
        evaluate.print_worlds(resolved.worlds, resolved.worlds_digest)
    options = ValidateOptions(**given, trust_world_code=args.trust_world_code,
                              traineebench_config=args.traineebench_config, reference_dir=args.reference_dir)
    return 0 if definition.validate(options, rich_console()) else 1


def add_parser(sub: argparse._SubParsersAction) -> None:
    suites = sub.add_parser("suites", help="list the installed suites and their environments")
    suites.add_argument("--json", action="store_true", help="print JSON instead of a table")
    suites.add_argument("--worlds-dir", metavar="DIR", help="list only the executable worlds in DIR (as `occubench "
                        "synth executable` writes them)")
    evaluate.add_trust_argument(suites)
    suites.set_defaults(func=_suites)

    tasks = sub.add_parser("tasks", help="list the tasks a run would evaluate: ids, scenario, category, difficulty",
                           argument_default=argparse.SUPPRESS)
    tasks.add_argument("--suite", help="occubench (default), executable, workplace, another installed suite or "
                       "package.module:attribute")
    evaluate.add_task_arguments(tasks)
    tasks.add_argument("--seed", type=int, help="--shuffle's seed; workplace: the days' generation seed (default: 0)")
    tasks.add_argument("--days", type=evaluate.positive_int, help="workplace: days to generate (default: 10)")
    tasks.add_argument("--workplace-dir", help="workplace: the days written by `occubench workplace generate`")
    tasks.add_argument("--json", action="store_true", default=False, help="print JSON instead of a table")
    tasks.set_defaults(func=_tasks)

    check = sub.add_parser("validate", help="check that every task of a suite is solvable and not trivially passed")
    check.add_argument("--suite", default="executable",
                       help="a suite with reference solutions: executable (default), workplace, another installed "
                       "suite or package.module:attribute")
    check.add_argument("--days", type=evaluate.positive_int, default=50,
                       help="workplace: days to generate (default: 50)")
    check.add_argument("--seed", type=int, default=0, help="workplace: generation seed (default: 0)")
    check.add_argument("--worlds-dir", metavar="DIR", help="executable: validate the world folders in DIR instead "
                       "of the built-in worlds")
    check.add_argument("--data-dir", metavar="DIR", help="awm: the folder of the AWM-format set to validate "
                       "(default: the copy `occubench data download awm` made)")
    check.add_argument("--traineebench-config", metavar="FILE", help="traineebench: the benchmark config whose days "
                       "to generate and check; a bare name not in the working folder is read from the reference "
                       "files (traineebench_config.json, traineebench_cl_config.json)")
    check.add_argument("--reference-dir", metavar="DIR", help="traineebench: the reference's own files (default: "
                       "the copy `occubench data download traineebench` made)")
    check.add_argument("--worlds", metavar="REF", help="validate the worlds of this world package (oci://HOST/NAME:"
                       "VERSION, git+URL@VERSION, hf://OWNER/NAME@VERSION; see `occubench worlds`)")
    evaluate.add_trust_argument(check)
    check.set_defaults(func=_validate)
