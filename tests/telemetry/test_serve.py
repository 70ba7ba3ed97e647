"""An outside agent's episode joins the agent's own trace: the ``traceparent`` of the request that started it on
the OpenEnv server is the episode span's parent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.openenv.test_peer import records, serving
from tests.openenv.test_server import drive, opened
from tests.telemetry.collector import collector

TRACE, PARENT = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


def test_an_openenv_client_s_traceparent_is_the_episode_s_parent(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with collector() as found:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", found.endpoint)
        monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")
        with serving(["--suite", "executable", "--limit", "1", "--output-dir", str(tmp_path / "runs"),
                      "--run-name", "r"], tmp_path / "serve.log") as (url, process):
            async def play(http: aiohttp.ClientSession) -> Any:
                http.headers["traceparent"] = f"00-{TRACE}-{PARENT}-01"
                socket = await opened(http, url)
                await socket.reset()
                return await socket.call("submit", answer="done")

            drive(url, play)
            assert process.wait(timeout=120) in (0, 1)
        [[record]] = [list(records(tmp_path / "runs" / "r").values())]
        [episode] = [span for span in found.spans if span.name.startswith("episode ")]
    assert (episode.trace, episode.parent) == (TRACE, PARENT)
    assert episode.attributes["occubench.task"] == str(record["task_id"])
