"""Episodes over MCP: an agent outside occubench plays each episode through an MCP endpoint of its own.

Every open episode has a URL, ``http://HOST:PORT/episodes/<id>/mcp`` (``<id>`` unguessable, the episode's own
credential), served by the process's :class:`~occubench.mcp.hub.EpisodeHub` over the streamable HTTP transport:
the task's tools — through the tool contract and the run's wrappers, so faults are injected as in any run — and
``submit``, which gives the final answer and ends the episode. The task's instruction is the prompt ``task`` and the
resource ``episode://instruction``; the server's instructions are what the built-in agent's system prompt says.
``GET /episodes``, with the serve token, lists the open episodes as JSON.

The agents are ordinary :class:`~occubench.core.agent.AsyncAgent`\\ s, so the engine runs, verifies and stores
these episodes as any other (``report``, ``compare``, ``view`` and ``rescore`` read them unchanged):
:class:`McpAgent` (``--agent mcp``, ``occubench serve`` with run flags) waits for outside clients and prints each
episode's URL and instruction; :class:`~occubench.mcp.command.CommandAgent` (``--agent command:'PROGRAM ARGS'``)
starts a program per episode with the URL and an instruction file. Every call of an episode is made by the agent's
own coroutine, the MCP session only hands it over, so the episode's world, limits and usage stay its own.

An episode ends at ``submit``, at ``--max-steps`` calls or ``--max-seconds-per-task`` (judged on what was done,
as for the built-in agent), or when its client goes: an MCP session the client ends, one that sends nothing for
the idle timeout, a program that exits without an answer. That is an ``agent`` error, not scored.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from occubench.core.agent import AsyncAgent
from occubench.core.environment import Environment
from occubench.core.task import Task
from occubench.core.trajectory import Trajectory
from occubench.engine.registry import AgentContext
from occubench.mcp.command import CommandAgent
from occubench.mcp.hub import Episode, EpisodeHub, OutsideAgent, one_line
from occubench.mcp.server import is_loopback, serve_token
from occubench.util.console import rich_console
from occubench.util.text import markup


class McpAgent(OutsideAgent):
    """``--agent mcp``: each episode waits for an outside MCP client at its URL, printed with its instruction."""

    def __init__(self, hub: EpisodeHub, *, max_steps: int, date: str, with_plan: bool = False, images: bool = False,
                 idle_timeout: float | None = 900.0, console: Console | None = None) -> None:
        super().__init__(hub, max_steps=max_steps, date=date, with_plan=with_plan, images=images)
        self.idle_timeout = idle_timeout
        self.console = console or rich_console(stderr=True)

    async def arun(self, task: Task, env: Environment, trajectory: Trajectory) -> None:
        episode = self.episode(task, env)
        async with self.hub.serving(episode) as url:
            # The task's text comes from a world folder: shown, never acted on (no escape sequence, no markup).
            self.console.print(f"[bold]task {markup(task.task_id)}[/bold] ({markup(task.scenario)}): "
                               f"{url}\n  {markup(one_line(task.instruction))}")
            await episode.play(env, trajectory, self.max_steps, self.idle_timeout, None)


def outside_agent(context: AgentContext) -> AsyncAgent:
    """The agent of ``--agent mcp`` or ``--agent command:...``, from the run's settings (the engine's factory loads
    it by name)."""
    config = context.config
    if config.agent == "mcp":
        port = 8200 if config.serve_port is None else config.serve_port
        # The listing hands out every episode's URL: only to who holds the serve token. A session idle as long as
        # the episode may be is of no more use to it.
        hub = EpisodeHub(config.serve_host, port, serve_token(config.serve_host, config.serve_token_file),
                         tuple(config.serve_allowed_hosts), session_idle=config.serve_idle_timeout)
        return McpAgent(hub, max_steps=config.max_steps, date=context.date, with_plan=config.with_plan,
                        images=config.agent_images, idle_timeout=config.serve_idle_timeout)
    # A program is handed its own episode's URL and lists none; off loopback, a token guards what others can reach.
    token = None if is_loopback(config.serve_host) else serve_token(config.serve_host, config.serve_token_file)
    hub = EpisodeHub(config.serve_host, config.serve_port or 0, token, tuple(config.serve_allowed_hosts),
                     listing=False)
    return CommandAgent(config.agent.removeprefix("command:"), hub, max_steps=config.max_steps, date=context.date,
                        with_plan=config.with_plan, images=config.agent_images, model=config.agent_model,
                        seconds=config.max_seconds_per_task,
                        read_only=(Path(config.output_dir),))


__all__ = ["CommandAgent", "Episode", "EpisodeHub", "McpAgent", "outside_agent"]
