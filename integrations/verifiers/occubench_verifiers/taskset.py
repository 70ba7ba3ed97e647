"""occubench's tasks as a verifiers taskset, and the environment that serves their episodes.

A rollout of a task plays one of the run's episodes of it on `occubench serve --protocol openenv` (the one the
environment started, or the ``url`` given): the task's setup opens a session and resets it to the task, which
starts the episode (the world, with the run's faults) and gives its instruction and system prompt, which become
the rollout's prompt; the harness plays it through the tool server; the episode ends at ``submit`` (or at the
run's ``--max-steps``), where occubench's verifier judges it and stores it in the run folder like any run's, and
its verdict is the rollout's reward: 1.0 if it passes, 0.0 if not. An episode the harness left without submitting
is answered with its last reply. An episode occubench could not evaluate (the world failed, the judge gave
nothing usable) has no reward, as occubench scores none: the rollout is an error, like any failed rollout.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import secrets
from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf
from pydantic import Field, PrivateAttr

from occubench_verifiers.episodes import EpisodeError, Server, Session
from occubench_verifiers.serving import TOKEN_VARIABLE, ServeProcess, list_tasks
from occubench_verifiers.state import EpisodeState
from occubench_verifiers.toolset import OccubenchToolset

#: The taskset's id: `vf-eval occubench-verifiers` (the module, occubench_verifiers, is found by it).
TASKSET_ID = "occubench-verifiers"


class OccubenchTaskConfig(vf.TaskConfig):
    #: The server the rollouts play on, set when the environment starts (not part of the run's saved config).
    _server: Server | None = PrivateAttr(default=None)


class OccubenchConfig(vf.TasksetConfig):
    suite: str | None = None
    """occubench's suite (`occubench suites`): occubench (its default), executable, workplace, awm..."""
    select: list[str] = Field(default_factory=list)
    """Flags of `occubench tasks` that choose the tasks and their data: --task-ids, --categories, --limit,
    --data-dir, --download... Given to `occubench serve` too."""
    run: list[str] = Field(default_factory=list)
    """Further flags of `occubench serve` (those of `occubench run`): --world-model, --verifier-model, --env-mode,
    --max-steps, --trials (at least vf-eval's -r: each rollout plays one of a task's trials), --output-dir,
    --run-name, --base-url..."""
    url: str | None = None
    """An `occubench serve --protocol openenv` already serving the same tasks (its token from
    $OCCUBENCH_SERVE_TOKEN, if it has one); without it, the environment starts one with the flags above and stops
    it at the end."""
    command: str | None = None
    """How to run occubench (default: $OCCUBENCH_COMMAND, else `occubench` on the PATH)."""
    task: OccubenchTaskConfig = OccubenchTaskConfig()

    def listing_flags(self) -> list[str]:
        return [*(["--suite", self.suite] if self.suite else []), *self.select]

    def serve_flags(self) -> list[str]:
        """The flags of the server the environment starts. Its run folder is the eval's own unless ``run`` names
        one: occubench resumes a run in its folder, so a second eval with the same settings would find every
        episode it asks for already played."""
        named = any(flag == "--run-name" or flag.startswith("--run-name=") for flag in self.run)
        eval_id = re.sub(r"[^A-Za-z0-9_.-]", "-", os.environ.get("VF_RUN_ID") or secrets.token_hex(8))
        return [*self.listing_flags(), *([] if named else ["--run-name", f"verifiers-{eval_id}"]), *self.run]


class OccubenchData(vf.TaskData):
    category: str | None = None


