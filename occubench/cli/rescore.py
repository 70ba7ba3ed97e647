"""``occubench rescore RUN_DIR --verifier-model M``: judge a run's saved episodes again, with another judge.

The new run has the source run's settings (suite, data, tasks, modes, agent), so its results line up with the
source's task by task, and ``occubench compare SOURCE NEW --by verifier_model`` gives the two judges' agreement.
No agent or simulator request is made: the episodes are played back (see :class:`occubench.core.agent.ReplayAgent`).
It is a run like any other: it resumes, retries errors, and takes ``--cache`` and ``--replay``.
"""

from __future__ import annotations

import argparse

from occubench.cli import run as evaluate


def _command(args: argparse.Namespace) -> int:
    from occubench.engine.rescore import rescore_config
    from occubench.engine.run import run

    settings = {key: value for key, value in vars(args).items() if key not in ("func", "command", "run_dir")}
    return evaluate.print_run(run(rescore_config(args.run_dir, **settings)))


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("rescore", help="judge a run's saved episodes again with another verifier model, into a "
                            "new run directory (no agent or simulator request)", description=__doc__,
                            argument_default=argparse.SUPPRESS)
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run directory whose episodes to judge again")
    judge = parser.add_argument_group("the new judge")
    judge.add_argument("--verifier-model", required=True, help="the model that judges the episodes again")
    judge.add_argument("--verifier-base-url", help="its endpoint (default: --base-url)")
    judge.add_argument("--verifier-api-key", help="its API key (default: --api-key)")
    judge.add_argument("--api-key", help="API key (default: $OPENAI_API_KEY)")
    judge.add_argument("--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL, else OpenAI)")
    judge.add_argument("--verifier-params", type=evaluate.json_object, help="its request parameters as a JSON object")
    judge.add_argument("--num-votes", type=int, help="votes per episode (default: 3)")
    run = parser.add_argument_group("run")
    run.add_argument("--output-dir", help="where the new run directory goes (default: beside RUN_DIR)")
    run.add_argument("--run-name", help="the new run directory's name (default: <source>__rescored_<model>__<hash>)")
    run.add_argument("--force", action="store_true", help="add to a run directory made with another configuration")
    evaluate.add_model_call_arguments(run)
    parser.set_defaults(func=_command)
