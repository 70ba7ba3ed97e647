"""Agents: the tool-calling loop that drives a model, and scripted agents that need no model.

Every agent has one method, ``run(task, env, trajectory)``, and fills the trajectory as it goes so that a failure
keeps what happened. An agent that awaits its model (:class:`AsyncAgent`: the built-in ones) implements
``arun`` instead, which an episode awaits on its event loop; a synchronous agent runs in a thread off the loop.
"""

from __future__ import annotations

import datetime
import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Protocol

from occubench.core.environment import Environment, JSONObject
from occubench.core.images import Image, deliver
from occubench.core.results import Result
from occubench.core.task import Task
from occubench.core.tools import ToolSpec, json_arguments, tool_error, unknown_tool
from occubench.core.trajectory import Step, ToolCall, Trajectory
from occubench.errors import ContextLengthError
from occubench.llm import Message, Model, Reply
from occubench.llm.cache import current_trial
from occubench.util.aio import off_loop, run_sync

Script = tuple[list[tuple[str, JSONObject]], str]

log = logging.getLogger("occubench")


#: How the built-in loop's agent ends an episode; an outside agent is told to call its submit tool instead.
ANSWER_BY_REPLY = "reply with your final answer and no tool call"


def system_prompt(task: Task, date: str, with_plan: bool, finish: str = ANSWER_BY_REPLY) -> str:
    prompt = (f'You are a professional agent working in the "{task.scenario}" environment. Today is {date}.\n'
              "Use the tools to gather the facts the task needs and to take the actions it requires; rely only on "
              f"what the tools return, never on invented data. When the task is done, {finish}.")
    if with_plan and task.solution_plan:
        prompt += f"\n\nA plan that solves this task:\n{task.solution_plan}"
    return prompt


async def make_call(env: Environment, specs: list[ToolSpec], record: ToolCall, env_calls: int,
                    images: list[Image] | None = None) -> bool:
    """Make ``record``'s call and fill in its observation; whether it reached the environment. A call of an unknown
    tool or with arguments that are not one JSON object never does, and gets no ``call_index`` (fault windows count
    the environment's calls); the others get ``env_calls``, the count of calls that reached it before. The images
    of the observation are delivered (:func:`~occubench.core.images.deliver`): added to ``images`` to be sent as
    image content when it is given (the agent takes images), else as their text."""
    if record.name not in {spec.name for spec in specs}:
        record.observation = unknown_tool(record.name, specs)
        return False
    try:
        arguments = json_arguments(record.arguments)
    except ValueError as exc:
        record.observation = tool_error("invalid_arguments", str(exc))
        return False
    record.call_index = env_calls
    record.observation, shown = deliver(await env.acall(record.name, arguments), images is not None)
    if images is not None:
        images += shown
    return True


def assistant_message(reply: Reply, turn: int) -> Message:
    """``reply`` as the assistant message sent back in the chat, each call the endpoint left unnamed given the id
    ``call_<turn>_<index>`` (its tool result must name it)."""
    message = reply.to_message()
    for index, call in enumerate(message.get("tool_calls", [])):
        call["id"] = call["id"] or f"call_{turn}_{index}"
    return message


class Agent(Protocol):
    def run(self, task: Task, env: Environment, trajectory: Trajectory) -> None: ...


class AsyncAgent(ABC):
    """An agent whose episode is a coroutine (:meth:`arun`); :meth:`run` runs it on the harness loop."""

    def run(self, task: Task, env: Environment, trajectory: Trajectory) -> None:
        run_sync(self.arun(task, env, trajectory))

    @abstractmethod
    async def arun(self, task: Task, env: Environment, trajectory: Trajectory) -> None:
        """Play ``task`` in ``env``, filling ``trajectory`` as it goes so that a failure keeps what happened."""


async def play(agent: Agent, task: Task, env: Environment, trajectory: Trajectory) -> None:
    """``agent``'s episode, from an event loop: awaited if it is async, else in a thread of the pool for callers."""
    if isinstance(agent, AsyncAgent):
        await agent.arun(task, env, trajectory)
    else:
        await off_loop(agent.run, task, env, trajectory, pool="caller")


