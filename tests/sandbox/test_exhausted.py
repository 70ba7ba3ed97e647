"""An executable world that fills its sandbox's disk inside a tool call: the call is a WorldError (an episode's
environment error: not scored, retried by the next run), never a tool_failed observation the agent is judged on,
and its worker is replaced."""

from __future__ import annotations

from pathlib import Path

import pytest

from occubench.errors import WorldError
from occubench.executable.isolated import load_isolated
from occubench.sandbox import Provider
from tests.sandbox.corpus import Attack, make_corpus_world

#: 16 MB files in the worker's /tmp until the disk (64 MB) or the file size limit refuses one.
FILL = Attack('import os\n'
              '    for number in range(100):\n'
              '        with open(f"/tmp/fill{number}", "wb") as out:\n'
              '            out.write(b"x" * (16 << 20))\n')


def test_a_world_out_of_disk_is_an_environment_error_and_its_worker_is_replaced(tmp_path: Path,
                                                                                sandbox: Provider) -> None:
    folder = make_corpus_world(tmp_path, FILL, mark=tmp_path / "m", port=9, harness=0)
    [world] = load_isolated(tmp_path, [folder], sandbox, service="occubench.testing.unchecked")
    env = world.environment()
    with pytest.raises(WorldError, match=r"tool get_claim: exhausted: .*the world ran out of disk space"):
        env.call("get_claim", {"claim_id": "CLM-1004"})
    env.close()
    fresh = world.environment()  # a new worker, its /tmp empty again
    assert "adjusters" in fresh.call("list_adjusters", {})
    fresh.close()

