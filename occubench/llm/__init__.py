"""The LLM layer: one client for every OpenAI-compatible endpoint, with retries, concurrency limits, a response
cache and usage accounting, and the one loop that asks a model again while its output cannot be parsed. Names load
on first use. The ``openai`` SDK is optional (the ``openai`` extra): the client's requests go without it, and only
a client the user built with the SDK, or an endpoint whose URL carries credentials, uses it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.util.lazy import lazy_exports

_EXPORTS = {
    "Parsed": "occubench.llm.ask", "Unusable": "occubench.llm.ask", "ask_json": "occubench.llm.ask",
    "aask_json": "occubench.llm.ask",
    "CacheMissError": "occubench.llm.cache", "ResponseCache": "occubench.llm.cache",
    "LLMClient": "occubench.llm.client", "RetryPolicy": "occubench.llm.retry",
    "as_llm_client": "occubench.llm.client", "create_client": "occubench.llm.client",
    "AdaptiveLimiter": "occubench.llm.limiter",
    "Completion": "occubench.llm.types", "Message": "occubench.llm.types", "Reply": "occubench.llm.types",
    "ToolCallRequest": "occubench.llm.types", "Usage": "occubench.llm.types",
    "ChatClient": "occubench.llm.model", "Model": "occubench.llm.model",
    "extract_tagged_json": "occubench.llm.parsing",
}

__all__ = [
    "AdaptiveLimiter", "CacheMissError", "ChatClient", "Completion", "LLMClient", "Message", "Model", "Parsed", "Reply",
    "ResponseCache", "RetryPolicy", "ToolCallRequest", "Unusable", "Usage", "aask_json", "as_llm_client", "ask_json",
    "create_client", "extract_tagged_json"
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from occubench.llm.ask import Parsed, Unusable, aask_json, ask_json
    from occubench.llm.cache import CacheMissError, ResponseCache
    from occubench.llm.client import LLMClient, as_llm_client, create_client
    from occubench.llm.limiter import AdaptiveLimiter
    from occubench.llm.model import ChatClient, Model
    from occubench.llm.parsing import extract_tagged_json
    from occubench.llm.retry import RetryPolicy
    from occubench.llm.types import Completion, Message, Reply, ToolCallRequest, Usage
