"""Where the episodes of ``occubench serve --protocol openenv`` run: in this process, each started when an OpenEnv
session resets, on the harness loop that serves the sessions, and stored in the run folder as it ends, as the local
executor stores its own. The run around it is any run's: its folder, lock, identity, resume, budget and summary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.engine.executor import Job, MayStart, OnResult
from occubench.mcp.server import serve_token
from occubench.openenv.server import OpenEnvServer, listen
from occubench.openenv.sessions import EpisodePool
from occubench.util.aio import run_sync, set_blocking_threads
from occubench.util.console import rich_console
from occubench.util.text import markup

if TYPE_CHECKING:
    from occubench.config import RunConfig
    from occubench.core.task import Task
    from occubench.store import ResultStore

#: The port when the config names none (what `occubench serve` defaults to, for MCP as for OpenEnv).
PORT = 8200


class OpenEnvExecutor:
    """Serves each phase's pending episodes to OpenEnv clients until every one has been played (or the run's
    budget is spent); at most ``max_concurrency`` sessions are open at once."""

    in_process = True

    def __init__(self, config: RunConfig) -> None:
        self.config = config
        self.port = PORT if config.serve_port is None else config.serve_port
        # Refused before the run starts: an address others can reach is served only with a token, and one taken.
        self.token = serve_token(config.serve_host, config.serve_token_file)
        listen(config.serve_host, self.port).close()

    def run(self, job: Job, todo: list[tuple[Task, int]], store: ResultStore, *, on_result: OnResult | None = None,
            may_start: MayStart | None = None) -> int:
        set_blocking_threads(self.config.max_concurrency)
        return run_sync(self._serve(job, todo, store, on_result, may_start))

    async def _serve(self, job: Job, todo: list[tuple[Task, int]], store: ResultStore, on_result: OnResult | None,
                     may_start: MayStart | None) -> int:
        config = self.config
        pool = EpisodePool(job.episodes(), todo, job.factory.phase(job.follow_ups).tasks, store, on_result, may_start)
        server = OpenEnvServer(pool, host=config.serve_host, port=self.port, token=self.token,
                               allowed_hosts=tuple(config.serve_allowed_hosts), capacity=config.max_concurrency,
                               idle=config.serve_idle_timeout,
                               description=f"occubench {job.factory.definition.name}: {len(todo)} episode(s)")
        rich_console(stderr=True).print(
            f"OpenEnv server: {markup(server.url)} ({len(todo)} episode(s) to play; at most {config.max_concurrency} "
            "sessions at once)")
        try:
            await server.serve()
        finally:
            not_started = await pool.stop()
        if pool.failure is not None:
            raise pool.failure
        return not_started
