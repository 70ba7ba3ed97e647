"""The LLM layer: one client for every OpenAI-compatible endpoint, with retries and usage accounting."""

from occubench.llm.client import (
    Completion,
    LLMClient,
    Message,
    Reply,
    RetryPolicy,
    ToolCallRequest,
    Usage,
    as_llm_client,
    create_client,
)
from occubench.llm.model import Model
from occubench.llm.parsing import extract_tagged_json

__all__ = [
    "Completion",
    "LLMClient",
    "Message",
    "Model",
    "Reply",
    "RetryPolicy",
    "ToolCallRequest",
    "Usage",
    "as_llm_client",
    "create_client",
    "extract_tagged_json",
]
