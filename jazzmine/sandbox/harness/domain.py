"""The script's own Landlock domain: no process the script did not start can be read from it.

What a tool with secrets of its own spawns carries the secret in its environment, and any
process of the same uid may read `/proc/<pid>/environ` (and, were it dumpable, its memory).
The pause during such a call (freeze.py) kept the script from looking, but a pause a script
can undo: a stopped process goes on at any SIGCONT, and a script past the validator can have
the kernel send it one (a POSIX timer firing SIGCONT, armed before the call). So the worker,
once the tools' own processes are forked and before the script's first line, enters a Landlock
domain of its own: the kernel then refuses it, and everything it starts, any ptrace access to a
process outside the domain (`/proc/<pid>/environ`, `mem`, `maps`, `process_vm_readv`), whatever
their uid, whatever a signal does. The tools' processes, forked before, stay outside. (A
process holding CAP_SYS_PTRACE still reads environments: none of a sandbox's does; the
harness run as a plain root process on a host, as some tests run it, is no sandbox.)

The domain restricts only making block and character devices (which a sandbox without
capabilities cannot do anyway): a ruleset must restrict something, and no file access a
script or a tool makes is taken from it. Moving a file to another directory is one: a domain
that does not handle it refuses it outright (EXDEV, as Landlock's first version did), which
broke every rename across directories, the harness's own sweep of what a call left among them;
so the domain handles it and allows it beneath `/`. That needs Landlock's second version
(Linux 5.19); where the kernel (or a seccomp profile) has no such Landlock, the worker cannot
be sure, and no tool gets a secret of its own.
"""

from __future__ import annotations

import ctypes
import os

# linux/landlock.h; the syscall numbers are the same on every architecture.
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_ACCESS_FS_MAKE_CHAR = 1 << 6
_ACCESS_FS_MAKE_BLOCK = 1 << 11
_ACCESS_FS_REFER = 1 << 13  # Landlock's second version
_PR_SET_NO_NEW_PRIVS = 38

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # packed in the kernel's header
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def domain_ruleset() -> tuple[int | None, str | None]:
    """Return a Landlock ruleset to enter before the script runs, or None and why there is none.

    Made before any tool takes its secrets: where none can be made, none is handed over.
    """
    version = _libc.syscall(_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION)
    if version < 2:
        why = os.strerror(ctypes.get_errno()) if version < 0 else f"only its version {version}"
        return None, (
            f"this kernel has no Landlock domain to keep the script in ({why}; "
            "Linux 5.19 or later has one)"
        )
    attr = _RulesetAttr(_ACCESS_FS_MAKE_CHAR | _ACCESS_FS_MAKE_BLOCK | _ACCESS_FS_REFER)
    fd = _libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if fd < 0:
        return None, f"the kernel refused a Landlock ruleset ({os.strerror(ctypes.get_errno())})"
    root = os.open("/", os.O_PATH | os.O_CLOEXEC)
    try:
        beneath = _PathBeneathAttr(_ACCESS_FS_REFER, root)
        added = _libc.syscall(_ADD_RULE, int(fd), _RULE_PATH_BENEATH, ctypes.byref(beneath), 0)
        errno = ctypes.get_errno()
    finally:
        os.close(root)
    if added != 0:
        os.close(int(fd))
        return None, f"the kernel refused a Landlock rule ({os.strerror(errno)})"
    return int(fd), None


def domain_enter(ruleset: int) -> str | None:
    """Put this process, and all it starts from now on, in the ruleset's domain; say why not.

    Only a process with one thread can be put in it whole: Landlock restricts the thread that
    asks, and a second thread left outside could read what the domain refuses.
    """
    try:
        threads = len(os.listdir("/proc/self/task"))
        if threads != 1:
            return f"the worker runs {threads} threads; only a single one can enter the domain"
        # Landlock's condition for a process without CAP_SYS_ADMIN; sandboxes set it already.
        if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return f"no_new_privs was refused ({os.strerror(ctypes.get_errno())})"
        if _libc.syscall(_RESTRICT_SELF, ruleset, 0) != 0:
            return f"the kernel refused the domain ({os.strerror(ctypes.get_errno())})"
        return None
    finally:
        os.close(ruleset)
