"""Who confines a worker: bubblewrap on Linux, or nobody (a plain child process, for code the user trusts).

A provider turns the worker's command into a process. :class:`Bubblewrap` starts it in its own user, PID, network,
IPC, UTS and cgroup namespaces (no network at all, not even the host's loopback; no view of the harness's
processes), with a mount view of read-only system files, the Python installation and packages it needs, the folders
it was given (read-only, under ``/worlds``), a small private ``/tmp`` and nothing else of the host; an environment
built from scratch; no capabilities; no new user namespaces; the kernel filter of :mod:`occubench.sandbox.seccomp`;
killed with the harness (``--die-with-parent``). :class:`Unconfined` starts the same worker as a plain child process
with the same limits and filters but the host's file system and network: it is for the built-in worlds (our code)
where no sandbox exists, and for outside worlds only when the user passes ``--trust-world-code``.

Which one is used: the environment variable ``OCCUBENCH_SANDBOX`` = ``auto`` (the default: bubblewrap when it works
here), ``bubblewrap`` (it must work, or every run that needs it stops) or ``none``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import occubench
from occubench.core.tools import ToolError
from occubench.errors import ConfigError, WorldError
from occubench.sandbox import cgroups, seccomp
from occubench.sandbox.workspace import mirror
from occubench.util.openfiles import readable

#: Where the worker finds the occubench package, and the folders it was given, inside the sandbox; where a shell
#: command's workspace is.
PACKAGE_ROOT, WORLDS_ROOT, WORKSPACE = "/opt/occubench", "/worlds", "/workspace"
#: Where a zygote's sandbox mounts its children's private ``/tmp`` folders: ``0``, ``1``... each a tmpfs of its own.
CHILDREN_TMP = "/tmp/children"
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf install "
                "bubblewrap`) on a Linux kernel that allows unprivileged user namespaces")


@dataclass(frozen=True)
class Limits:
    """What a worker may use: CPU seconds in all, address space, bytes per file written, open files; and the size
    of its private ``/tmp``, the processes (threads included) of its sandbox, and the quota of a shell command's
    workspace (see :meth:`Provider.run_in`). A zygote's sandbox also mounts ``children`` private folders of
    ``tmp_bytes`` each, one for each child it runs at once."""

    cpu_seconds: int = 600
    memory_bytes: int = 2 << 30
    file_bytes: int = 64 << 20
    open_files: int = 256
    tmp_bytes: int = 64 << 20
    processes: int = 64
    children: int = 0
    workspace_bytes: int = 256 << 20


#: Seconds a shell command's sandbox may take to start, and its processes to be gone once it is killed.
START_SECONDS = 30.0


@dataclass
class Running:
    """A shell command started by :meth:`Provider.run_in`: its process, and once it is over, what of the workspace
    it left was not kept (past the quota; "" when everything was)."""

    process: subprocess.Popen[bytes]
    not_kept: str = ""


class Provider(ABC):
    name: str
    #: Whether the worker is confined by the operating system (False: a plain child process).
    confined: bool

    @abstractmethod
    def describe(self) -> str:
        """The provider and its version, for ``occubench doctor`` and a run's metadata."""

    @abstractmethod
    def start(self, service: str, folders: Sequence[Path], limits: Limits,
              channel: int | None = None) -> subprocess.Popen[bytes]:
        """The worker process serving ``service``, seeing ``folders``; its stdin and stdout are the protocol's. With
        ``channel`` (a Unix socket's descriptor, kept open in the process under the same number) it is a zygote
        (:mod:`occubench.sandbox.zygote`), which may confine its children with Landlock."""

    def kill(self, process: subprocess.Popen[bytes]) -> None:
        """Stop ``process`` and everything it started (its whole process group)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)

    def run_in(self, workspace: Path, command: str, limits: Limits,
               group: Path | None = None) -> contextlib.AbstractContextManager[Running]:
        """A shell ``command`` (``sh -c``) working in ``workspace`` under ``limits``, which may start processes: its
        output (stdout and stderr together) on the process's stdout; in the control group ``group`` when given
        (:mod:`occubench.sandbox.cgroups`). Leaving the context kills whatever of it still runs, and brings what it
        left in its workspace to ``workspace``."""
        raise NotImplementedError(f"{self.name} runs no shell command")

    @abstractmethod
    def path(self, folder: Path, index: int) -> str:
        """Where the ``index``-th folder given to :meth:`start` is seen by the worker."""

    def rlimits(self, limits: Limits) -> dict[str, int]:
        return {"cpu_seconds": limits.cpu_seconds, "memory_bytes": limits.memory_bytes,
                "file_bytes": limits.file_bytes, "open_files": limits.open_files}


#: Every worker's sandbox is spawned from this one thread, which lives as long as the process: bubblewrap's
#: ``--die-with-parent`` follows the thread that started it, and an episode's thread ends long before the harness.
#: Only the spawn runs here (milliseconds); the worker's handshake and loading run on the thread that asked for it,
#: so that starts overlap instead of queueing behind each other.
_starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="occubench-sandbox-starter")


def _python() -> str:
    return os.path.realpath(sys.executable)


def _package_dir() -> Path:
    return Path(occubench.__file__).resolve().parent


def _library_dirs() -> list[str]:
    """The folders Python needs besides our package: its standard library and the installed packages."""
    dirs = {os.path.realpath(p) for p in sys.path if p and os.path.isdir(p) and (
        p.startswith((sys.base_prefix, sys.prefix, sys.exec_prefix)) or _is_site(p))}
    package_parent = str(_package_dir().parent)
    # A source checkout (an editable install) holds more than the package: only the package is shown. An installed
    # package's parent is site-packages, which the worker needs whole.
    return sorted(d for d in dirs if d != package_parent or _is_site(d))


def _is_site(path: str) -> bool:
    return path.rstrip("/").endswith(("site-packages", "dist-packages"))


def _command(service: str) -> list[str]:
    return [_python(), "-S", "-B", "-m", "occubench.sandbox.worker", service]


def _limited(rlimits: dict[str, int], command: str) -> list[str]:
    """``command`` run by ``sh`` once :mod:`occubench.sandbox.limited` has put ``rlimits`` on itself."""
    return [_python(), "-S", "-B", "-m", "occubench.sandbox.limited", json.dumps(rlimits), command]


def _environment(library_dirs: Sequence[str], package_root: str) -> dict[str, str]:
    """Built from scratch: no key, no token, no home, no proxy."""
    return {"PYTHONPATH": os.pathsep.join([package_root, *library_dirs]), "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "PYTHONIOENCODING": "utf-8",
            "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"}


class Bubblewrap(Provider):
    name, confined = "bubblewrap", True

    def __init__(self, binary: str) -> None:
        self.binary = binary

    @functools.cached_property
    def _version(self) -> str:  # asked once: every run's metadata names it
        done = subprocess.run([self.binary, "--version"], capture_output=True, text=True, check=False)
        return done.stdout.strip() or "bubblewrap"

    def describe(self) -> str:
        return f"{self._version} ({self.binary}), seccomp filters, no network"

    def path(self, folder: Path, index: int) -> str:
        return f"{WORLDS_ROOT}/{index}"

    def rlimits(self, limits: Limits) -> dict[str, int]:
        # In its own user namespace the worker's processes are counted apart from the user's others (Linux ≥ 5.14):
        # a cap that the seccomp filter's refusal of new processes makes a second wall.
        return {**super().rlimits(limits), "processes": limits.processes}

    def arguments(self, folders: Sequence[Path], limits: Limits, filter_fd: int,
                  workspace: bool = False) -> list[str]:
        """bubblewrap's arguments for a worker seeing ``folders``; with ``workspace``, for a program working in a
        ``/workspace`` of its own (a file system of ``limits.workspace_bytes``, its working directory)."""
        args = [self.binary, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
                "--new-session", "--cap-drop", "ALL", "--uid", "65534", "--gid", "65534", "--clearenv",
                "--ro-bind", "/usr", "/usr"]
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.islink(top):
                args += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                args += ["--ro-bind", top, top]
        # Before the binds below: a Python or a world folder under /tmp must not be hidden by the private /tmp.
        args += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache", "--proc", "/proc", "--dev", "/dev",
                 "--remount-ro", "/dev", "--size", str(limits.tmp_bytes), "--perms", "1777", "--tmpfs", "/tmp"]
        for child in range(limits.children):  # each its own tmpfs: one child's files cannot fill another's
            args += ["--size", str(limits.tmp_bytes), "--perms", "0700", "--tmpfs", f"{CHILDREN_TMP}/{child}"]
        library_dirs = _library_dirs()
        for directory in [os.path.realpath(sys.base_prefix), *library_dirs]:
            args += ["--ro-bind", directory, directory]
        args += ["--ro-bind", str(_package_dir()), f"{PACKAGE_ROOT}/occubench"]
        for index, folder in enumerate(folders):
            args += ["--ro-bind", str(folder.resolve()), self.path(folder, index)]
        if workspace:
            args += ["--size", str(limits.workspace_bytes), "--perms", "0700", "--tmpfs", WORKSPACE]
        args += ["--chdir", WORKSPACE if workspace else "/tmp", "--seccomp", str(filter_fd)]
        for key, value in _environment(library_dirs, PACKAGE_ROOT).items():
            args += ["--setenv", key, value]
        return args

    def start(self, service: str, folders: Sequence[Path], limits: Limits,
              channel: int | None = None) -> subprocess.Popen[bytes]:
        program = os.memfd_create("occubench-seccomp")
        try:
            os.write(program, seccomp.kernel_filter(zygote=channel is not None))
            os.lseek(program, 0, os.SEEK_SET)
            command = [*self.arguments(folders, limits, program), "--", *_command(service)]
            return _starter.submit(lambda: subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={},
                pass_fds=(program,) if channel is None else (program, channel), start_new_session=True,
                bufsize=0)).result()
        finally:
            os.close(program)

    @contextlib.contextmanager
    def run_in(self, workspace: Path, command: str, limits: Limits,
               group: Path | None = None) -> Iterator[Running]:
        # The workspace is a tmpfs of the sandbox's, sized to the quota: a command writing past it meets ENOSPC and
        # the host's disk is never touched. The launcher hands it over open; the harness copies the host folder in
        # before the command and back out once every process of the sandbox is gone (the descriptor keeps the file
        # system after its sandbox), within the same quota.
        ours, theirs = socket.socketpair()
        info, info_write = os.pipe()
        program = os.memfd_create("occubench-seccomp")
        try:
            os.write(program, seccomp.kernel_filter())
            os.lseek(program, 0, os.SEEK_SET)
            arguments = self.arguments([], limits, program, workspace=True) + ["--info-fd", str(info_write)]
            # The harness's Python first: `python` in a command is the one with the packages the sandbox shows.
            arguments += ["--setenv", "PATH", f"{os.path.dirname(_python())}:/usr/bin:/bin"]
            launcher = [*_limited(self.rlimits(limits), command), str(theirs.fileno())]
            process = subprocess.Popen([*arguments, "--", *launcher], stdin=subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={},
                                       pass_fds=(program, theirs.fileno(), info_write), start_new_session=True,
                                       bufsize=0,
                                       preexec_fn=None if group is None else functools.partial(cgroups.enter, group))
        finally:
            os.close(program)
            os.close(info_write)
            theirs.close()
        host = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        tmpfs = sandbox = None
        try:
            with ours:
                tmpfs = _received(ours)
                if tmpfs is None:
                    self.kill(process)
                    said = (process.stdout.read(2000) if process.stdout and readable(process.stdout.fileno(), 5)
                            else b"").decode("utf-8", "replace").strip()
                    raise WorldError(f"the sandbox of a shell command did not start: {said or 'no word from it'}")
                sandbox = os.pidfd_open(_child_pid(info))
                if missing := mirror(host, tmpfs, limits.workspace_bytes):
                    raise ToolError(f"the workspace holds more than its quota allows ({missing}); remove files")
                ours.sendall(b"g")
            running = Running(process)
            yield running
            self.kill(process)
            process.wait()
            # Its pid 1 gone, every process of the sandbox is: nothing writes to the workspace while it is copied.
            if not readable(sandbox, START_SECONDS):
                raise WorldError(f"the sandbox of a shell command did not end within {START_SECONDS:.0f} s")
            running.not_kept = mirror(tmpfs, host, limits.workspace_bytes)
        finally:
            self.kill(process)
            if process.stdout is not None:
                process.stdout.close()
            process.wait()
            for descriptor in (host, tmpfs, sandbox, info):
                if descriptor is not None:
                    os.close(descriptor)


def _received(channel: socket.socket) -> int | None:
    """The sandbox's workspace, as its launcher hands it over; None when the sandbox does not start."""
    channel.settimeout(START_SECONDS)
    try:
        _, descriptors, _, _ = socket.recv_fds(channel, 1, 1)
    except TimeoutError:
        return None
    if len(descriptors) == 1:
        return descriptors[0]
    for extra in descriptors:
        os.close(extra)
    return None