class ToolCallingAgent(AsyncAgent):
    """OpenAI tool calling: calls the model with the tools, executes its tool calls in order, stops at a reply
    without tool calls or after ``max_steps`` turns. With ``images`` (the model takes image input), the images of a
    turn's observations follow its tool results as a user message of image content (:func:`image_message`);
    without, each observation holds their text."""

    def __init__(self, model: Model, *, max_steps: int = 50, with_plan: bool = False,
                 date: str | None = None, history_window: int | None = None, images: bool = False) -> None:
        self.model = model
        self.max_steps = max_steps
        self.with_plan = with_plan
        self.date = date or datetime.date.today().isoformat()
        #: Send only the last K turns (each an assistant message and its tool results) after the opening.
        self.history_window = history_window
        self.images = images

    async def arun(self, task: Task, env: Environment, trajectory: Trajectory) -> None:
        specs = env.tools()
        tools = [spec.schema() for spec in specs]
        trajectory.system_prompt = system_prompt(task, self.date, self.with_plan)
        opening: list[Message] = [{"role": "system", "content": trajectory.system_prompt},
                                  {"role": "user", "content": task.instruction}]
        messages = trajectory.messages  # the conversation after the opening, kept as it grows
        env_calls = 0
        urls: dict[str, str] = {}  # the data URL of each image the recorded conversation names by its digest
        for step_number in range(1, self.max_steps + 1):
            log.debug("[AGENT] Step %d, messages=%d", step_number, len(opening) + len(messages))
            try:
                completion = await self.model.achat(_inlined(opening + self._window(messages), urls), tools=tools)
            except ContextLengthError:
                if not trajectory.steps:
                    raise  # nothing was done yet: the task never fits this model, an error rather than a FAIL
                trajectory.stop_reason = "context_length"  # the episode ends; the judge scores what was done
                return
            reply = completion.replies[0]
            log.debug("[AGENT] finish_reason=%s, has_content=%s, tool_calls=%d", reply.finish_reason,
                      bool(reply.content), len(reply.tool_calls))
            step = Step(content=reply.content)
            if reply.tokens is not None:
                step.tokens = {**reply.tokens.to_dict(), "params": dict(self.model.params)}
            trajectory.steps.append(step)
            if not reply.tool_calls:
                messages.append(reply.to_message())
                trajectory.final_answer = reply.content or ""
                trajectory.stop_reason = "answer"
                return
            message = assistant_message(reply, step_number)
            messages.append(message)
            shown: list[tuple[str, str, Image]] = []
            for request, sent in zip(reply.tool_calls, message["tool_calls"]):
                log.debug("[AGENT] Tool call: %s(%s)", request.name, request.arguments)
                record = ToolCall(name=request.name, arguments=request.arguments, observation={})
                step.tool_calls.append(record)
                images: list[Image] | None = [] if self.images else None
                env_calls += await make_call(env, specs, record, env_calls, images)
                messages.append({"role": "tool", "tool_call_id": sent["id"],
                                 "content": json.dumps(record.observation, ensure_ascii=False)})
                shown += [(sent["id"], request.name, image) for image in images or []]
            if shown:
                messages.append(image_message(shown, urls))
            trajectory.final_answer = reply.content or ""
        trajectory.stop_reason = "max_steps"


    def _window(self, messages: list[Message]) -> list[Message]:
        if self.history_window is None:
            return messages
        turns = [i for i, message in enumerate(messages) if message["role"] == "assistant"]
        return messages[turns[-self.history_window]:] if len(turns) > self.history_window else messages


def image_message(shown: list[tuple[str, str, Image]], urls: dict[str, str]) -> Message:
    """The images a turn's calls returned, each as (call id, tool, image), as the user message that follows the
    turn's tool results (in Chat Completions a tool message carries no image). The conversation recorded names each
    image ``sha256:<digest>``, its data URL kept in ``urls`` for the requests (:func:`_inlined`): a run's results
    hold no image data."""
    parts: list[dict[str, Any]] = []
    for call_id, tool, image in shown:
        name = f"sha256:{image.sha256}"
        urls[name] = image.data_url()
        parts += [{"type": "text", "text": f"The image {tool} returned (call {call_id}):"},
                  {"type": "image_url", "image_url": {"url": name}}]
    return {"role": "user", "content": parts}


def _inlined(messages: list[Message], urls: dict[str, str]) -> list[Message]:
    """``messages`` with each image named in :func:`image_message`'s parts given its data URL."""
    if not urls:
        return messages
    return [{**message, "content": [_inlined_part(part, urls) for part in message["content"]]}
            if message["role"] == "user" and isinstance(message["content"], list) else message
            for message in messages]


def _inlined_part(part: dict[str, Any], urls: dict[str, str]) -> dict[str, Any]:
    if part.get("type") != "image_url" or part["image_url"]["url"] not in urls:
        return part
    return {**part, "image_url": {**part["image_url"], "url": urls[part["image_url"]["url"]]}}


class ScriptedAgent(AsyncAgent):
    """Plays a fixed script per task — tool calls, then a final answer — without a model (reference solutions,
    a do-nothing agent, deliberately wrong solutions)."""

    def __init__(self, script: Callable[[Task], Script]) -> None:
        self.script = script

    async def arun(self, task: Task, env: Environment, trajectory: Trajectory) -> None:
        calls, answer = self.script(task)
        step = Step(content=None)
        trajectory.steps.append(step)
        for index, (name, arguments) in enumerate(calls):
            record = ToolCall(name=name, arguments=json.dumps(arguments), observation={}, call_index=index)
            step.tool_calls.append(record)
            record.observation, _ = deliver(await env.acall(name, arguments), False)
        trajectory.final_answer = answer
        trajectory.stop_reason = "answer"


#: What the do-nothing agent answers.
NOOP_ANSWER = "I looked at the request and made no changes."
#: Answers at once, changing nothing (``--agent noop``): a task it passes is trivially passed.
NOOP = ScriptedAgent(lambda task: ([], NOOP_ANSWER))


class ReplayAgent(AsyncAgent):
    """Plays back saved episodes so that they are judged again (``occubench rescore``): the same turns, tool calls
    and final answer. In a world that is code, each call that reached the environment is made again, so the code
    checks read the state the agent left, its images recorded as the run delivered them (``images``: as image
    content); a simulated world is not asked again, its saved answers stand."""

    def __init__(self, episodes: dict[tuple[Any, int], Result], context: dict[str, Any], *,
                 call_env: bool, images: bool = False) -> None:
        self.episodes, self.context, self.call_env, self.images = episodes, context, call_env, images

    async def arun(self, task: Task, env: Environment, trajectory: Trajectory) -> None:
        saved = self.episodes[(task.task_id, current_trial.get())]
        trajectory.system_prompt = str(self.context.get(saved.context.get("system_prompt", ""), ""))
        trajectory.messages = list(saved.messages)
        for step in saved.steps:
            replayed = Step(content=step.content)
            trajectory.steps.append(replayed)
            for call in step.tool_calls:
                observation = call.observation
                if self.call_env and call.call_index is not None:
                    observation, _ = deliver(await env.acall(call.name, json_arguments(call.arguments)), self.images)
                replayed.tool_calls.append(ToolCall(call.name, call.arguments, observation, call.call_index))
        trajectory.final_answer, trajectory.stop_reason = saved.final_answer, saved.stop_reason
