"""The occubench side, run as the user's own `occubench` command: its task list, and `occubench serve --protocol
openenv` as a process of the eval's.

occubench cannot be imported here (it needs a newer MCP SDK than verifiers pins), so it is a command: the
``command`` option, else ``$OCCUBENCH_COMMAND``, else ``occubench`` on the PATH; split as a shell would, so
``python -m occubench`` or ``/path/to/venv/bin/occubench`` work.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import secrets
import shlex
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from occubench_verifiers.episodes import Server

# Under verifiers' logger, whose records vf-eval shows (and writes to its run's log).
logger = logging.getLogger(f"verifiers.v1.{__name__}")

#: The variable occubench serve reads its token from (and this package, when it connects to a --url).
TOKEN_VARIABLE = "OCCUBENCH_SERVE_TOKEN"
COMMAND_VARIABLE = "OCCUBENCH_COMMAND"
#: How long the server has to say where it listens (it may build sandboxed worlds first).
START_SECONDS = 600.0
#: After an interrupt, how long the server has to store what it has and exit, before it is killed.
STOP_SECONDS = 30.0
_LISTENING = re.compile(r"OpenEnv server: (http://\S+)")
_RUN_FOLDER = re.compile(r"Run directory: (\S+)")


def occubench(command: str | None) -> list[str]:
    """The occubench command, as a list of arguments."""
    argv = shlex.split(command or os.environ.get(COMMAND_VARIABLE) or "occubench")
    if not argv:
        raise ValueError(f"the occubench command is empty (the command option or ${COMMAND_VARIABLE})")
    return argv


def list_tasks(command: str | None, flags: Sequence[str]) -> list[dict[str, Any]]:
    """The tasks `occubench tasks --json FLAGS` lists: ``task_id``, ``scenario``, ``category``... (With
    --download, the first listing downloads the data: it has no time limit.)"""
    argv = [*occubench(command), "tasks", "--json", *flags]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise RuntimeError(f"cannot list occubench's tasks with {shlex.join(argv)}: {exc}") from None
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} exited with status {done.returncode}: {done.stderr.strip()[-2000:]}")
    return list(json.loads(done.stdout))


class ServeProcess:
    """`occubench serve --protocol openenv` on a free loopback port, with a serve token of its own (so that only
    this eval plays its episodes), its output in a temporary file whose end the eval's log shows when it exits."""

    def __init__(self, process: asyncio.subprocess.Process, log: Path, folder: tempfile.TemporaryDirectory[str],
                 server: Server) -> None:
        self.process, self.log, self.folder, self.server = process, log, folder, server

    @classmethod
    async def start(cls, command: str | None, flags: Sequence[str]) -> ServeProcess:
        argv = [*occubench(command), "serve", "--protocol", "openenv", "--host", "127.0.0.1", "--port", "0", *flags]
        token = secrets.token_urlsafe(32)
        folder = tempfile.TemporaryDirectory(prefix="occubench-verifiers-")
        log = Path(folder.name) / "serve.log"
        # Wide lines: the console would otherwise wrap the URL line at 80 columns.
        environment = {**os.environ, TOKEN_VARIABLE: token, "COLUMNS": "1000"}
        with log.open("wb") as output:
            try:
                process = await asyncio.create_subprocess_exec(
                    *argv, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, env=environment,
                    start_new_session=True)
            except OSError as exc:
                folder.cleanup()
                raise RuntimeError(f"cannot start {shlex.join(argv)}: {exc}") from None
        served = cls(process, log, folder, Server("", token))
        try:
            served.server = Server(await served._listening(argv), token)
        except BaseException:
            await served.stop()
            raise
        folder_line = _RUN_FOLDER.search(served.output())
        logger.info("occubench serve --protocol openenv: %s, its run folder %s", served.server.url,
                    folder_line[1] if folder_line else "(not said)")
        return served

    async def _listening(self, argv: list[str]) -> str:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_SECONDS
        while loop.time() < deadline:
            if found := _LISTENING.search(self.output()):
                return found[1]
            if self.process.returncode is not None:
                raise RuntimeError(f"{shlex.join(argv)} exited with status {self.process.returncode}: "
                                   f"{self.output()[-2000:]}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), 0.1)
        raise RuntimeError(f"{shlex.join(argv)} did not start serving in {START_SECONDS:g} s: {self.output()[-2000:]}")

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    async def stop(self) -> None:
        """Ends the server as Ctrl-C would (every result it stored stays in its run folder; episodes never started
        are left for the next run of the same command), killed if it does not exit in time."""
        try:
            if self.process.returncode is None:
                _signal(self.process, signal.SIGINT)
                try:
                    await asyncio.wait_for(self.process.wait(), STOP_SECONDS)
                except TimeoutError:
                    _signal(self.process, signal.SIGKILL)
                    await self.process.wait()
            # 0: every episode played; 1: some ended in an error (its summary says which); 130: interrupted.
            level = logging.INFO if self.process.returncode in (0, 1, 130) else logging.WARNING
            logger.log(level, "occubench serve exited with status %s: %s", self.process.returncode,
                       self.output().strip()[-2000:])
        finally:
            self.folder.cleanup()


def _signal(process: asyncio.subprocess.Process, which: signal.Signals) -> None:
    # Its own session (start_new_session): the group is the server and what it started, as at a terminal.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, which)
