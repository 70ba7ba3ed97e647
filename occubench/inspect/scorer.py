"""The scorer: the suite's own verifier on the sample's trajectory and world — the rubric judges' majority vote
through the ``grader`` role, the executable worlds' code checks (and label judge), a workplace day's checkpoints.

The score's value is the verdict (1.0 pass, 0.0 fail); a workplace day's is ``{"score": day score, "success":
verdict}``. Its explanation is the verdict's feedback and its metadata what a result of ``occubench run`` holds
about the verdict (votes, details, stop reason, the trajectory as the judge read it, fault events), which is how
``occubench report`` reads Inspect logs. A verifier that reaches no verdict (no majority, an endpoint that stays
down) raises: Inspect records the sample as an error, never as the agent's failure. The verifier is awaited on
Inspect's loop (see :meth:`~occubench.core.suite.Suite.averify`: code checks run in a thread off it).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool
from inspect_ai.scorer import Score, Scorer, Target, accuracy, mean, scorer, stderr
from inspect_ai.solver import TaskState

from occubench.core.faults import FaultInjector
from occubench.core.tools import ToolSpec, tool_error, unknown_tool
from occubench.core.trajectory import Step, ToolCall, Trajectory
from occubench.core.verifier import averdict
from occubench.inspect._bridge import untunnelled
from occubench.inspect._episodes import Episodes, close
from occubench.util.jsonsafe import json_safe


def _observation(call_name: str, reply: ChatMessageTool | None, specs: list[ToolSpec]) -> tuple[dict[str, Any], bool]:
    """What the agent was answered, in our tool contract's shape; whether the call reached the world."""
    if reply is None:
        return tool_error("tool_failed", "the call was never answered (the episode ended first)"), False
    if reply.error is not None:  # refused by Inspect before the world saw it: an unknown tool or bad arguments
        if call_name not in {spec.name for spec in specs}:
            return unknown_tool(call_name, specs), False
        return tool_error("invalid_arguments", reply.error.message), False
    try:
        observation = json.loads(reply.text)
    except ValueError:
        observation = reply.text
    return observation if isinstance(observation, dict) else {"result": observation}, True


def trajectory_of(messages: list[ChatMessage], specs: list[ToolSpec], max_steps: int) -> Trajectory:
    """The episode as ``occubench run``'s agent loop records it, from the agent's conversation."""
    replies = {m.tool_call_id: m for m in messages if isinstance(m, ChatMessageTool)}
    trajectory, reached = Trajectory(), 0
    for message in messages:
        if not isinstance(message, ChatMessageAssistant):
            continue
        step = Step(content=message.text or None)
        trajectory.steps.append(step)
        for call in message.tool_calls or []:
            observation, arrived = _observation(call.function, replies.get(call.id), specs)
            step.tool_calls.append(ToolCall(call.function, json.dumps(call.arguments, ensure_ascii=False),
                                            observation, reached if arrived else None))
            reached += arrived
        trajectory.final_answer = message.text
    last = trajectory.steps[-1] if trajectory.steps else None
    trajectory.stop_reason = ("answer" if last is not None and not last.tool_calls else
                              "max_steps" if len(trajectory.steps) >= max_steps else "limit")
    return trajectory


@scorer(metrics=[accuracy(), stderr()])
def verdict(episodes: Episodes) -> Scorer:
    """The suite's verdict on the sample (see the module docstring)."""
    return _scorer(episodes)


@scorer(metrics={"score": [mean(), stderr()], "success": [accuracy()]})
def day_score(episodes: Episodes) -> Scorer:
    """A workplace day: its checkpoint score and whether every task succeeded."""
    return _scorer(episodes)


def _scorer(episodes: Episodes) -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        episode = episodes.finish(state.sample_id, state.epoch)
        world = episode.world
        try:
            trajectory = trajectory_of(state.messages, world.tools(), episodes.config.max_steps)
            found = await untunnelled(averdict(episode.suite.averify(episode.task, trajectory, world)))
            injector = world.find(FaultInjector)
            metadata = json_safe({
                "is_correct": found.is_correct, "votes": [asdict(vote) for vote in found.votes],
                "verdict_details": found.details, "stop_reason": trajectory.stop_reason,
                "step_count": trajectory.step_count, "trajectory": trajectory.render(),
                "steps": trajectory.to_steps_json(), "env_info": world.info(),
                "fault_events": [asdict(event) for event in injector.events] if injector else []})
        finally:
            await close(world)
        value: Any = found.reward if found.score is None else {"score": found.score,
                                                                 "success": float(found.is_correct)}
        return Score(value=value, answer=trajectory.final_answer, explanation=found.feedback, metadata=metadata)

    return score
