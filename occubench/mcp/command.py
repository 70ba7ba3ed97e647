"""``--agent command:'PROGRAM ARGS'``: a program of the user's own plays each episode over MCP.

Nothing the program starts outlives its episode. With bubblewrap (found as the sandbox finds it, see
:mod:`occubench.sandbox.provider`) the program runs in a PID namespace of its own, with everything else of the host
(its files, network, user and environment: the program brings its own model and key). When the program exits or is
killed, the namespace's first process dies and the kernel kills every process in it, however it was started (a new
session, a double fork); and the program sees no other process, so no other episode's URL on a command line.

Without bubblewrap (none here, or ``OCCUBENCH_SANDBOX=none``) the program runs in a process group of its own; at the
end of the episode the group is killed, then every process whose environment still holds the episode's
``OCCUBENCH_MCP_URL``. That does not guarantee as much: a process that left the group and replaced its environment
survives (and, on a system without ``/proc``, any process that left the group), and programs can read each other's
command lines, so an episode's URL given as an argument is visible to the other episodes' programs.

Either way, a process started at the program's request by a service outside it (a container daemon, a scheduler)
is not the program's. And the episode ends on time: the program's output comes through pipes occubench reads and
closes itself, :data:`OUTPUT_GRACE` seconds after the program is stopped even if a process still holds them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from occubench.config import parse_command
from occubench.core.environment import Environment
from occubench.core.task import Task
from occubench.core.trajectory import Step, Trajectory
from occubench.errors import AgentError, ConfigError
from occubench.mcp.hub import AFTER_ANSWER, Episode, EpisodeHub, OutsideAgent, one_line
from occubench.sandbox.provider import Bubblewrap, detect

#: A program's episode without --max-seconds-per-task ends after this long (a program that hangs must not hang
#: the run).
COMMAND_SECONDS = 1800.0
#: The longest stdout and stderr kept of a program, each (its last part: where answers and tracebacks are).
OUTPUT_KEPT = 1 << 20
#: Once the program is stopped, how long its output has to end before occubench stops reading it.
OUTPUT_GRACE = 2.0
#: Without bubblewrap, how many times the processes are searched for the episode's: one may start another while
#: the first is killed.
KILL_ROUNDS = 5


class CommandAgent(OutsideAgent):
    """``--agent command:'PROGRAM ARGS'``: runs PROGRAM once per episode, not through a shell, with ``{mcp_url}``,
    ``{instruction_file}``, ``{task_id}`` and ``{model}`` (``--agent-model``) in ARGS replaced (also in the
    environment as ``OCCUBENCH_MCP_URL`` and ``OCCUBENCH_INSTRUCTION_FILE``). Its time limit is
    ``--max-seconds-per-task`` (default :data:`COMMAND_SECONDS`); its stdout and stderr are kept in the result.
    A program that exits with status 0 without calling ``submit`` answers with what it printed on stdout."""

    def __init__(self, command: str, hub: EpisodeHub, *, max_steps: int, date: str, with_plan: bool = False,
                 images: bool = False, model: str | None = None, seconds: float | None = None,
                 read_only: Sequence[Path] = ()) -> None:
        super().__init__(hub, max_steps=max_steps, date=date, with_plan=with_plan, images=images)
        self.argv = parse_command(command)
        if "{" not in self.argv[0] and shutil.which(self.argv[0]) is None:
            raise ConfigError(f"--agent command: no program {self.argv[0]!r} (not a file, nor on the PATH)")
        self.model, self.seconds = model or "", seconds or COMMAND_SECONDS
        provider = detect().provider
        self.bwrap = provider.binary if isinstance(provider, Bubblewrap) else None
        self.read_only = tuple(read_only)

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
        outputs = (_Output(), _Output())
        program = await self._start(argv, outputs, extra_env)
        try:
            await self._play(program, episode, env, trajectory, extra_env["OCCUBENCH_MCP_URL"])
        finally:
            stdout, stderr = await _texts(outputs)
            trajectory.agent_output = {"command": shlex.join(argv), "exit_code": program.returncode,
                                       "stdout": stdout, "stderr": stderr}
        if trajectory.stop_reason:
            return
        if program.returncode == 0 and stdout.strip():
            trajectory.steps.append(Step(content=stdout.strip()))
            trajectory.final_answer, trajectory.stop_reason = stdout.strip(), "answer"
            return
        raise AgentError(f"the agent program exited with status {program.returncode} without an answer"
                         + (f"; its stderr ends: {one_line(stderr[-300:])}" if stderr.strip() else ""))

    def confine(self) -> list[str]:
        """What the program's command line is run under: its own PID namespace, in a session of its own (no
        terminal to write into), killed with occubench; the host's file system, devices and network as they are, but
        for ``read_only`` (the results folder: a program must not rewrite its own episodes' verdicts)."""
        if self.bwrap is None:
            return []
        protected = [arg for folder in self.read_only if folder.is_dir()
                     for arg in ("--ro-bind", str(folder.resolve()), str(folder.resolve()))]
        return [self.bwrap, "--dev-bind", "/", "/", *protected, "--unshare-pid", "--proc", "/proc",
                "--die-with-parent", "--new-session", "--"]

    async def _start(self, argv: list[str], outputs: tuple[_Output, _Output],
                     extra_env: dict[str, str]) -> asyncio.subprocess.Process:
        ends = [await output.open() for output in outputs]
        try:
            return await asyncio.create_subprocess_exec(
                *self.confine(), *argv, stdin=asyncio.subprocess.DEVNULL, stdout=ends[0], stderr=ends[1],
                env={**os.environ, **extra_env}, start_new_session=True)
        except OSError as exc:
            for output in outputs:
                output.close()
            raise ConfigError(f"--agent command: cannot start {argv[0]!r}: {exc.strerror or exc}") from None
        finally:
            for end in ends:  # the program's now: its output ends when the last process holding them does
                os.close(end)

    async def _play(self, program: asyncio.subprocess.Process, episode: Episode, env: Environment,
                    trajectory: Trajectory, url: str) -> None:
        # With no pipe of asyncio's, wait() returns when the program exits, whoever still holds its output.
        exited = asyncio.ensure_future(program.wait())
        exited.add_done_callback(lambda _: episode.gone("exited"))
        try:
            with contextlib.suppress(AgentError):  # the program exited: what it printed decides, in _run
                await episode.play(env, trajectory, self.max_steps, None, time.monotonic() + self.seconds)
        finally:
            if not exited.done():  # answered or out of time: a moment to exit, then it is stopped
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(exited), AFTER_ANSWER if trajectory.stop_reason
                                           == "answer" else 0)
            # Whether or not the program is still there, what it started goes (see the module's note).
            with contextlib.suppress(ProcessLookupError):
                os.killpg(program.pid, signal.SIGKILL)
            if self.bwrap is None:
                _kill_marked(f"\0OCCUBENCH_MCP_URL={url}\0".encode())
            await exited


