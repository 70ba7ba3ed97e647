"""The taskset's default harness: occubench's own agent loop, run in the eval process.

The conversation is the one occubench gives an agent over MCP (``examples/mcp_agent.py`` in occubench's
repository): the episode's instructions as the system prompt, the task's instruction as the user's message, its
tools with ``submit`` last; every tool call the model asks for is made in the episode, and a reply without one is
the answer, submitted. Each model call goes through the rollout's interception endpoint, so the trace holds every
turn as verifiers records any harness's. It runs in-process: no program to install in the runtime, so it runs
offline.
"""

from __future__ import annotations

import json
from typing import Any, cast

import verifiers.v1 as vf
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionMessageParam
from verifiers.v1.harnesses.utils.mcp import mcp_client

from occubench_verifiers.state import EpisodeState


class OccubenchHarnessConfig(vf.HarnessConfig):
    pass


class OccubenchHarness(vf.Harness[OccubenchHarnessConfig]):
    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_MCP = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx: vf.ModelContext, trace: vf.Trace, runtime: vf.Runtime, endpoint: str, secret: str,
                     mcp_urls: dict[str, str], data: vf.TaskData) -> vf.ProgramResult:
        if not isinstance(trace.state, EpisodeState) or len(mcp_urls) != 1:
            raise TypeError("the occubench harness plays occubench episodes: its taskset is occubench-verifiers")
        system, prompt = self.resolve_prompt(data)
        messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": prompt}]
        if system:
            messages.insert(0, {"role": "system", "content": system})
        async with AsyncOpenAI(base_url=endpoint, api_key=secret) as model, mcp_client(
                {"url": next(iter(mcp_urls.values())), "timeout": self.config.tool_timeout}) as world:
            tools: list[ChatCompletionFunctionToolParam] = [
                {"type": "function", "function": {"name": tool.name, "description": tool.description or "",
                                                  "parameters": tool.input_schema}}
                for tool in (await world.list_tools()).tools]
            # The tool server replaces the trace's state when the episode ends (at submit, or at --max-steps).
            while trace.state.verdict is None:
                message = (await model.chat.completions.create(model=ctx.model, messages=messages,
                                                               tools=tools)).choices[0].message
                messages.append(cast(ChatCompletionMessageParam, message.model_dump(exclude_none=True)))
                if not message.tool_calls:  # a reply without a call is the answer
                    await world.call_tool(trace.state.submit, {"answer": message.content or ""})
                    break
                for call in message.tool_calls:
                    assert call.type == "function"  # a model calls custom tools only when it is offered some
                    result = await world.call_tool(call.function.name, _arguments(call.function.arguments))
                    text = "".join(block.text for block in result.content if block.type == "text")
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")


def _arguments(text: str | None) -> dict[str, Any]:
    """A call's arguments; what is not one JSON object goes to the world as is, whose validation says what is
    wrong (as occubench's agent does)."""
    try:
        arguments = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {"_unparsable": text}
    return arguments if isinstance(arguments, dict) else {"_unparsable": text}
