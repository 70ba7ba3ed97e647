"""Episodes over MCP: an agent outside occubench plays each episode through an MCP endpoint of its own.

Every open episode has a URL, ``http://HOST:PORT/episodes/<id>/mcp`` (``<id>`` unguessable), served by the process's
:class:`EpisodeHub` over the streamable HTTP transport: the task's tools — through the tool contract and the run's
wrappers, so faults are injected as in any run — and ``submit``, which gives the final answer and ends the episode.
The task's instruction is the prompt ``task`` and the resource ``episode://instruction``; the server's
instructions are what the built-in agent's system prompt says. ``GET /episodes`` lists the open episodes as JSON.

The agents are ordinary :class:`~occubench.core.agent.AsyncAgent`\\ s, so the engine runs, verifies and stores
these episodes as any other (``report``, ``compare``, ``view`` and ``rescore`` read them unchanged):
:class:`McpAgent` (``--agent mcp``, ``occubench serve`` with run flags) waits for outside clients and prints each
episode's URL and instruction; :class:`CommandAgent` (``--agent command:'PROGRAM ARGS'``) starts a program per
episode with the URL and an instruction file. Every call of an episode is made by the agent's own coroutine, the
MCP session only hands it over, so the episode's world, limits and usage stay its own.

An episode ends at ``submit``, at ``--max-steps`` calls or ``--max-seconds-per-task`` (judged on what was done,
as for the built-in agent), or when its client goes: an MCP session the client ends, one that sends nothing for
the idle timeout, a program that exits without an answer. That is an ``agent`` error, not scored.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import os
import secrets
import shlex
import shutil
import socket
import tempfile
import time
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import mcp_types as types
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from rich.console import Console
from rich.markup import escape
from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from occubench.config import parse_command
from occubench.core.agent import AsyncAgent, make_call, system_prompt
from occubench.core.environment import Environment, JSONObject
from occubench.core.task import Task
from occubench.core.tools import ToolSpec, tool_error
from occubench.core.trajectory import Step, ToolCall, Trajectory
from occubench.engine.registry import AgentContext
from occubench.errors import AgentError, ConfigError
from occubench.llm.ledger import seconds_left
from occubench.mcp.server import BearerAuth, is_loopback, mcp_tool, serve_token, tool_result, transport_security
from occubench.util.jsonsafe import dumps

T = TypeVar("T")

SUBMIT = "submit"
INSTRUCTION_URI = "episode://instruction"
#: How an outside agent ends its episode (its part of the system prompt).
FINISH = "call the submit tool with your final answer"
#: A program's episode without --max-seconds-per-task ends after this long (a program that hangs must not hang
#: the run).
COMMAND_SECONDS = 1800.0
#: A client that ends its MCP session has this long to open another (some clients open one per request) before
#: the episode is taken as abandoned.
RECONNECT_SECONDS = 30.0
#: After an answer, how long a program has to exit, and a client to end its session, before they are stopped.
AFTER_ANSWER = 10.0
#: The longest stdout and stderr kept of a program, each (its last part: where answers and tracebacks are).
OUTPUT_KEPT = 1 << 20


def _detached(coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
    """A task that carries none of the caller's context: the server outlives the episode that started it, and
    must not count its work against that episode's ledger."""
    return contextvars.Context().run(asyncio.ensure_future, coroutine)


@dataclass
class _Call:
    """A tool call the session hands to the episode's coroutine, and where its observation goes."""

    name: str
    arguments: dict[str, Any]
    reply: asyncio.Future[JSONObject]


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
    id: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    inbox: asyncio.Queue[_Call | _Gone] = field(default_factory=asyncio.Queue)
    #: When the client last sent anything (a request of any kind).
    last_seen: float | None = None
    #: Whether its last request ended its MCP session: unless another comes soon, the client has gone.
    session_ended: bool = False
    over: bool = False
    #: Whether the client ending its MCP session may end the episode (a program's episode ends when it exits).
    ends_with_session: bool = True
    #: Set when the episode's coroutine is done with it: the server lingers until the client leaves, or briefly.
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    left: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        names = {spec.name for spec in self.specs}
        self.submit = next(name for name in (SUBMIT, f"{SUBMIT}_answer", f"occubench_{SUBMIT}") if name not in names)
        self.app: StreamableHTTPASGIApp | None = None

    def summary(self, url: str) -> dict[str, Any]:
        return {"id": self.id, "url": url, "task_id": self.task.task_id, "scenario": self.task.scenario,
                "instruction": self.task.instruction, "connected": self.last_seen is not None}

    def server(self) -> Server[Any]:
        """The episode's MCP server: its handlers hand calls to the episode's coroutine and await the answer."""
        tools = [*map(mcp_tool, self.specs), types.Tool(
            name=self.submit, description="Give your final answer and end the task. Call it once, when done.",
            input_schema={"type": "object", "properties": {"answer": {"type": "string",
                                                                      "description": "your final answer"}},
                          "required": ["answer"]})]
        prompt = types.Prompt(name="task", description="The task to carry out")
        resource = types.Resource(uri=INSTRUCTION_URI, name="instruction", mime_type="text/markdown",
                                  description="The task to carry out")

        async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
            return types.ListToolsResult(tools=tools)

        async def call_tool(ctx: ServerRequestContext[Any],
                            params: types.CallToolRequestParams) -> types.CallToolResult:
            if self.over:
                return tool_result(_ended())
            reply: asyncio.Future[JSONObject] = asyncio.get_running_loop().create_future()
            self.inbox.put_nowait(_Call(params.name, dict(params.arguments or {}), reply))
            return tool_result(await reply)

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
                env_calls += await make_call(env, self.specs, record, env_calls)
                _answer(item, record.observation)
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
                    return _Gone(f"the MCP client ended its session and opened no other for {quiet:g} s"
                                 if self.session_ended else f"the MCP client sent nothing for {quiet:g} s")