class _Output(asyncio.Protocol):
    """One of a program's output streams, read from a pipe as it comes; its last :data:`OUTPUT_KEPT` bytes kept."""

    def __init__(self) -> None:
        self.kept = bytearray()
        self.dropped = 0
        self.ended = asyncio.Event()
        self.transport: asyncio.BaseTransport | None = None

    async def open(self) -> int:
        """A new pipe read into this; its write end, for the program."""
        read, write = os.pipe()
        self.transport, _ = await asyncio.get_running_loop().connect_read_pipe(lambda: self,
                                                                                os.fdopen(read, "rb", 0))
        return write

    def data_received(self, data: bytes) -> None:
        self.kept += data
        if len(self.kept) > OUTPUT_KEPT:
            self.dropped += len(self.kept) - OUTPUT_KEPT
            del self.kept[:len(self.kept) - OUTPUT_KEPT]

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended.set()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def text(self) -> str:
        text = self.kept.decode("utf-8", errors="replace")
        return f"[{self.dropped} bytes before this were dropped]\n{text}" if self.dropped else text


async def _texts(outputs: tuple[_Output, _Output]) -> tuple[str, str]:
    """What the program printed on each stream, once both end or :data:`OUTPUT_GRACE` seconds have passed."""
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(output.ended.wait() for output in outputs)), OUTPUT_GRACE)
    for output in outputs:
        output.close()
    return outputs[0].text(), outputs[1].text()


def _kill_marked(mark: bytes) -> None:
    """SIGKILL every process whose environment holds ``mark`` (NUL-delimited), until none is left."""
    for _ in range(KILL_ROUNDS):
        try:
            pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
        except OSError:  # no /proc: the process group was all there was to kill
            return
        marked = [pid for pid in pids if pid != os.getpid() and mark in _environment(pid)]
        if not marked:
            return
        for pid in marked:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _environment(pid: int) -> bytes:
    try:
        return b"\0" + Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:  # gone, or not ours
        return b""
