"""A chat-completion body read into a :class:`~occubench.llm.types.Completion`, smoothing what servers differ in:
reasoning text (``<think>…</think>``, ``reasoning_content``) is kept apart from the answer, and tool calls a chat
template wrote into the text (``<tool_call>{...}</tool_call>``) become tool calls. Every text is made to encode as
UTF-8, and JSON in it is read with bounded nesting (:func:`occubench.llm.parsing.loads`)."""

from __future__ import annotations

import json
from typing import Any

from occubench.llm.parsing import loads
from occubench.llm.types import Completion, Reply, Tokens, ToolCallRequest, Usage
from occubench.util.jsonsafe import clean_text


def _text(value: Any) -> str | None:
    # Lone surrogates (a reply's "\ud800") are replaced where replies enter: past here every text encodes as UTF-8.
    return None if value is None else clean_text(value if isinstance(value, str) else json.dumps(value))


def _blocks(content: str, tag: str) -> tuple[list[str], str]:
    """The bodies of the ``<tag>...</tag>`` blocks in ``content``, stripped (a block left open runs to the end), and
    the text around them. Found with ``str.find``: the regular expression this replaces took time quadratic in a run
    of spaces in a block."""
    opening, closing = f"<{tag}>", f"</{tag}>"
    bodies, around, position = [], [], 0
    while (start := content.find(opening, position)) >= 0:
        around.append(content[position:start])
        end = content.find(closing, start + len(opening))
        end, position = (len(content), len(content)) if end < 0 else (end, end + len(closing))
        bodies.append(content[start + len(opening):end].strip())
    around.append(content[position:])
    return bodies, "".join(around)


def _text_tool_calls(content: str) -> tuple[str, tuple[ToolCallRequest, ...]]:
    """Tool calls a chat template wrote into the text (``<tool_call>{"name": ..., "arguments": ...}</tool_call>``,
    as Hermes- and Qwen-style templates do), and the text without them."""
    calls = []
    bodies, around = _blocks(content, "tool_call")
    for number, body in enumerate(bodies):
        try:
            call = loads(body)
        except ValueError:  # not JSON, or nested too deep: not a tool call, as for any other garbage
            continue
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            arguments = call.get("arguments", call.get("parameters", {}))
            calls.append(ToolCallRequest(id=f"text_call_{number}", name=call["name"],
                                         arguments=arguments if isinstance(arguments, str) else json.dumps(arguments)))
    return (around.strip() if calls else content), tuple(calls)


def _tokens(data: Any, choice: Any) -> Tokens | None:
    """A choice's tokens where the endpoint sent them: vLLM's ``prompt_token_ids`` (on the body) and ``token_ids``
    (on the choice), and the OpenAI ``logprobs.content`` list."""
    if "token_ids" not in choice and "prompt_token_ids" not in data and not choice.get("logprobs"):
        return None  # the usual answer, settled at once
    logprobs = choice.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    return Tokens.read({"prompt_ids": data.get("prompt_token_ids"), "completion_ids": choice.get("token_ids"),
                        "logprobs": [item.get("logprob") if isinstance(item, dict) else None for item in content]
                        if isinstance(content, list) else None})


def read_completion(data: Any, tools_sent: bool = False) -> Completion:
    """Read a chat-completion JSON body; anything malformed raises (and is retried as a transient failure)."""
    replies = []
    for choice in data["choices"]:
        message = choice["message"]
        content = _text(message.get("content"))
        # Reasoning stays out of the answer and of what the simulator and judge parsers read.
        reasoning = [_text(message.get("reasoning_content")) or ""]
        if content and "<think>" in content:
            thoughts, content = _blocks(content, "think")
            reasoning += thoughts
            content = content.strip()
        calls = tuple(ToolCallRequest(id=_text(c.get("id")) or "", name=_text(c["function"]["name"]) or "",
                                      arguments=_text(c["function"].get("arguments")) or "")
                      for c in message.get("tool_calls") or [] if c.get("function"))
        if tools_sent and not calls and content and "<tool_call>" in content:
            content, calls = _text_tool_calls(content)
        replies.append(Reply(content=content, tool_calls=calls, finish_reason=_text(choice.get("finish_reason")),
                             reasoning="\n".join(r.strip() for r in reasoning if r.strip()) or None,
                             tokens=_tokens(data, choice)))
    if not replies:
        raise ValueError("the endpoint returned no choices")
    usage = data.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    return Completion(replies=replies, usage=Usage(prompt_tokens=usage.get("prompt_tokens") or 0,
                                                   completion_tokens=usage.get("completion_tokens") or 0, calls=1,
                                                   cached_tokens=details.get("cached_tokens") or 0),
                      model=_text(data.get("model")))
