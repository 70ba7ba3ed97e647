"""``occubench synth <track>``: the flags both tracks share; each track's ``command`` module adds its own."""

from __future__ import annotations

import argparse

from occubench.evaluate import add_model_call_arguments, json_object


def add_synth_arguments(parser: argparse.ArgumentParser, roles: tuple[str, ...] = ()) -> argparse._ArgumentGroup:
    """The shared flags; ``roles`` are the track's roles besides ``synth`` (their ``--<role>-base-url`` and
    ``--<role>-api-key``). Returns the models group for the track's model flags. As for ``occubench run``, a flag
    not given is absent, so a ``--config`` file's value stands; defaults live in the track's settings class."""
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
