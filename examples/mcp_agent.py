"""A small agent of its own: the official MCP client in an episode's world, an OpenAI-compatible model deciding.

    python examples/mcp_agent.py MCP_URL INSTRUCTION_FILE [--model NAME] [--max-turns N]

occubench starts it once per task and judges what it does:

    occubench run --suite executable --agent-model gpt-4o-mini \\
        --agent command:'python examples/mcp_agent.py {mcp_url} {instruction_file} --model {model}'

Its model is its own business: the openai SDK reads OPENAI_BASE_URL and OPENAI_API_KEY from the environment.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from openai import AsyncOpenAI


async def play(url: str, instruction: str, model: str, max_turns: int) -> None:
    llm = AsyncOpenAI()
    async with Client(streamable_http_client(url)) as world:
        tools = [{"type": "function", "function": {"name": tool.name, "description": tool.description or "",
                                                   "parameters": tool.input_schema}}
                 for tool in (await world.list_tools()).tools]
        # The server's instructions are the system prompt occubench's own agent gets (ending: "call submit").
        messages: list[dict] = [{"role": "system", "content": world.instructions or ""},
                                {"role": "user", "content": instruction}]
        for _ in range(max_turns):
            reply = (await llm.chat.completions.create(model=model, messages=messages, tools=tools)).choices[0]
            message = reply.message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:  # a reply without a call is the answer
                await world.call_tool("submit", {"answer": message.content or ""})
                return
            for call in message.tool_calls:
                try:
                    arguments = json.loads(call.function.arguments or "{}")
                except json.JSONDecodeError:
                    arguments = {"_unparsable": call.function.arguments}  # the world's validation says what is wrong
                result = await world.call_tool(call.function.name, arguments)
                text = "".join(block.text for block in result.content if block.type == "text")
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
                if call.function.name == "submit":
                    return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mcp_url")
    parser.add_argument("instruction_file", type=Path)
    parser.add_argument("--model", default="gpt-4o-mini")
    parser.add_argument("--max-turns", type=int, default=50)
    args = parser.parse_args()
    asyncio.run(play(args.mcp_url, args.instruction_file.read_text(encoding="utf-8"), args.model, args.max_turns))


if __name__ == "__main__":
    main()