def _child_pid(info: int) -> int:
    """The sandbox's pid 1, from bubblewrap's ``--info-fd`` (written before the launcher could answer)."""
    os.set_blocking(info, False)
    text = b""
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(info, 4096):
            text += chunk
    return int(json.loads(text)["child-pid"])


class Unconfined(Provider):
    name, confined = "none", False

    def describe(self) -> str:
        return "none: a plain child process (limits and seccomp filters, but the host's files and network)"

    def path(self, folder: Path, index: int) -> str:
        return str(folder.resolve())

    @contextlib.contextmanager
    def run_in(self, workspace: Path, command: str, limits: Limits,
               group: Path | None = None) -> Iterator[Running]:
        # No file system of its own: the command writes to the host's folder, under its per-file limit only.
        package_root = str(_package_dir().parent)
        process = subprocess.Popen(_limited(self.rlimits(limits), command), stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   env=_environment(_library_dirs(), package_root), cwd=workspace,
                                   start_new_session=True, bufsize=0,
                                   preexec_fn=None if group is None else functools.partial(cgroups.enter, group))
        try:
            yield Running(process)
        finally:
            self.kill(process)
            if process.stdout is not None:
                process.stdout.close()
            process.wait()

    def start(self, service: str, folders: Sequence[Path], limits: Limits,
              channel: int | None = None) -> subprocess.Popen[bytes]:
        package_root = str(_package_dir().parent)
        return subprocess.Popen(_command(service), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=_environment(_library_dirs(), package_root),
                                cwd="/", start_new_session=True, bufsize=0,
                                pass_fds=() if channel is None else (channel,))


