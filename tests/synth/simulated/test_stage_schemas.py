"""A synthesized simulated world's tool schemas are ones the harness checks arguments against (issue 43, after
finding 3): a schema the synthesis model wrote with a pattern RE2 cannot run (a backreference) is asked again, and no
world written keeps it, since a world's tool with such a schema would have its arguments go unchecked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console

from occubench.core.tools import schema_problem
from occubench.synth.simulated.config import SimulatedSynthConfig
from occubench.synth.simulated.pipeline import synthesize
from occubench.testing import MockLLMServer
from occubench.testing.server import make_scripted_responder

BACKREFERENCE = {"type": "object", "properties": {"record_id": {"type": "string", "pattern": "^(R)-\\1$"}}}


def first_environment_with(parameters: dict[str, Any]) -> Any:
    """The scripted synthesis, except that the first environment it is asked for gives its second tool
    ``parameters``, as a model might write them."""
    scripted = make_scripted_responder(synth={})

    def respond(request: dict[str, Any], index: int) -> Any:
        reply = scripted(request, index)
        messages = request["messages"]
        if not (messages[0]["content"].startswith("Stage: environment") and len(messages) == 2):
            return reply
        answer = json.loads(str(reply).removeprefix("<output>").removesuffix("</output>"))
        answer["action_set_definitions"][1]["parameters"] = parameters
        return f"<output>{json.dumps(answer)}</output>"

    return respond


def test_a_schema_with_a_pattern_re2_cannot_run_is_asked_again_and_written_nowhere(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with MockLLMServer(first_environment_with(BACKREFERENCE)) as server:
        report = synthesize(SimulatedSynthConfig.create({
            "scenario": "Pharmacy discharge reconciliation", "category": "Healthcare", "out": str(out),
            "synth_model": "synth-m", "agent_model": ["agent-m"], "world_model": "world-m",
            "base_url": server.base_url, "api_key": "k", "tasks_per_scenario": 1, "runs": 1, "date": "2026-11-23"}),
            console=Console(quiet=True))
    assert (report.stages["environment"]["asked"], report.stages["environment"]["reasked"]) == (1, 1)
    configs = [json.loads(path.read_text(encoding="utf-8")) for path in (out / "world_model_configs").glob("*.json")]
    assert configs and report.kept == 1
    schemas = [tool["parameters"] for config in configs for tool in config["action_set_definitions"]]
    assert BACKREFERENCE not in schemas and all(schema_problem(schema) is None for schema in schemas)