class OccubenchTask(vf.Task[OccubenchData, EpisodeState, OccubenchTaskConfig]):
    @property
    def key(self) -> str:
        return str(self.data.id)

    async def setup(self, trace: vf.Trace) -> None:
        server = self.config._server
        if server is None:
            raise RuntimeError("no occubench server: the occubench-verifiers environment starts it (its start())")
        try:
            session, start = await Session.open(server, str(self.data.id))
        except EpisodeError as exc:
            if exc.code != "TASK_TAKEN":
                raise
            raise EpisodeError(f"{exc}: each rollout plays one of the run's episodes of its task, so vf-eval's -r N "
                               "needs --trials N (or more) in the run option") from None
        state = trace.state
        state.url, state.token, state.session = server.url, server.token, session.id
        state.submit = str(start.get("submit") or "submit")
        state.tools = await session.tools()
        # The episode's own words become the rollout's prompt (and its trace's).
        trace.task.data = trace.task.data.model_copy(update={"prompt": str(start["instruction"]),
                                                             "system_prompt": str(start["prompt"])})
        trace.info["occubench"] = {"episode_id": start.get("episode_id"), "trial": start.get("trial")}

    async def finalize(self, trace: vf.Trace) -> None:
        state = trace.state
        if state.verdict is not None:
            return
        episode = state.episode()
        status = await episode.state()
        if status.get("done"):  # ended by the run's limits (steps, time) while the harness made no call
            state.verdict = status.get("verdict") or {}
        else:  # the harness stopped without submitting: its last reply is the answer, as occubench's agent's is
            state.verdict = (await episode.call(state.submit, {"answer": trace.last_reply})).get("metadata") or {}

    @vf.reward
    async def occubench(self, trace: vf.Trace) -> float:
        verdict = trace.state.verdict or {}
        trace.info["occubench"] = {**trace.info.get("occubench", {}), **verdict}
        if verdict.get("reward") is None:
            error = verdict.get("error") or {}
            raise RuntimeError(f"occubench did not score this episode ({error.get('kind', 'no verdict')}: "
                               f"{error.get('message', '')}); occubench counts it as an error, not a failure")
        return float(verdict["reward"])


class OccubenchTaskset(vf.Taskset[OccubenchTask, OccubenchConfig]):
    """occubench's tasks, as `occubench tasks` lists them for the suite and the selection flags."""

    @functools.cached_property
    def _listing(self) -> list[dict[str, Any]]:
        return list_tasks(self.config.command, self.config.listing_flags())

    def load(self) -> Iterator[OccubenchTask]:
        for row in self._listing:
            task_id = str(row["task_id"])
            yield OccubenchTask(OccubenchData(
                id=task_id, name=task_id, description=row.get("scenario"), category=row.get("category"),
                # Replaced by the episode's instruction when it starts (verifiers needs a prompt before).
                prompt=f"occubench task {task_id}: its instruction comes with its episode"), self.config.task)

    @classmethod
    def toolsets(cls, config: OccubenchConfig) -> list[vf.Toolset]:
        return [OccubenchToolset(vf.SharedToolsetConfig())]


class OccubenchEnvConfig(vf.EnvConfig):
    # The harness runs in the eval process and executes no code: the local runtime is enough.
    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class OccubenchEnv(vf.Env[OccubenchEnvConfig]):
    """The taskset's environment: one agent per episode, and the occubench server its rollouts play on."""

    _served: ServeProcess | None = None

    async def start(self) -> None:
        config = self.taskset.config
        assert isinstance(config, OccubenchConfig)
        if config.url:
            config.task._server = Server(config.url.rstrip("/"), os.environ.get(TOKEN_VARIABLE) or None)
            return
        self._served = await ServeProcess.start(config.command, config.serve_flags())
        config.task._server = self._served.server

    async def stop(self) -> None:
        config = self.taskset.config
        assert isinstance(config, OccubenchConfig)
        config.task._server = None
        if self._served is not None:
            served, self._served = self._served, None
            await served.stop()

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        traces: list[vf.Trace] = []
        try:
            await agents.agent.run(task, on_trace=traces.append)
        finally:
            for trace in traces:  # each attempt's session, whether or not it was scored
                if trace.state.session:
                    # One that cannot be closed (the server gone, or it closed it) is over already.
                    with contextlib.suppress(Exception):
                        await trace.state.episode().close()
