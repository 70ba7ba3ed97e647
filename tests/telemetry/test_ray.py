"""Traces of a run on Ray: the workers take the run's OpenTelemetry settings, and each episode is one trace,
with its model and tool spans, whichever worker ran it."""

from __future__ import annotations

from pathlib import Path

import pytest

from occubench import telemetry
from occubench.cli import run as evaluate
from occubench.store import read_results
from occubench.testing import MockLLMServer
from tests.telemetry.collector import collector
from tests.telemetry.test_spans import TASKS, agent

pytestmark = pytest.mark.slow  # starts a Ray cluster


def test_each_episode_run_by_a_ray_worker_is_one_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with collector() as found:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", found.endpoint)
        monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")
        with MockLLMServer(agent) as server:
            assert evaluate.main(["--suite", "executable", "--output-dir", str(tmp_path), "--run-name", "r",
                                  "--agent-model", "m", "--base-url", server.base_url, "--task-ids", TASKS,
                                  "--trials", "2", "--executor", "ray", "--ray-workers", "2"]) in (0, 1)
        monkeypatch.undo()
        telemetry.configure(False)
    results = read_results(tmp_path / "r" / "results.jsonl")
    roots = found.roots()
    assert len(results) == 4 and len(roots) == 4 and len({root.trace for root in roots}) == 4
    assert {(root.attributes["occubench.task"], root.attributes["occubench.trial"]) for root in roots} == \
        {(str(result["task_id"]), result["trial"]) for result in results}
    for root in roots:
        assert root.attributes["occubench.run"] == "r"
        names = {span.attributes.get("gen_ai.operation.name") for span in found.in_trace(root.trace)}
        assert {"chat", "execute_tool"} <= names
