"""The models of a run's roles: built from typed settings on shared clients (one per endpoint), checked before a
run pays for anything (the preflight), and fitted to the agent's server (its profile)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any, cast

from rich.console import Console

from occubench.config import Endpoint, ModelRole, RunConfig, Settings
from occubench.errors import ConfigError, LLMError
from occubench.util.aio import run_sync

if TYPE_CHECKING:
    from occubench.llm import LLMClient, Model, ResponseCache
    from occubench.llm.cache import Cache
    from occubench.llm.limiter import Limiter


def preflight(models: dict[str, Model], endpoints: dict[str, Endpoint], budget_s: float, console: Console) -> None:
    """One tiny request per distinct endpoint and model, so a wrong key, URL or model stops the run at once. The
    roles' requests go out together; a failure is reported for the first role, in the roles' order."""
    for role, endpoint in endpoints.items():
        if endpoint.base_url is None and endpoint.api_key is None:
            raise ConfigError(f"no API key for the {role}: the OpenAI API needs one (--{role}-api-key, --api-key or "
                              "OPENAI_API_KEY), or point --base-url at a server that needs none")
    distinct: dict[tuple[int, str, str], tuple[str, Model]] = {}
    for role, model in models.items():
        distinct.setdefault((id(model.client), model.name, json.dumps(model.params, sort_keys=True)), (role, model))
    run_sync(_probe_all(list(distinct.values()), budget_s, console))


async def _probe_all(roles: list[tuple[str, Model]], budget_s: float, console: Console) -> None:
    outcomes = await asyncio.gather(*(_probe(role, model, budget_s, console) for role, model in roles),
                                    return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome


async def _probe(role: str, model: Model, budget_s: float, console: Console) -> None:
    """The role's plain request and, for the agent, its tool-call check, sent together: a failure of the plain one
    is reported first (a wrong key or model fails both)."""
    client = cast("LLMClient", model.client)  # a run's models come from build_models, on endpoints
    checks: list[Coroutine[Any, Any, bool | None]] = [
        client.aprobe(model.name, model.params, budget_s=budget_s, role=role)]
    if role == "agent":
        checks.append(client.aprobe_tools(model.name, model.params))
    plain, *tools = await asyncio.gather(*checks, return_exceptions=True)
    if isinstance(plain, LLMError):
        hint = {401: f"check --{role}-api-key, --api-key or OPENAI_API_KEY",
                403: f"check --{role}-api-key, --api-key or OPENAI_API_KEY",
                404: f"check --{role}-model and --{role}-base-url"}.get(getattr(plain, "status_code", 0),
                                                                         f"check --{role}-base-url and the "
                                                                         f"{role} parameters")
        raise ConfigError(f"preflight failed: {plain} ({hint})") from None
    for outcome in (plain, *tools):
        if isinstance(outcome, BaseException) and not isinstance(outcome, LLMError):
            raise outcome
    if tools:
        _tool_check(tools[0], model, console)


def _tool_check(outcome: bool | BaseException | None, model: Model, console: Console) -> None:
    """The agent's tool-call check, its plain request having passed: a failure is the server refusing requests
    with tools as the run sends them, and says so."""
    choice = model.params.get("tool_choice", "auto")
    if isinstance(outcome, BaseException):
        raise ConfigError(
            f"preflight failed: the agent's tool-call check (a request with one tool and tool_choice {choice!r}, "
            f"as the run sends them) failed, though a plain request passed: {outcome}. The server does not take "
            "tools this way: start it with a function-calling chat format (llama.cpp: --jinja or --chat_format "
            "chatml-function-calling; vLLM: --enable-auto-tool-choice --tool-call-parser NAME), or pass "
            "--agent-params '{\"tool_choice\": \"omit\"}' for a server that takes tools without tool_choice; "
            "--skip-preflight skips the checks") from None
    if not outcome:
        console.print("[yellow]warning: the agent endpoint answered a request that asked for a tool call "
                      "without calling it: it may ignore tools (llama.cpp needs a function-calling chat format, vLLM "
                      "--enable-auto-tool-choice with a --tool-call-parser; see docs/guides/endpoints.md)[/yellow]")


def with_server_profile(config: RunConfig, console: Console) -> RunConfig:
    """``config`` with the profile of the agent's server (``--server``, or found out from the endpoint) applied
    where the run sets nothing, and said on ``console`` (:mod:`occubench.llm.servers`)."""
    if config.agent != "llm" or config.replay or config.rescore:
        return config
    from occubench.llm.servers import PROFILES, detect

    endpoint = config.endpoint("agent")
    profile = PROFILES[config.server] if config.server != "auto" else detect(endpoint.base_url, endpoint.api_key)
    applied = {key: value for key, value in profile.settings().items() if key not in config.model_fields_set}
    if not applied:
        return config
    console.print(f"Server profile {profile.name} ({profile.source}): " +
                  ", ".join(f"--{key.replace('_', '-')} {value}" for key, value in applied.items()) +
                  " (each flag given overrides it)")
    return config.model_copy(update=applied)


def connection_limit(settings: Settings) -> int:
    """Requests in flight per endpoint at most: ``max_connections``, else 32 or ``max_concurrency`` if more."""
    return settings.max_connections or max(32, settings.max_concurrency)


def build_models(settings: Settings, roles: Iterable[ModelRole], cache: Cache | None = None,
                 clients: dict[Endpoint, LLMClient] | None = None, *,
                 limiter: Callable[[Endpoint], Limiter] | None = None) -> dict[str, Model]:
    """The model of each of ``roles``; roles on the same endpoint and key share one client, its connections and its
    limiter — and with the runs that pass the same ``clients``, which holds the clients by endpoint. ``limiter``
    gives each endpoint's client a limiter shared beyond this process (a Ray cluster's) instead of its own."""
    from occubench import llm  # the HTTP client loads only for runs that call models

    roles = list(roles)
    clients = {} if clients is None else clients
    for endpoint in {role.endpoint for role in roles} - set(clients):
        clients[endpoint] = llm.LLMClient(endpoint.api_key, endpoint.base_url, timeout_s=settings.request_timeout,
                                          retry=llm.RetryPolicy(budget_s=settings.retry_budget),
                                          max_in_flight=connection_limit(settings),
                                          adaptive=not settings.fixed_concurrency, cache=cache,
                                          limiter=limiter(endpoint) if limiter else None)
    return {role.role: llm.Model(clients[role.endpoint], role.model or "", role.params, role.role) for role in roles}


class RunGroup:
    """What runs made together in one process share (``occubench.run_matrix``): one client per endpoint, so its
    connection limit and adaptive back-off hold across all of them; one response cache per file; and the terminal,
    where each run's progress comes as plain lines tagged with its name."""

    def __init__(self) -> None:
        self.clients: dict[Endpoint, LLMClient] = {}
        self.caches: dict[str, ResponseCache] = {}
        self.lock = threading.Lock()

    def cache(self, path: str, replay: bool) -> ResponseCache:
        from occubench.llm import ResponseCache

        with self.lock:  # opened once: each ResponseCache holds a connection to the file
            if path not in self.caches:
                self.caches[path] = ResponseCache(path, replay=replay)
            return self.caches[path]

    def close(self) -> None:
        for cache in self.caches.values():
            cache.close()
