"""Server profiles: the known-good settings for each kind of OpenAI-compatible server a run may talk to.

A profile is named with ``--server`` or found out from the agent's endpoint (``GET /models``' ``owned_by``, and
llama.cpp's ``GET /props`` for its slots and context). Its settings apply where the run sets none, and the run
prints them; the table in the "Real endpoints" guide (docs/guides/endpoints.md) is generated from
:data:`PROFILES`.
"""

from __future__ import annotations

import base64
import urllib.request
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote, urlsplit

from occubench.llm.parsing import loads
from occubench.util.redact import redact_url

#: ``owned_by`` of ``GET /models`` entries, by the server that writes it.
_OWNERS = {"llamacpp": "llama.cpp", "me": "llama.cpp", "vllm": "vllm", "library": "ollama", "openai": "openai",
           "system": "openai", "openai-internal": "openai"}
#: Seconds each detection request may take: a server that does not answer is simply of no known kind.
_DETECT_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class ServerProfile:
    name: str
    #: Requests the server serves at once (llama.cpp: one per slot); None for no limit of its own. More workers than
    #: slots only queue, and the queue's time counts against each task's time limit.
    slots: int | None = None
    #: The agent's output cap per reply, where the run sets none: a small local model may otherwise ramble for
    #: thousands of tokens past the request timeout.
    agent_max_tokens: int | None = None
    #: The model's context in tokens, when the server says; prompts of the judge and the world model are fit to it.
    context: int | None = None
    #: What the server needs to be started with, for the guide.
    server_flags: str = ""
    #: Where the profile came from ("--server", or what detection read).
    source: str = "--server"

    def settings(self) -> dict[str, Any]:
        """The run settings this profile sets, as configuration keys."""
        return {**({"max_concurrency": self.slots, "max_connections": self.slots} if self.slots else {}),
                **({"max_tokens": self.agent_max_tokens} if self.agent_max_tokens else {}),
                **({"context_window": self.context} if self.context else {})}


PROFILES = {
    "llama.cpp": ServerProfile("llama.cpp", slots=1, agent_max_tokens=2048,
                               server_flags="`--jinja` (or llama-cpp-python `--chat_format chatml-function-calling`); "
                                            "`-np N` for N slots; `-c` sets the context"),
    "vllm": ServerProfile("vllm", server_flags="`--enable-auto-tool-choice --tool-call-parser NAME`"),
    "ollama": ServerProfile("ollama", slots=1, agent_max_tokens=2048,
                            server_flags="`OLLAMA_NUM_PARALLEL=N` for N slots; `OLLAMA_CONTEXT_LENGTH` the context"),
    "openai": ServerProfile("openai"),
    "generic": ServerProfile("generic"),
}


def _get(url: str, api_key: str | None) -> Any:
    parts = urlsplit(url)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    if parts.username is not None:
        # Credentials in the URL are basic auth, as the SDK sends them: urllib would take them for part of the host
        # name (a traceback without a port, the password in a DNS query with one).
        user = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        headers.setdefault("Authorization", "Basic " + base64.b64encode(user.encode()).decode())
        url = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=_DETECT_TIMEOUT_S) as response:  # the URL passed check_base_url
        return loads(response.read(1_000_000))


def detect(base_url: str | None, api_key: str | None) -> ServerProfile:
    """The profile of the server at ``base_url`` (the OpenAI API without one), from what it says of itself; the
    generic profile when it says nothing known."""
    if base_url is None or urlsplit(base_url).hostname == "api.openai.com":
        return replace(PROFILES["openai"], source="the endpoint's address")
    base = base_url.rstrip("/")
    shown = redact_url(base)  # the profile's source is printed
    try:
        listing = _get(f"{base}/models", api_key)
        owners = {str(model.get("owned_by")) for model in listing.get("data", []) if isinstance(model, dict)}
    except (OSError, ValueError, AttributeError, TypeError):
        return replace(PROFILES["generic"], source=f"{shown}/models gave no model list")
    name = next((_OWNERS[owner] for owner in sorted(owners) if owner in _OWNERS), "generic")
    profile = replace(PROFILES[name], source=f"owned_by {', '.join(sorted(owners)) or '-'} in {shown}/models")
    if name == "vllm":
        lengths = [m.get("max_model_len") for m in listing.get("data", []) if isinstance(m, dict)]
        context = next((n for n in lengths if isinstance(n, int) and n > 0), None)
        return replace(profile, context=context)
    if name == "llama.cpp":
        return _llama_props(profile, base, api_key)
    return profile


def _llama_props(profile: ServerProfile, base: str, api_key: str | None) -> ServerProfile:
    """llama.cpp's server says its slots and context at ``/props`` (llama-cpp-python's has no such page: one slot,
    context unknown)."""
    root = base.removesuffix("/v1")
    try:
        props = _get(f"{root}/props", api_key)
        slots = props.get("total_slots")
        context = props.get("default_generation_settings", {}).get("n_ctx")
    except (OSError, ValueError, AttributeError, TypeError):
        return profile
    return replace(profile, slots=slots if isinstance(slots, int) and slots > 0 else profile.slots,
                   context=context if isinstance(context, int) and context > 0 else None,
                   source=f"{profile.source} and {redact_url(root)}/props")


def profile_table() -> str:
    """The endpoints guide's table of profiles (Markdown), from :data:`PROFILES`."""
    rows = ["| `--server` | Requests at once (`--max-concurrency`, `--max-connections`) | Agent output cap "
            "(`--max-tokens`) | Context (`--context-window`) | Start the server with |", "|---|---|---|---|---|"]
    for profile in PROFILES.values():
        rows.append(f"| `{profile.name}` | {profile.slots or 'as the run asks'}"
                    f"{' (its slots, when it says)' if profile.name == 'llama.cpp' else ''} | "
                    f"{profile.agent_max_tokens or 'none'} | "
                    f"{'from the server, when it says' if profile.name in ('llama.cpp', 'vllm') else 'none'} | "
                    f"{profile.server_flags or '-'} |")
    return "\n".join(rows)
