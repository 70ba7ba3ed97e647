"""The system-call filters of a sandbox worker, compiled by libseccomp (the library Flatpak and systemd use).

Two filters, both returning ``EPERM`` for what they deny (Python turns it into an ``OSError`` the world's code sees):

- :func:`kernel_filter`, loaded by bubblewrap before it starts the worker: calls world code never needs and that reach
  the kernel's or other processes' internals (ptrace, mount, keyctl, bpf, perf_event_open, new namespaces, modules,
  io_uring, the clock...);
- :func:`worker_filter`, loaded by the worker itself once Python has started and before it loads any world: no new
  process (``fork``, ``vfork``, ``clone`` without ``CLONE_THREAD``; ``clone3`` answers ``ENOSYS`` so that threads
  fall back to ``clone``), no ``execve``, no socket. It cannot be in the first filter: bubblewrap must still exec.
  One kind of socket is left: an anonymous ``socketpair(AF_UNIX)``, a pipe by another name (its two ends reach only
  each other), which an asyncio event loop needs to wake itself — the episode engine runs in a worker that validates
  a synthesized world.
  Nor memory that no mapping holds, which the address-space limit would not count: no ``memfd_create``, no System V
  shared memory, message queue or semaphore set, no POSIX message queue, no pipe made larger than its 64 KiB.

Both are returned as BPF programs (bytes); the harness compiles them, so the worker needs no libseccomp of its own.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import socket
import tempfile

#: Calls of the first filter: nothing a world's tools, SQLite or Python's start-up use.
KERNEL_DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "pidfd_open",
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount",
    "fspick", "mount_setattr", "unshare", "setns", "keyctl", "add_key", "request_key", "bpf", "perf_event_open",
    "userfaultfd", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
    "swapon", "swapoff", "acct", "syslog", "quotactl", "quotactl_fd", "lookup_dcookie", "open_by_handle_at",
    "name_to_handle_at", "fanotify_init", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "clock_settime", "clock_adjtime", "settimeofday", "adjtimex", "iopl", "ioperm", "vhangup", "uselib",
    "personality", "landlock_create_ruleset",
)
#: Calls of the second filter (``clone`` is handled by its flags).
WORKER_DENIED = ("fork", "vfork", "execve", "execveat", "socket", "landlock_create_ruleset",
                 "memfd_create", "memfd_secret", "shmget", "msgget", "semget", "mq_open")

_ALLOW = 0x7FFF0000
_CLONE_THREAD = 0x00010000
_NOT_EQUAL, _EQUAL, _MASKED_EQ = 1, 4, 7
_F_SETPIPE_SZ = 1031


def _errno(code: int) -> int:
    return 0x00050000 | code


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


@functools.cache
def library() -> ctypes.CDLL | None:
    """libseccomp, or None when it is not installed."""
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


def _compile(rules: list[tuple[str, int, _ArgCmp | None]]) -> bytes:
    lib = library()
    if lib is None:
        raise OSError("libseccomp is not installed")
    ctx = lib.seccomp_init(_ALLOW)
    if not ctx:
        raise OSError("seccomp_init failed")
    try:
        for name, action, condition in rules:
            number = lib.seccomp_syscall_resolve_name(name.encode())
            if number == -1:  # not a call of this architecture
                continue
            arguments = (ctypes.pointer(condition), 1) if condition is not None else (None, 0)
            code = lib.seccomp_rule_add_array(ctx, action, number, arguments[1], arguments[0])
            if code < 0:
                raise OSError(f"seccomp_rule_add({name}) failed: {os.strerror(-code)}")
        with tempfile.TemporaryFile() as out:
            code = lib.seccomp_export_bpf(ctx, out.fileno())
            if code < 0:
                raise OSError(f"seccomp_export_bpf failed: {os.strerror(-code)}")
            out.seek(0)
            return out.read()
    finally:
        lib.seccomp_release(ctx)


@functools.cache
def kernel_filter(zygote: bool = False) -> bytes:
    """The first filter; a zygote's lets Landlock rulesets be made (each of its children makes its own, then denies
    it to itself with :func:`worker_filter`)."""
    return _compile([(name, _errno(errno.EPERM), None) for name in KERNEL_DENIED
                     if not (zygote and name == "landlock_create_ruleset")])


@functools.cache
def worker_filter() -> bytes:
    rules: list[tuple[str, int, _ArgCmp | None]] = [(name, _errno(errno.EPERM), None) for name in WORKER_DENIED]
    rules.append(("clone3", _errno(errno.ENOSYS), None))
    rules.append(("socketpair", _errno(errno.EPERM), _ArgCmp(0, _NOT_EQUAL, socket.AF_UNIX, 0)))
    # clone(flags, ...): a thread shares the process (CLONE_THREAD); anything else would be a new process.
    rules.append(("clone", _errno(errno.EPERM), _ArgCmp(0, _MASKED_EQ, _CLONE_THREAD, 0)))
    # A pipe's buffer is kernel memory: 256 open pipes of 1 MiB each would hold 256 MiB outside RLIMIT_AS.
    rules.append(("fcntl", _errno(errno.EPERM), _ArgCmp(1, _EQUAL, _F_SETPIPE_SZ, 0)))
    return _compile(rules)


def load(program: bytes) -> None:
    """Install ``program`` (a BPF filter as :func:`worker_filter` returns it) on this process, for good."""
    class _Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2
    program_struct = _Program(len(program) // 8, program)  # a BPF instruction is 8 bytes
    if libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0 or libc.prctl(
            pr_set_seccomp, seccomp_mode_filter, ctypes.byref(program_struct), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "cannot install the seccomp filter")
