"""OpenEnv: a run's episodes served to OpenEnv clients (``occubench serve --protocol openenv``), so a trainer that
speaks OpenEnv plays every kind of world. See ``docs/guides/openenv.md``.

:mod:`~occubench.openenv.wire` is OpenEnv's wire format, :mod:`~occubench.openenv.sessions` what a session does,
:mod:`~occubench.openenv.server` the HTTP and WebSocket server, :mod:`~occubench.openenv.executor` the executor that
starts the episodes as sessions reset.
"""

#: The agent and the executor `occubench serve --protocol openenv` gives the run (``package.module:attribute``).
AGENT = "occubench.openenv.sessions:openenv"
EXECUTOR = "occubench.openenv.executor:OpenEnvExecutor"
