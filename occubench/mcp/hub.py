"""The HTTP side of episodes over MCP: each open episode's MCP server, and the one HTTP server that serves them.

Every open :class:`Episode` is reached at ``http://HOST:PORT/episodes/<id>/mcp``; its ``<id>`` is its credential:
long, random, made for that episode alone, and looked up so that how long the lookup takes says nothing about it.
No route tells an id to a client that does not hold it: ``GET /episodes`` (the open episodes, for a script that
hands them out) needs the serve token, and does not exist in a run whose episodes are played by programs
(``--agent command:``), which are each given their own URL. Off loopback every request needs the token. Every
request, to any route, must name the address served in its Host (and any Origin) header, against DNS rebinding.
An episode holds at most :data:`MAX_SESSIONS` MCP sessions, each closed after the session idle timeout, so a
client that opens sessions and leaves them cannot make the server grow.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import json
import secrets
import socket
import time
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import mcp_types as types
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from occubench import telemetry
from occubench.core.agent import AsyncAgent, make_call, system_prompt
from occubench.core.environment import Environment, JSONObject
from occubench.core.images import Image
from occubench.core.task import Task
from occubench.core.tools import ToolSpec, tool_error
from occubench.core.trajectory import Step, ToolCall, Trajectory
from occubench.errors import AgentError, ConfigError
from occubench.llm.ledger import seconds_left
from occubench.mcp.server import (
    TOKEN_VARIABLE,
    BearerAuth,
    is_loopback,
    mcp_tool,
    refusal,
    tool_result,
    transport_security,
)
from occubench.util.jsonsafe import dumps

T = TypeVar("T")

SUBMIT = "submit"
INSTRUCTION_URI = "episode://instruction"
#: How an outside agent ends its episode (its part of the system prompt).
FINISH = "call the submit tool with your final answer"
#: A client that ends its MCP session has this long to open another (some clients open one per request) before
#: the episode is taken as abandoned.
RECONNECT_SECONDS = 30.0
#: After an answer, how long a program has to exit, and a client to end its session, before they are stopped.
AFTER_ANSWER = 10.0
#: The MCP sessions one episode may hold open at once (a client opens one, or one per request and ends each); a
#: request that would open one more is refused (503) until one ends or goes idle.
MAX_SESSIONS = 16
#: How long an MCP session may send nothing before it is closed, unless the agent says otherwise.
SESSION_IDLE = 900.0


def _detached(coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
    """A task that carries none of the caller's context: the server outlives the episode that started it, and
    must not count its work against that episode's ledger."""
    return contextvars.Context().run(asyncio.ensure_future, coroutine)


@dataclass
class _Call:
    """A tool call the session hands to the episode's coroutine, and where its observation goes."""

    name: str
    arguments: dict[str, Any]
    #: The observation, and the images sent with it.
    reply: asyncio.Future[tuple[JSONObject, list[Image]]]
    #: The caller's trace context: the request's ``_meta`` (MCP's convention), else its HTTP headers.
    trace: dict[str, str] | None = None


@dataclass
class _Gone:
    """The client went away (why), or, with no reason, may have: the episode's coroutine looks again."""

    why: str = ""