@dataclass(frozen=True)
class Detection:
    """The sandbox this machine offers, or why there is none."""

    provider: Provider | None
    reason: str


@functools.cache
def detect() -> Detection:
    choice = os.environ.get("OCCUBENCH_SANDBOX", "auto").strip().lower() or "auto"
    if choice not in ("auto", "bubblewrap", "none"):
        raise ConfigError(f"OCCUBENCH_SANDBOX={choice!r}: expected auto, bubblewrap or none")
    if choice == "none":
        return Detection(None, "OCCUBENCH_SANDBOX=none")
    found = _bubblewrap()
    if isinstance(found, str) and choice == "bubblewrap":
        raise ConfigError(f"OCCUBENCH_SANDBOX=bubblewrap, but {found}; {INSTALL_HINT}")
    return Detection(None, found) if isinstance(found, str) else Detection(found, "")


def _bubblewrap() -> Bubblewrap | str:
    """bubblewrap if it can start a worker's namespaces here, else why not."""
    if not sys.platform.startswith("linux"):
        return f"bubblewrap runs on Linux only (this is {sys.platform})"
    binary = shutil.which("bwrap")
    if binary is None:
        return "bubblewrap (bwrap) is not installed"
    if seccomp.library() is None:
        return "libseccomp is not installed (Debian/Ubuntu: libseccomp2)"
    trial = subprocess.run([binary, "--unshare-all", "--unshare-user", "--disable-userns", "--ro-bind", "/", "/",
                            "--", "/bin/true"], capture_output=True, text=True, check=False, env={})
    if trial.returncode != 0:
        return f"bubblewrap cannot create its namespaces here: {trial.stderr.strip()[:300] or trial.returncode}"
    return Bubblewrap(binary)


#: The flag that runs outside code without a sandbox where the machine has none.
TRUST_FLAG = "--trust-world-code"


def provider_for(trusted: bool, what: str) -> Provider:
    """The machine's sandbox; without one, a plain child process for ``trusted`` code, else a refusal."""
    detection = detect()
    if detection.provider is not None:
        return detection.provider
    if trusted:
        return Unconfined()
    raise ConfigError(f"{what} holds code from outside occubench, which runs only in a sandbox, and this machine has "
                      f"none: {detection.reason}. To sandbox it, {INSTALL_HINT}. To run it without a sandbox (its "
                      f"code could then read your files and keys), pass {TRUST_FLAG}.")
