"""The LLM layer: one client for every OpenAI-compatible endpoint, with retries and usage accounting."""

from occubench.llm.cache import CacheMissError, ResponseCache
from occubench.llm.client import LLMClient, RetryPolicy, as_llm_client, create_client
from occubench.llm.limiter import AdaptiveLimiter
from occubench.llm.types import Completion, Message, Reply, ToolCallRequest, Usage
from occubench.llm.model import Model
from occubench.llm.parsing import extract_tagged_json

__all__ = [
    "AdaptiveLimiter",
    "CacheMissError",
    "Completion",
    "LLMClient",
    "Message",
    "Model",
    "Reply",
    "ResponseCache",
    "RetryPolicy",
    "ToolCallRequest",
    "Usage",
    "as_llm_client",
    "create_client",
    "extract_tagged_json",
]
