"""OpenEnv's wire format (``openenv`` 0.10), as its own clients send and read it; no code of OpenEnv's, only its facts.

- WebSocket ``/ws``: the client sends ``{"type": "reset", "data": {...}}``, ``{"type": "step", "data": ACTION}``,
  ``{"type": "state"}``, ``{"type": "mcp", "data": JSON-RPC}`` or ``{"type": "close"}``, one at a time, and reads
  ``{"type": "observation", "data": STEP}``, ``{"type": "state", "data": {...}}``, ``{"type": "mcp", "data":
  JSON-RPC}`` or ``{"type": "error", "data": {"message": ..., "code": ...}}``. A STEP is ``{"observation": {...,
  "metadata": {...}}, "reward": ..., "done": ...}`` and, when there is metadata, ``"metadata"`` beside them.
- The MCP-style actions: ``{"type": "list_tools"}`` (observation ``{"tools": [{"name", "description",
  "input_schema"}]}``) and ``{"type": "call_tool", "tool_name": ..., "arguments": {...}}`` (observation
  ``{"tool_name", "result", "error"}``, ``error`` being ``{"error_type", "message"}`` for a call the framework
  could not make). A result is MCP's CallToolResult with ``data``, which ``MCPToolClient.call_tool`` returns.
- HTTP ``POST /mcp``: JSON-RPC 2.0 with ``openenv/session/create`` (result ``{"session_id"}``), ``tools/list`` and
  ``tools/call`` (``params.session_id`` naming the session), ``openenv/session/close``. A WebSocket opened with
  ``?session_id=...`` plays that session.
"""

from __future__ import annotations

from typing import Any

from occubench.core.environment import JSONObject
from occubench.core.images import Image
from occubench.core.tools import ToolSpec
from occubench.util.jsonl import loads_line
from occubench.util.jsonsafe import dumps

# The WebSocket error codes.
INVALID_JSON = "INVALID_JSON"
UNKNOWN_TYPE = "UNKNOWN_TYPE"
VALIDATION_ERROR = "VALIDATION_ERROR"
EXECUTION_ERROR = "EXECUTION_ERROR"
CAPACITY_REACHED = "CAPACITY_REACHED"
SESSION_ERROR = "SESSION_ERROR"
TASK_TAKEN = "TASK_TAKEN"  # ours: every episode of the task asked for is under way or done
# JSON-RPC 2.0's error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_ERROR = -32000


class ProtocolError(Exception):
    """A request refused, with its WebSocket error code and its JSON-RPC one."""

    def __init__(self, message: str, code: str = VALIDATION_ERROR, rpc: int = INVALID_PARAMS) -> None:
        super().__init__(message)
        self.code, self.rpc = code, rpc


def parse(text: str | bytes) -> Any:
    """A message's JSON; too long, too deep or not JSON: :class:`ProtocolError`."""
    try:
        return loads_line(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    except ValueError as exc:
        raise ProtocolError(f"Invalid JSON: {exc}", INVALID_JSON, PARSE_ERROR) from None


def frame(kind: str, data: Any) -> str:
    return dumps({"type": kind, "data": data})


def error_frame(error: ProtocolError) -> str:
    return frame("error", {"message": str(error), "code": error.code})


def step(observation: JSONObject, *, reward: float | None = None, done: bool = False,
         metadata: JSONObject | None = None) -> JSONObject:
    """An observation frame's data: OpenEnv's server keeps the metadata in the observation and repeats it beside."""
    data: JSONObject = {"observation": {**observation, "metadata": metadata or {}}, "reward": reward, "done": done}
    if metadata:
        data["metadata"] = metadata
    return data


def tool(spec: ToolSpec) -> JSONObject:
    return {"name": spec.name, "description": spec.description, "input_schema": spec.parameters}


def call_result(observation: JSONObject, images: list[Image]) -> JSONObject:
    """A call's result as MCP's CallToolResult (the observation as text and as structured content, then each image),
    with the observation as ``data``, what OpenEnv's MCP client returns from ``call_tool``."""
    content = [{"type": "text", "text": dumps(observation)},
               *({"type": "image", "data": image.encoded(), "mimeType": image.media_type} for image in images)]
    return {"content": content, "structured_content": observation, "data": observation,
            "is_error": "error" in observation}


def action(data: Any) -> tuple[str, str, JSONObject]:
    """A step's action: ("list_tools", "", {}) or ("call_tool", tool, arguments)."""
    if not isinstance(data, dict):
        raise ProtocolError("an action is a JSON object")
    if data.get("type") == "list_tools":
        return "list_tools", "", {}
    if data.get("type") != "call_tool":
        raise ProtocolError("the actions are {\"type\": \"list_tools\"} and {\"type\": \"call_tool\", \"tool_name\": "
                            "..., \"arguments\": {...}}")
    name, arguments = data.get("tool_name"), data.get("arguments", {})
    if not isinstance(name, str) or not isinstance(arguments, dict):
        raise ProtocolError("call_tool: tool_name is a string and arguments a JSON object")
    return "call_tool", name, arguments


def task_asked(data: Any) -> int | str | None:
    """The task a reset asks for (``task_id``), None for the run's next; any other field is ignored, as OpenEnv's
    servers ignore the fields their environment does not take."""
    if not isinstance(data, dict):
        raise ProtocolError("reset: data is a JSON object")
    asked = data.get("task_id")
    if asked is not None and (isinstance(asked, bool) or not isinstance(asked, (int, str))):
        raise ProtocolError("reset: task_id is a task's id, a string or an integer")
    return asked


def rpc_result(request_id: Any, result: Any) -> JSONObject:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def rpc_error(request_id: Any, code: int, message: str, kind: str | None = None) -> JSONObject:
    """A JSON-RPC error; ``kind``, the WebSocket code, goes in its ``data`` so that a client tells refusals apart
    by code, as JSON-RPC gives them all one (OpenEnv's -32000 or -32602)."""
    error: JSONObject = {"code": code, "message": message}
    if kind is not None:
        error["data"] = {"code": kind}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def rpc_id(request: Any) -> Any:
    """A request's id if it is one JSON-RPC allows, else None (the answer to a request that has none)."""
    value = request.get("id") if isinstance(request, dict) else None
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None