def _ended() -> JSONObject:
    return tool_error("tool_error", "this episode has ended; no call reaches its world")


def _answer(call: _Call, observation: JSONObject) -> None:
    if not call.reply.done():  # the session may have gone while the call was made
        call.reply.set_result(observation)


class EpisodeHub:
    """The HTTP server of one event loop's open episodes: it starts with the first episode and stops after the
    last, so a run leaves nothing listening."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, token: str | None = None,
                 allowed_hosts: tuple[str, ...] = ()) -> None:
        self.host, self.port, self.token = host, port, token
        self.security = transport_security(host, allowed_hosts)
        self.episodes: dict[str, Episode] = {}
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
            self.episodes[episode.id] = episode
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
                                               session_idle_timeout=None)
        episode.app = StreamableHTTPASGIApp(manager)
        try:
            async with manager.run():
                ready.set()
                await episode.finished.wait()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(episode.left.wait(), linger)
        finally:
            ready.set()
            self.episodes.pop(episode.id, None)
            assert self._lock is not None
            async with self._lock:
                if not self.episodes and self._server is not None:
                    await self._stop()

    async def _start(self) -> None:
        sock = self._listen()
        self._bound = sock.getsockname()[1]
        app = BearerAuth(self, self.token) if self.token else self
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
        if parts == ["episodes"] and scope["method"] == "GET":
            listing = [episode.summary(self.url(episode)) for episode in self.episodes.values() if not episode.over]
            # ASCII-escaped: an instruction with a lone surrogate is still valid JSON on the wire.
            await Response(json.dumps(listing), media_type="application/json")(scope, receive, send)
            return
        episode = self.episodes.get(parts[1]) if len(parts) == 3 and parts[::2] == ["episodes", "mcp"] else None
        if episode is None or episode.app is None:
            await PlainTextResponse("no such episode (it may have ended)", status_code=404)(scope, receive, send)
            return
        episode.seen(scope["method"])
        await episode.app(scope, receive, send)
        episode.seen(scope["method"])


class _OutsideAgent(AsyncAgent):
    def __init__(self, hub: EpisodeHub, *, max_steps: int, date: str, with_plan: bool) -> None:
        self.hub, self.max_steps, self.date, self.with_plan = hub, max_steps, date, with_plan

    def episode(self, task: Task, env: Environment) -> Episode:
        return Episode(task, env.tools(), system_prompt(task, self.date, self.with_plan, FINISH))


class McpAgent(_OutsideAgent):
    """``--agent mcp``: each episode waits for an outside MCP client at its URL, printed with its instruction."""

    def __init__(self, hub: EpisodeHub, *, max_steps: int, date: str, with_plan: bool = False,
                 idle_timeout: float | None = 900.0, console: Console | None = None) -> None:
        super().__init__(hub, max_steps=max_steps, date=date, with_plan=with_plan)
        self.idle_timeout = idle_timeout
        self.console = console or Console(stderr=True, highlight=False)

    async def arun(self, task: Task, env: Environment, trajectory: Trajectory) -> None:
        episode = self.episode(task, env)
        async with self.hub.serving(episode) as url:
            self.console.print(f"[bold]task {escape(str(task.task_id))}[/bold] ({escape(task.scenario)}): "
                               f"{url}\n  {escape(_one_line(task.instruction))}")
            await episode.play(env, trajectory, self.max_steps, self.idle_timeout, None)


class CommandAgent(_OutsideAgent):
    """``--agent command:'PROGRAM ARGS'``: runs PROGRAM once per episode, not through a shell, with ``{mcp_url}``,
    ``{instruction_file}``, ``{task_id}`` and ``{model}`` (``--agent-model``) in ARGS replaced (also in the
    environment as ``OCCUBENCH_MCP_URL`` and ``OCCUBENCH_INSTRUCTION_FILE``). Its time limit is
    ``--max-seconds-per-task`` (default :data:`COMMAND_SECONDS`); its stdout and stderr are kept in the result.
    A program that exits with status 0 without calling ``submit`` answers with what it printed on stdout."""

    def __init__(self, command: str, hub: EpisodeHub, *, max_steps: int, date: str, with_plan: bool = False,
                 model: str | None = None, seconds: float | None = None) -> None:
        super().__init__(hub, max_steps=max_steps, date=date, with_plan=with_plan)
        self.argv = parse_command(command)
        if "{" not in self.argv[0] and shutil.which(self.argv[0]) is None:
            raise ConfigError(f"--agent command: no program {self.argv[0]!r} (not a file, nor on the PATH)")
        self.model, self.seconds = model or "", seconds or COMMAND_SECONDS

    async def arun(self, task: Task, env: Environment, trajectory: Trajectory) -> None:
        episode = self.episode(task, env)
        episode.ends_with_session = False
        with tempfile.TemporaryDirectory(prefix="occubench-episode-") as folder:
            instruction = Path(folder) / "instruction.md"
            instruction.write_text(task.instruction, encoding="utf-8", errors="replace")
            async with self.hub.serving(episode, linger=0) as url:
                values = {"mcp_url": url, "instruction_file": str(instruction), "task_id": str(task.task_id),
                          "model": self.model}
                argv = [part.format_map(values) for part in self.argv]
                await self._run(argv, episode, env, trajectory, {"OCCUBENCH_MCP_URL": url,
                                                                 "OCCUBENCH_INSTRUCTION_FILE": str(instruction)})

    async def _run(self, argv: list[str], episode: Episode, env: Environment, trajectory: Trajectory,
                   extra_env: dict[str, str]) -> None:
        try:
            program = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env={**os.environ, **extra_env}, start_new_session=True)
        except OSError as exc:
            raise ConfigError(f"--agent command: cannot start {argv[0]!r}: {exc.strerror or exc}") from None
        assert program.stdout is not None and program.stderr is not None
        output = asyncio.gather(_tail(program.stdout), _tail(program.stderr))
        exited = asyncio.ensure_future(program.wait())
        exited.add_done_callback(lambda _: episode.inbox.put_nowait(_Gone("exited")))
        try:
            with contextlib.suppress(AgentError):  # the program exited: what it printed decides, below
                await episode.play(env, trajectory, self.max_steps, None, time.monotonic() + self.seconds)
        finally:
            if not exited.done():  # answered or out of time: a moment to exit, then the whole process group goes
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(exited), AFTER_ANSWER if trajectory.stop_reason
                                           == "answer" else 0)
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(program.pid, 9)
                await exited
            stdout, stderr = await output
            trajectory.agent_output = {"command": shlex.join(argv), "exit_code": program.returncode,
                                       "stdout": stdout, "stderr": stderr}
        if trajectory.stop_reason:
            return
        if program.returncode == 0 and stdout.strip():
            trajectory.steps.append(Step(content=stdout.strip()))
            trajectory.final_answer, trajectory.stop_reason = stdout.strip(), "answer"
            return
        raise AgentError(f"the agent program exited with status {program.returncode} without an answer"
                         + (f"; its stderr ends: {_one_line(stderr[-300:])}" if stderr.strip() else ""))


async def _tail(stream: asyncio.StreamReader) -> str:
    """All of ``stream``, keeping its last :data:`OUTPUT_KEPT` bytes, as text."""
    kept = bytearray()
    dropped = 0
    while chunk := await stream.read(1 << 16):
        kept += chunk
        if len(kept) > OUTPUT_KEPT:
            dropped += len(kept) - OUTPUT_KEPT
            del kept[:len(kept) - OUTPUT_KEPT]
    text = kept.decode("utf-8", errors="replace")
    return f"[{dropped} bytes before this were dropped]\n{text}" if dropped else text


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 300 else line[:297] + "..."


def outside_agent(context: AgentContext) -> AsyncAgent:
    """The agent of ``--agent mcp`` or ``--agent command:...``, from the run's settings (the engine's factory loads
    it by name)."""
    config = context.config
    port = config.serve_port if config.serve_port is not None else 8200 if config.agent == "mcp" else 0
    # A program on this machine is handed its episode's unguessable URL; a token guards what others can reach.
    guarded = config.agent == "mcp" or not is_loopback(config.serve_host)
    token = serve_token(config.serve_host, config.serve_token_file) if guarded else None
    hub = EpisodeHub(config.serve_host, port, token, tuple(config.serve_allowed_hosts))
    if config.agent == "mcp":
        return McpAgent(hub, max_steps=config.max_steps, date=context.date, with_plan=config.with_plan,
                        idle_timeout=config.serve_idle_timeout)
    return CommandAgent(config.agent.removeprefix("command:"), hub, max_steps=config.max_steps, date=context.date,
                        with_plan=config.with_plan, model=config.agent_model, seconds=config.max_seconds_per_task)


__all__ = ["CommandAgent", "Episode", "EpisodeHub", "McpAgent", "outside_agent"]
