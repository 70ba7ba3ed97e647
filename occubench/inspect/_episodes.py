"""One Inspect task's episodes: the suite's plan, the models of its roles, and each sample's world, held from the
agent's turn (the solver) to its judging (the scorer). Called on Inspect's loop; a world is opened and closed in a
thread off it, since a world may start or stop a sandbox worker."""

from __future__ import annotations

from dataclasses import dataclass

import anyio
from inspect_ai.model import Model as InspectModel
from inspect_ai.model import get_model, model_roles

from occubench.config import RunConfig
from occubench.core.environment import Environment
from occubench.core.suite import Suite, SuitePlan
from occubench.core.task import Task
from occubench.engine.factory import EpisodeFactory, today
from occubench.errors import ConfigError
from occubench.inspect._bridge import InspectChat
from occubench.llm import Model
from occubench.util.aio import off_loop


@dataclass(frozen=True)
class Role:
    """How one of a suite's model roles is played in Inspect: by the model of an Inspect model role
    (``--model-role <inspect_role>=provider/model``), else by ``fallback``'s (another of the suite's roles), else
    an error when ``required``; otherwise the suite goes without (the executable worlds' label judge, the
    workplace's model-played colleagues)."""

    inspect_role: str
    required: bool = False
    fallback: str | None = None


@dataclass
class Episode:
    task: Task
    suite: Suite
    world: Environment


class Episodes:
    def __init__(self, config: RunConfig, plan: SuitePlan, roles: dict[str, Role]) -> None:
        self.config, self.roles = config, roles
        self.tasks = {str(task.task_id): task for task in plan.tasks}
        # Every model role of the suite is played by an Inspect model.
        self.factory = EpisodeFactory.create(config, plan=plan, given=plan.roles)
        self.injection = self.factory.injection
        self.date = config.date or today()
        self._open: dict[tuple[str, int], Episode] = {}

    def models(self) -> dict[str, Model]:
        """The suite's models, from the eval's model roles (known only while a sample runs, on Inspect's loop)."""
        bound = model_roles()
        chosen: dict[str, InspectModel] = {}
        for ours, role in self.roles.items():
            if role.inspect_role in bound:
                chosen[ours] = get_model(role=role.inspect_role)
            elif role.fallback in chosen:
                chosen[ours] = chosen[role.fallback]
            elif role.required:
                raise ConfigError(f"the {self.config.suite} task needs a {ours} model: give --model-role "
                                  f"{role.inspect_role}=<provider/model>")
        # The output caps ``occubench run`` sets on these roles.
        return {ours: Model(InspectChat(model), str(model), self.config.role_params(ours), ours)
                for ours, model in chosen.items()}

    async def start(self, sample_id: str | int, epoch: int) -> Episode:
        """A fresh world for the sample, with the run's faults; kept until :meth:`finish`."""
        task = self.tasks[str(sample_id)]
        suite = self.factory.suite(self.models())
        # Every epoch of a task meets the same faults, as every trial of a run.
        world = await off_loop(self.factory.world, suite, task)
        episode = self._open[(str(sample_id), epoch)] = Episode(task, suite, world)
        return episode

    def finish(self, sample_id: str | int, epoch: int) -> Episode:
        """The sample's episode, no longer kept: its world is the one the agent acted in (code checks read its final
        state), so a sample is scored in the eval that ran it. Its world is the caller's to :func:`close`."""
        episode = self._open.pop((str(sample_id), epoch), None)
        if episode is None:
            raise RuntimeError(f"sample {sample_id} (epoch {epoch}): no world to score; the {self.config.suite} "
                               "scorer judges the world the agent acted in, in the same eval")
        return episode

    async def discard(self, sample_id: str | int, epoch: int) -> None:
        episode = self._open.pop((str(sample_id), epoch), None)
        if episode is not None:
            await close(episode.world)


async def close(world: Environment) -> None:
    """Close ``world`` off the loop; shielded, since it runs as a cancelled sample unwinds too."""
    with anyio.CancelScope(shield=True):
        await off_loop(world.close)
