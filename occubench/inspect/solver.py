"""The solver: Inspect's ReAct agent, given the world's tools as Inspect tools and the system prompt ``occubench
run``'s agent gets, and run as that agent runs — it stops at a reply without tool calls or after ``max_steps``
turns, and sees every tool answer whole. The world's calls are awaited on Inspect's loop (a world whose code blocks
runs it in a thread off the loop, see :meth:`~occubench.core.environment.Environment.acall`)."""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.agent import AgentPrompt, AgentState, as_solver, react
from inspect_ai.model import ChatMessageAssistant
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolDef, ToolParams
from inspect_ai.util import LimitExceededError
from pydantic import ValidationError

from occubench.core.agent import system_prompt
from occubench.core.environment import Environment
from occubench.core.episode import StepLimit
from occubench.core.images import deliver
from occubench.core.tools import ToolSpec
from occubench.errors import ConfigError, TaskLimitReached
from occubench.inspect._bridge import untunnelled
from occubench.inspect._episodes import Episodes


def inspect_tool(world: Environment, spec: ToolSpec) -> ToolDef:
    """``spec`` as an Inspect tool that calls ``world``: the observation, our tool contract's JSON object, is the
    tool's result, each image in it given as its text (:func:`~occubench.core.images.deliver`). Calls run one at a
    time, in the order the model made them, as they change the world."""

    async def execute(**arguments: Any) -> str:
        try:
            observation, _ = deliver(await untunnelled(world.acall(spec.name, arguments)), False)
            return json.dumps(observation, ensure_ascii=False)
        except TaskLimitReached as exc:  # the engine's --max-steps: ends the sample as Inspect's limits end one
            limit = world.find(StepLimit)
            calls = limit.max_calls if limit else 0
            raise LimitExceededError("custom", value=calls, limit=calls, message=str(exc)) from None

    # Inspect wants a description for every parameter; the name stands in where the world gives none.
    properties = spec.parameters.get("properties") or {}
    described = {name: {**value, "description": value.get("description") or name} if isinstance(value, dict)
                 else value for name, value in properties.items()}
    try:
        parameters = ToolParams.model_validate({**spec.parameters, "properties": described})
    except ValidationError as exc:
        raise ConfigError(f"tool {spec.name}: its parameters are not a schema Inspect accepts: {exc}") from None
    # max_output 0: the agent sees each answer whole, as in occubench run (Inspect cuts at 16 KB by default).
    return ToolDef(execute, name=spec.name, description=spec.description, parameters=parameters, parallel=False,
                   max_output=0)


def _turns(max_steps: int) -> Any:
    async def on_continue(state: AgentState) -> bool:
        turns = sum(isinstance(message, ChatMessageAssistant) for message in state.messages)
        return bool(state.output.message.tool_calls) and turns < max_steps
    return on_continue


@solver
def world_agent(episodes: Episodes) -> Solver:
    """Per sample: a fresh world (with the task's faults), its tools, and Inspect's ReAct agent without a submit
    tool; the world stays open for the scorer."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        sample = (state.sample_id, state.epoch)
        episode = await untunnelled(episodes.start(*sample))
        try:
            prompt = AgentPrompt(instructions=system_prompt(episode.task, episodes.date, episodes.config.with_plan),
                                 handoff_prompt=None, assistant_prompt=None, submit_prompt=None)
            agent = react(prompt=prompt, tools=[inspect_tool(episode.world, spec) for spec in episode.world.tools()],
                          submit=False, on_continue=_turns(episodes.config.max_steps))
            return await as_solver(agent)(state, generate)
        except LimitExceededError:
            raise  # Inspect ends the sample and scores what was done: the scorer takes the world
        except BaseException:
            await episodes.discard(*sample)  # an error sample is not scored
            raise

    return solve
