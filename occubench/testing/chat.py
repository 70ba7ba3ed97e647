"""What the mock server answers a chat request, given its modes: the error a strict or troubled endpoint sends
instead of a completion (:class:`Refusal`), or the completion's body, shaped as the quirk modes say."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from typing import Any, Protocol

from occubench.core.images import image_problem
from occubench.testing.responders import DEEP, Responder, canonical, decoded, deep_reply

# Thoughts with draft answers that differ from the scripted ones, so a parser that does not skip them is caught.
_REASONING = (
    "The tempting answer is FALSE, so a first draft would be "
    '<verdict>{"feedback": "draft", "is_correct": false}</verdict> or '
    '<predicted_observation>{"tool": null, "status": "error", "error": "draft"}</predicted_observation> or '
    '<label>{"feedback": "draft", "label": "incomplete"}</label>. But maybe FALSE is wrong; let me check again.'
)
_NULL_CONTENT_ERROR = (
    "1 validation error for ChatCompletionRequestAssistantMessage\ncontent\n"
    "  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]"
)


class Modes(Protocol):
    """The settings of :class:`~occubench.testing.server.MockLLMServer` read here (see its docstring)."""

    responder: Responder
    models: list[str] | None
    support_n: bool
    refuse_max_tokens: bool
    refuse_token_ids: bool
    reject_required: bool
    tools_need_choice: bool
    reject_null_content: bool
    context_window: int | None
    reasoning: bool
    text_tool_calls: bool
    prompt_cache: bool
    deep_nesting: tuple[str, ...]


class Refusal(Exception):
    """An error answer in OpenAI's shape, raised where a check fails and sent in place of a completion."""

    def __init__(self, status: int, message: str, type_: str, *, param: str | None = None, code: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": {"message": message, "type": type_, "param": param, "code": code}}
        self.headers = headers or {}


def _approx_tokens(text: str) -> int:
    return (len(text) + 3) // 4


def _prompt_tokens(request: dict) -> int:
    return _approx_tokens(json.dumps(request["messages"]) + json.dumps(request.get("tools") or []))


def token_ids(text: str) -> list[int]:
    """The mock's tokenizer: a stable id per whitespace-separated word (what a test compares a rollout with)."""
    return [int.from_bytes(hashlib.sha256(word.encode("utf-8", "replace")).digest()[:2], "big")
            for word in text.split()]


def token_logprobs(text: str) -> list[float]:
    """The mock's logprob of each completion token: a stable function of the word and its place."""
    return [-((ident + place) % 97) / 10 for place, ident in enumerate(token_ids(text))]


def _completion_text(message: dict) -> str:
    calls = message.get("tool_calls") or []
    return " ".join([message.get("content") or "", *(f"{call['function']['name']} {call['function']['arguments']}"
                                                     for call in calls if isinstance(call, dict)
                                                     and isinstance(call.get("function"), dict))])


def prompt_token_ids(messages: list) -> list[int]:
    """The mock's prompt tokens: each message's role and text in turn, an assistant message as its completion was
    tokenized, then the assistant's role (the generation prompt) — so a turn's prompt extends the previous turn's
    prompt and completion token for token, as a chat template's does."""
    ids: list[int] = []
    for message in messages:
        if isinstance(message, dict):
            text = _completion_text(message) if message.get("role") == "assistant" else str(message.get("content"))
            ids += token_ids(f"<{message.get('role')}>") + token_ids(text)
    return ids + token_ids("<assistant>")


_DATA_URL = re.compile(r"data:(image/[a-z]+);base64,(.*)", re.DOTALL)


def parse(raw: bytes) -> dict:
    """The request a chat body holds; a 400 unless it is a JSON object with a list of messages whose content parts
    are text, or images (in user messages only) as data URLs of PNG, JPEG, WebP or GIF, as OpenAI checks them."""
    try:
        request = json.loads(raw)
    except ValueError as exc:
        raise Refusal(400, f"Malformed JSON body: {exc}", "invalid_request_error") from None
    if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
        raise Refusal(400, "'messages' is required.", "invalid_request_error", param="messages")
    for index, message in enumerate(request["messages"]):
        content = message.get("content") if isinstance(message, dict) else None
        for place, part in enumerate(content if isinstance(content, list) else []):
            if (problem := _part_problem(part, message.get("role"))) is not None:
                raise Refusal(400, f"Invalid 'messages[{index}].content[{place}]': {problem}",
                              "invalid_request_error", param=f"messages[{index}].content[{place}]")
    return request


def _part_problem(part: object, role: object) -> str | None:
    """Why OpenAI refuses a content part of a message of ``role``, or None (an image's URL on the web is taken
    unread: the mock has no network)."""
    if not isinstance(part, dict) or part.get("type") not in ("text", "image_url"):
        return "expected a part of type 'text' or 'image_url'."
    if part["type"] == "text":
        return None if isinstance(part.get("text"), str) else "a text part needs a string 'text'."
    if role != "user":
        return f"image content is only allowed in messages with role 'user', not {role!r}."
    image = part.get("image_url")
    url = image.get("url") if isinstance(image, dict) else None
    if isinstance(url, str) and url.startswith(("http://", "https://")):
        return None
    found = _DATA_URL.fullmatch(url) if isinstance(url, str) else None
    try:
        data = base64.b64decode(found[2], validate=True) if found else b""
    except ValueError:  # binascii.Error
        found = None
    if found is None:
        return "expected a base64-encoded data URL with an image MIME type."
    return None if image_problem(found[1], data) is None else "an unsupported image (png, jpeg, gif or webp only)."


def screen(modes: Modes, request: dict) -> tuple[dict, int]:
    """The checks made before a request takes a slot; returns the request as the server reads it, and its ``n``."""
    model = request.get("model")
    if modes.models is not None and model not in modes.models:
        raise Refusal(404, f"The model `{model}` does not exist or you do not have access to it.",
                      "invalid_request_error", param="model", code="model_not_found")
    n = request.get("n")
    n = 1 if n is None else n
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise Refusal(400, f"Invalid n: {n!r}.", "invalid_request_error", param="n")
    if n > 1 and not modes.support_n:
        raise Refusal(400, "This model does not support n > 1; send one request per sample.",
                      "invalid_request_error", param="n")
    if request.get("stream"):
        raise Refusal(400, "Streaming is not supported by the mock server.", "invalid_request_error", param="stream")
    if modes.refuse_max_tokens and "max_tokens" in request:
        raise Refusal(400, "Unsupported parameter: 'max_tokens' is not supported with this model. "
                           "Use 'max_completion_tokens' instead.",
                      "invalid_request_error", param="max_tokens", code="unsupported_parameter")
    if modes.refuse_token_ids and "return_token_ids" in request:
        raise Refusal(400, "Unrecognized request argument supplied: return_token_ids", "invalid_request_error",
                      param="return_token_ids")
    if modes.reject_required and request.get("tool_choice") == "required":
        raise Refusal(500, "Internal Server Error", "server_error")
    if modes.tools_need_choice and request.get("tool_choice") in (None, "none"):
        # llama.cpp's chatml-function-calling handler renders no tools into the prompt without a tool_choice.
        request = {key: value for key, value in request.items() if key != "tools"}
    return request, n


def screen_in_slot(modes: Modes, request: dict) -> None:
    """The checks made holding the slot: null assistant content, then the context window."""
    if modes.reject_null_content and any(
        isinstance(m, dict) and m.get("role") == "assistant" and m.get("content", "") is None
        for m in request["messages"]
    ):
        raise Refusal(500, _NULL_CONTENT_ERROR, "server_error")
    if modes.context_window is None:
        return
    prompt_tokens = _prompt_tokens(request)
    limit = request.get("max_tokens", request.get("max_completion_tokens"))
    completion_tokens = limit if isinstance(limit, int) else 0
    requested = prompt_tokens + completion_tokens
    if requested > modes.context_window:
        # llama-cpp-python's wording, which also carries OpenAI's phrase and code.
        message = (
            f"Requested tokens ({requested}) exceed context window of {modes.context_window}. "
            f"This model's maximum context length is {modes.context_window} tokens. However, you requested "
            f"{requested} tokens ({prompt_tokens} in the messages, {completion_tokens} in the completion). "
            "Please reduce the length of the messages or completion."
        )
        raise Refusal(400, message, "invalid_request_error", param="messages", code="context_length_exceeded")


class Completions:
    """Writes chat.completion bodies from the responder's replies: completions and tool calls are numbered in one
    sequence, and with ``prompt_cache`` every message prefix answered is remembered. Thread-safe."""

    def __init__(self, modes: Modes) -> None:
        self._modes = modes
        self._lock = threading.Lock()
        self._count = 0
        self._prefixes: set[str] = set()  # hashes of every message prefix answered so far

    def encoded(self, request: dict, n: int) -> tuple[bytes, dict[str, Any]]:
        """The body of the completion with ``n`` choices, as sent, and its usage."""
        body = self._body(request, n)
        data = json.dumps(body).encode()
        if "body" in self._modes.deep_nesting:  # spliced in as text: json.dumps cannot write an object this deep
            data = data[:-1] + b', "deep": ' + DEEP.encode() + b"}"
        return data, body["usage"]

    def _next(self) -> int:
        with self._lock:
            self._count += 1
            return self._count

    def _body(self, request: dict, n: int) -> dict:
        modes = self._modes
        choices = []
        completion_text = ""
        for index in range(n):
            reply = deep_reply(request, modes.deep_nesting, modes.text_tool_calls) if modes.deep_nesting else None
            message, finish_reason = self._message(modes.responder(request, index) if reply is None else reply)
            choice = {"index": index, "message": message, "finish_reason": finish_reason, "logprobs": None}
            text = _completion_text(message)
            if request.get("logprobs"):  # the OpenAI form, one entry per completion token
                choice["logprobs"] = {"content": [{"token": word, "logprob": logprob, "bytes": list(word.encode()),
                                                   "top_logprobs": []}
                                                  for word, logprob in zip(text.split(), token_logprobs(text))]}
            if request.get("return_token_ids"):  # vLLM's
                choice["token_ids"] = token_ids(text)
            choices.append(choice)
            completion_text += message["content"] or ""
            for call in message.get("tool_calls", []):
                completion_text += call["function"]["name"] + call["function"]["arguments"]
        prompt_tokens = _prompt_tokens(request)
        completion_tokens = _approx_tokens(completion_text)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if modes.prompt_cache:
            usage["prompt_tokens_details"] = {"cached_tokens": self._cached_tokens(request["messages"])}
        extra = {"prompt_token_ids": prompt_token_ids(request["messages"])} \
            if request.get("return_token_ids") else {}
        return {
            **extra,
            "id": f"chatcmpl-mock-{self._next()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model") or "mock",
            "choices": choices,
            "usage": usage,
        }

    def _cached_tokens(self, messages: list) -> int:
        """Tokens of the longest message prefix an earlier request also sent; remembers this request's prefixes."""
        digests, digest = [], ""
        for message in messages:  # chained, so each digest stands for the whole prefix up to that message
            digest = hashlib.sha256((digest + canonical(message)).encode()).hexdigest()
            digests.append(digest)
        with self._lock:
            shared = sum(1 for d in digests if d in self._prefixes)  # a seen prefix implies its own prefixes seen
            self._prefixes.update(digests)
        return _approx_tokens(json.dumps(messages[:shared])) if shared else 0

    def _message(self, reply: str | dict) -> tuple[dict, str]:
        if isinstance(reply, str):
            reply = {"content": reply}
        if not isinstance(reply, dict):
            raise TypeError(f"responder returned {type(reply).__name__}, expected str or dict")
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
        finish_reason = "stop"
        calls = reply.get("tool_calls") or []
        if calls and self._modes.text_tool_calls:
            # What a Hermes/Qwen chat template emits when the server has no tool-call parser.
            texts = (json.dumps({"name": c["name"], "arguments": decoded(c.get("arguments", {}))}) for c in calls)
            blocks = [f"<tool_call>\n{text}\n</tool_call>" for text in texts]
            message["content"] = "\n".join([message["content"], *blocks] if message["content"] else blocks)
        elif calls:
            message["tool_calls"] = []
            for call in calls:
                arguments = call.get("arguments", {})
                if not isinstance(arguments, str):
                    arguments = json.dumps(arguments)
                message["tool_calls"].append({"id": f"call_{self._next()}", "type": "function",
                                              "function": {"name": call["name"], "arguments": arguments}})
            finish_reason = "tool_calls"
        if self._modes.reasoning:
            message["content"] = f"<think>\n{_REASONING}\n</think>\n\n{message['content'] or ''}"
            message["reasoning_content"] = _REASONING
        return message, finish_reason
