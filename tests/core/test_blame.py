"""The one rule of who is to blame, in every kind of world run in the harness's process (the sandboxed kinds are in
tests/sandbox/test_exhausted.py and tests/awm/test_exhausted.py): a world that runs out of a resource of its own
during a call is an environment error of the episode, never an observation the agent is judged on; what the agent
left that a check cannot take is the agent's failure, 0 points, never an unscored error."""

from __future__ import annotations

import resource
from pathlib import Path
from typing import Any

import pytest

from occubench.core.agent import ScriptedAgent
from occubench.core.environment import Environment
from occubench.core.episode import Episodes
from occubench.core.suite import Suite
from occubench.core.task import Task
from occubench.core.trajectory import Trajectory
from occubench.core.verifier import Verdict
from occubench.errors import AgentOutputError, WorldError
from occubench.sandbox.provider import Unconfined
from occubench.simulated import SimulatedEnvironment, WorldModelRegistry
from occubench.traineebench.families import family
from occubench.traineebench.plugin import TOOLSET
from occubench.workplace import WorkplaceEnvironment, generate_days
from tests.traineebench.conftest import make_day
from tests.workplace.families import played

TASK = Task(task_id=1, instruction="Do it.", scenario="S", category="Science & Research", domain="D", difficulty=1,
            env_name="e")


def _full_disk() -> None:
    """What a write to a full disk meets: /dev/full answers every write with ENOSPC."""
    with open("/dev/full", "wb", buffering=0) as disk:
        disk.write(b"transcript")


class OneWorld(Suite):
    """One task on ``world``; the verdict from ``verdict`` (raising what a check would)."""

    def __init__(self, world: Environment, verdict: Any = None) -> None:
        self._world, self._verdict = world, verdict

    def tasks(self) -> list[Task]:
        return [TASK]

    def world(self, task: Task) -> Environment:
        return self._world

    def verify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        if isinstance(self._verdict, Exception):
            raise self._verdict
        return Verdict(True, "done")


def _episode(world: Environment, calls: list[tuple[str, dict[str, Any]]], verdict: Any = None) -> Any:
    return Episodes(OneWorld(world, verdict), ScriptedAgent(lambda task: (calls, "done")), {}).evaluate(TASK)


class FullDiskColleagues:
    """Colleagues whose model keeps a transcript on a disk that is full."""

    def reply(self, colleague: Any, message: str, history: list[Any]) -> str:
        _full_disk()
        return "never"


def test_workplace_colleagues_out_of_disk_are_an_environment_error_of_the_episode(tmp_path: Path) -> None:
    day = generate_days(0, 1)[0]
    message = ("send_message", {"to": day.colleagues[0].name, "text": "Hello"})
    control = _episode(played(day, tmp_path / "control"), [message])
    assert control.status == "ok" and control.is_correct
    result = _episode(played(day, tmp_path / "full", responder=FullDiskColleagues()), [message])
    assert (result.status, result.error and result.error.kind, result.is_correct) == ("error", "environment", None)
    assert "send_message: the world ran out of disk space" in result.error.message


def test_a_trainee_bench_download_past_the_file_size_limit_is_an_environment_error(tmp_path: Path) -> None:
    day = make_day(tmp_path / "day")
    (day.cloud_disk / "big.bin").write_bytes(b"x" * (1 << 20))
    download = ("download_file", {"file_path": "big.bin", "target_path": "big.bin"})
    assert _episode(WorkplaceEnvironment(day, [], TOOLSET, family, provider=Unconfined()), [download]).status == "ok"
    env = WorkplaceEnvironment(make_day(tmp_path / "again"), [], TOOLSET, family, provider=Unconfined())
    (env.world.cloud_disk / "big.bin").write_bytes(b"x" * (1 << 20))
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, hard))  # the kernel refuses the copy's 65th KB: EFBIG
    try:
        with pytest.raises(WorldError, match="download_file: the world ran out of its file size limit"):
            env.call(*download)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


class FullDiskClient:
    """A world model's client that logs each request to a full disk first (not the model's behaviour: its
    transport's, which the mock server cannot show)."""

    async def achat(self, *args: Any, **kwargs: Any) -> Any:
        _full_disk()

    chat = samples = asamples = achat


def test_a_simulated_world_out_of_disk_is_an_environment_error(small_data: Path) -> None:
    config = WorldModelRegistry(small_data / "world_model_configs").get("env_fixture_pharmacy")
    env = SimulatedEnvironment(config, FullDiskClient(), "world")  # type: ignore[arg-type]
    result = _episode(env, [("get_prescription", {"rx_id": "RX-100"})])
    assert (result.status, result.error and result.error.kind) == ("error", "environment")
    assert "get_prescription: the world ran out of disk space" in result.error.message


def test_agent_output_a_check_cannot_take_fails_the_episode_with_0_points(tmp_path: Path) -> None:
    world = played(generate_days(0, 1)[0], tmp_path / "day")
    result = _episode(world, [], AgentOutputError("report.txt is a link, not a file"))
    assert (result.status, result.error, result.is_correct) == ("ok", None, False)
    assert "report.txt is a link, not a file" in result.feedback
    assert result.verdict_details == {"agent_output": "report.txt is a link, not a file"}
    # Its counterpart: a check the world cannot run is not scored.
    failed = _episode(played(generate_days(0, 1)[0], tmp_path / "failed"), [], WorldError("the checks' disk is full"))
    assert (failed.status, failed.error and failed.error.kind) == ("error", "environment")
