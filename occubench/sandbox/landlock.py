"""Landlock, the Linux security module any process may use to confine itself (no privilege needed): here it keeps
the workers forked from one zygote (:mod:`occubench.sandbox.zygote`) apart from each other inside their shared
sandbox. A worker that called :func:`restrict` may read only the folders it was given, write only beneath its own
folder, connect or bind no TCP port, and send no signal to (nor ptrace) a process outside itself — the zygote and its
sibling workers included.

Only kernels of Landlock ABI 6 (Linux 6.12) or later scope signals; :func:`abi` says what this kernel offers.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from collections.abc import Iterable

#: The ABI that scopes signals and abstract sockets: needed to keep workers apart.
REQUIRED_ABI = 6
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same numbers on every architecture
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_TRUNCATE = 1 << 14
#: Every file-system right of ABI 5 (execute … ioctl on devices), all of them handled: what no rule allows is denied.
_ALL_FS = (1 << 16) - 1
#: The rights that apply to a file itself (as opposed to a directory's entries).
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE
_READ = _EXECUTE | _READ_FILE | _READ_DIR
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


@functools.cache
def abi() -> int:
    """The Landlock ABI version of this kernel; 0 where there is none (not Linux, or Landlock is off)."""
    if not sys.platform.startswith("linux"):
        return 0
    version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def restrict(read: Iterable[str], write: str) -> None:
    """Confine this process (and every thread it starts later) for good: read, list and map the files beneath
    ``read``, everything beneath ``write``, nothing else of the file system; no TCP; signals only within itself."""
    libc = _libc()
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS: required of an unprivileged process (bubblewrap set it)
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    attr = _RulesetAttr(_ALL_FS, _NET_BIND_TCP | _NET_CONNECT_TCP, _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
                           ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        for path, rights in [*((p, _READ) for p in read), (write, _ALL_FS)]:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a folder this system does not have
            try:
                allowed = rights if os.path.isdir(path) else rights & _FILE_RIGHTS
                rule = _PathBeneathAttr(allowed, fd)
                if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)) < 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule({path})")
            finally:
                os.close(fd)
        if libc.syscall(_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) < 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)