@dataclass
class Episode:
    """One open episode's MCP server and the calls its session has handed over."""

    task: Task
    specs: list[ToolSpec]
    instructions: str
    #: Whether the client's model takes images: an observation's images are then sent as image content.
    images: bool = False
    #: Its credential: who holds its URL plays it.
    id: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    inbox: asyncio.Queue[_Call | _Gone] = field(default_factory=asyncio.Queue)
    #: When the client last sent anything (a request of any kind).
    last_seen: float | None = None
    #: Whether its last request ended its MCP session: unless another comes soon, the client has gone.
    session_ended: bool = False
    over: bool = False
    #: Whether the client ending its MCP session may end the episode (a program's episode ends when it exits).
    ends_with_session: bool = True
    #: Who plays it, as the record of an episode it left says.
    client: str = "MCP client"
    #: Set when the episode's coroutine is done with it: the server lingers until the client leaves, or briefly.
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    left: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        names = {spec.name for spec in self.specs}
        self.submit = next(name for name in (SUBMIT, f"{SUBMIT}_answer", f"occubench_{SUBMIT}") if name not in names)
        self.app: StreamableHTTPASGIApp | None = None

    @property
    def sessions(self) -> int:
        """How many MCP sessions of this episode are open (the SDK keeps no public count)."""
        return len(self.app.session_manager._server_instances) if self.app is not None else 0

    def summary(self, url: str) -> dict[str, Any]:
        return {"id": self.id, "url": url, "task_id": self.task.task_id, "scenario": self.task.scenario,
                "instruction": self.task.instruction, "connected": self.last_seen is not None}

    def submit_spec(self) -> ToolSpec:
        """The tool that ends the episode with the agent's final answer."""
        return ToolSpec(self.submit, "Give your final answer and end the task. Call it once, when done.",
                        {"type": "object", "properties": {"answer": {"type": "string",
                                                                     "description": "your final answer"}},
                         "required": ["answer"]})

    def server(self) -> Server[Any]:
        """The episode's MCP server: its handlers hand calls to the episode's coroutine and await the answer."""
        tools = [*map(mcp_tool, self.specs), mcp_tool(self.submit_spec())]
        prompt = types.Prompt(name="task", description="The task to carry out")
        resource = types.Resource(uri=INSTRUCTION_URI, name="instruction", mime_type="text/markdown",
                                  description="The task to carry out")

        async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
            return types.ListToolsResult(tools=tools)

        async def call_tool(ctx: ServerRequestContext[Any],
                            params: types.CallToolRequestParams) -> types.CallToolResult:
            trace = telemetry.carried(ctx.meta) or telemetry.carried(getattr(ctx.request, "headers", None))
            return tool_result(*await self.call(params.name, dict(params.arguments or {}), trace))

        async def list_prompts(ctx: ServerRequestContext[Any], params: Any) -> types.ListPromptsResult:
            return types.ListPromptsResult(prompts=[prompt])

        async def get_prompt(ctx: ServerRequestContext[Any],
                             params: types.GetPromptRequestParams) -> types.GetPromptResult:
            return types.GetPromptResult(description=prompt.description, messages=[
                types.PromptMessage(role="user", content=types.TextContent(text=self.task.instruction))])

        async def list_resources(ctx: ServerRequestContext[Any], params: Any) -> types.ListResourcesResult:
            return types.ListResourcesResult(resources=[resource])

        async def read_resource(ctx: ServerRequestContext[Any],
                                params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
            return types.ReadResourceResult(contents=[types.TextResourceContents(
                uri=INSTRUCTION_URI, mime_type="text/markdown", text=self.task.instruction)])

        schemas = {tool.name: tool.input_schema for tool in tools}
        return Server(f"occubench-{self.task.scenario or 'episode'}", instructions=self.instructions,
                      on_list_tools=list_tools, on_call_tool=call_tool, on_list_prompts=list_prompts,
                      on_get_prompt=get_prompt, on_list_resources=list_resources, on_read_resource=read_resource,
                      get_tool_input_schema=schemas.get)

    async def call(self, name: str, arguments: dict[str, Any],
                   trace: dict[str, str] | None = None) -> tuple[JSONObject, list[Image]]:
        """Hand a call (and its caller's ``trace`` context) to the episode's coroutine and await its observation and
        the images sent with it (once the episode is over, an observation that says so)."""
        if self.over:
            return _ended(), []
        reply: asyncio.Future[tuple[JSONObject, list[Image]]] = asyncio.get_running_loop().create_future()
        self.inbox.put_nowait(_Call(name, arguments, reply, trace))
        return await reply

    def gone(self, why: str) -> None:
        """The client went away (``why``): the episode's coroutine stops waiting for it."""
        self.inbox.put_nowait(_Gone(why))

    def seen(self, request: str) -> None:
        """The client sent ``request`` (an HTTP method): a DELETE ends its MCP session."""
        self.last_seen = time.monotonic()
        self.session_ended = request == "DELETE"
        if self.session_ended:
            self.left.set()
            if not self.over and self.ends_with_session:
                self.inbox.put_nowait(_Gone())  # the coroutine's wait shortens to the reconnection grace

    async def play(self, env: Environment, trajectory: Trajectory, max_steps: int, idle: float | None,
                   deadline: float | None) -> None:
        """Make the session's calls until it submits, a limit is reached or the client goes (:class:`AgentError`,
        unless the episode has a program: then it returns without a stop reason and the agent decides).
        ``deadline`` is a :func:`time.monotonic` time; ``idle`` counts from the client's last request."""
        env_calls = 0
        trajectory.system_prompt = self.instructions
        pending: _Call | None = None  # a call under way when the world fails gets an answer all the same
        try:
            while True:
                item = await self._next(idle, deadline)
                if item is None:
                    trajectory.stop_reason = "max_seconds_per_task"
                    return
                if isinstance(item, _Gone):
                    if not item.why:
                        continue
                    raise AgentError(item.why)
                if item.name == self.submit:
                    answer = item.arguments.get("answer")
                    if not isinstance(answer, str):
                        _answer(item, tool_error("invalid_arguments", "answer: a string is required"))
                        continue
                    trajectory.steps.append(Step(content=answer))
                    trajectory.final_answer, trajectory.stop_reason = answer, "answer"
                    _answer(item, {"status": "submitted"})
                    return
                record = ToolCall(name=item.name, arguments=dumps(item.arguments), observation={})
                trajectory.steps.append(Step(content=None, tool_calls=[record]))
                pending = item
                telemetry.incoming(item.trace)  # its tool span is linked to the agent's
                images: list[Image] | None = [] if self.images else None
                env_calls += await make_call(env, self.specs, record, env_calls, images)
                _answer(item, record.observation, images)
                if len(trajectory.steps) >= max_steps:
                    trajectory.stop_reason = "max_steps"
                    return
        finally:
            self.over = True
            if pending is not None:
                _answer(pending, _ended())
            while not self.inbox.empty():
                if isinstance(left := self.inbox.get_nowait(), _Call):
                    _answer(left, _ended())

    async def _next(self, idle: float | None, deadline: float | None) -> _Call | _Gone | None:
        """The next thing the session hands over; None at the deadline."""
        while True:
            limit = deadline - time.monotonic() if deadline is not None else None
            if (left := seconds_left()) is not None:
                limit = left if limit is None else min(limit, left)
            if limit is not None and limit <= 0:
                return None
            quiet = idle  # how long the client may stay silent
            if self.session_ended and self.ends_with_session:
                quiet = RECONNECT_SECONDS if idle is None else min(idle, RECONNECT_SECONDS)
            waits = [wait for wait in (quiet, limit) if wait is not None]
            try:
                return await asyncio.wait_for(self.inbox.get(), min(waits) if waits else None)
            except asyncio.TimeoutError:
                if quiet is not None and self.last_seen is not None and time.monotonic() - self.last_seen >= quiet:
                    return _Gone(f"the {self.client} ended its session and opened no other for {quiet:g} s"
                                 if self.session_ended else f"the {self.client} sent nothing for {quiet:g} s")


def _ended() -> JSONObject:
    return tool_error("tool_error", "this episode has ended; no call reaches its world")


def _answer(call: _Call, observation: JSONObject, images: list[Image] | None = None) -> None:
    if not call.reply.done():  # the session may have gone while the call was made
        call.reply.set_result((observation, images or []))


def _key(episode_id: str) -> bytes:
    """Where an episode is filed: a dictionary lookup compares keys byte by byte, so it compares digests, whose
    prefixes say nothing about the id."""
    return hashlib.sha256(episode_id.encode("utf-8", "surrogatepass")).digest()


class EpisodeHub:
    """The HTTP server of one event loop's open episodes: it starts with the first episode and stops after the
    last, so a run leaves nothing listening.

    ``token``, the serve token, guards the listing of the open episodes (``listing``: whether there is one), and
    every request when ``host`` is not loopback. ``session_idle`` seconds: how long an MCP session may send nothing
    before it is closed (None: never; the cap of :data:`MAX_SESSIONS` still holds)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, token: str | None = None,
                 allowed_hosts: tuple[str, ...] = (), *, listing: bool = True,
                 session_idle: float | None = SESSION_IDLE) -> None:
        self.host, self.port, self.token, self.session_idle = host, port, token, session_idle
        self.security = transport_security(host, allowed_hosts)
        self.episodes: dict[bytes, Episode] = {}
        self._listing: ASGIApp | None = None
        if listing:
            self._listing = BearerAuth(self._list, token) if token else PlainTextResponse(
                f"listing the episodes needs the serve token: serve with ${TOKEN_VARIABLE} or --token-file",
                status_code=403)
        self._server: uvicorn.Server | None = None
        self._serving: asyncio.Task[None] | None = None
        self._bound = 0
        self._lock: asyncio.Lock | None = None
        self._listen().close()  # an address that cannot be served stops the run before it starts

    def _listen(self) -> socket.socket:
        try:
            return socket.create_server((self.host, self.port), backlog=1024,
                                        family=socket.AF_INET6 if ":" in self.host else socket.AF_INET)
        except OSError as exc:
            raise ConfigError(f"cannot serve MCP episodes on {self.host}:{self.port}: {exc.strerror or exc} "
                              "(--host/--port of occubench serve; serve_host/serve_port in a config)") from None

    def url(self, episode: Episode) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self._bound}/episodes/{episode.id}/mcp"

    @contextlib.asynccontextmanager
    async def serving(self, episode: Episode, linger: float = AFTER_ANSWER) -> AsyncIterator[str]:
        """Serve ``episode`` for the body of the ``with``; its URL. Afterwards its server stays up until the client
        ends its session or ``linger`` seconds pass, so the answer to its last call reaches it."""
        self._lock = self._lock or asyncio.Lock()
        async with self._lock:
            if self._server is None:
                await self._start()
            ready = asyncio.Event()
            self.episodes[_key(episode.id)] = episode
            runner = _detached(self._run_episode(episode, ready, linger))
            await ready.wait()
            if runner.done():  # the episode's server could not start
                runner.result()
        try:
            yield self.url(episode)
        finally:
            episode.over = True
            episode.finished.set()

    async def _run_episode(self, episode: Episode, ready: asyncio.Event, linger: float) -> None:
        manager = StreamableHTTPSessionManager(app=episode.server(), security_settings=self.security,
                                               session_idle_timeout=self.session_idle, max_sessions=MAX_SESSIONS)
        episode.app = StreamableHTTPASGIApp(manager)
        try:
            async with manager.run():
                ready.set()
                await episode.finished.wait()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(episode.left.wait(), linger)
        finally:
            ready.set()
            self.episodes.pop(_key(episode.id), None)
            assert self._lock is not None
            async with self._lock:
                if not self.episodes and self._server is not None:
                    await self._stop()

    async def _start(self) -> None:
        sock = self._listen()
        self._bound = sock.getsockname()[1]
        app = self if is_loopback(self.host) or not self.token else BearerAuth(self, self.token)
        self._server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_config=None, access_log=False,
                                                    timeout_graceful_shutdown=1))
        self._serving = _detached(self._server.serve(sockets=[sock]))
        while not self._server.started and not self._serving.done():
            await asyncio.sleep(0.005)
        if self._serving.done():
            self._serving.result()

    async def _stop(self) -> None:
        assert self._server is not None and self._serving is not None
        self._server.should_exit = True
        await self._serving
        self._server = self._serving = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        parts = scope["path"].strip("/").split("/")
        endpoint = len(parts) == 3 and parts[::2] == ["episodes", "mcp"]
        episode = self.episodes.get(_key(parts[1])) if endpoint else None
        if (refused := refusal(self.security, scope)) is not None:  # every route: a 404 is an answer too
            await refused(scope, receive, send)
        elif parts == ["episodes"] and scope["method"] == "GET" and self._listing is not None:
            await self._listing(scope, receive, send)
        elif episode is None or episode.app is None:
            await PlainTextResponse("no such episode (it may have ended)", status_code=404)(scope, receive, send)
        else:
            episode.seen(scope["method"])
            await episode.app(scope, receive, send)
            episode.seen(scope["method"])

    async def _list(self, scope: Scope, receive: Receive, send: Send) -> None:
        listing = [episode.summary(self.url(episode)) for episode in self.episodes.values() if not episode.over]
        # ASCII-escaped: an instruction with a lone surrogate is still valid JSON on the wire.
        await Response(json.dumps(listing), media_type="application/json")(scope, receive, send)


class OutsideAgent(AsyncAgent):
    """What the agents that play over MCP share: the hub that serves their episodes, and how an episode is made."""

    def __init__(self, hub: EpisodeHub, *, max_steps: int, date: str, with_plan: bool, images: bool) -> None:
        self.hub, self.max_steps, self.date, self.with_plan, self.images = hub, max_steps, date, with_plan, images

    def episode(self, task: Task, env: Environment) -> Episode:
        return Episode(task, env.tools(), system_prompt(task, self.date, self.with_plan, FINISH), self.images)


def one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 300 else line[:297] + "..."
