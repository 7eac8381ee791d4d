"""Load the sandbox's seccomp filter, then become the command: a one-shot container's pid 1.

A harness loads the filter itself as it starts (`harness.process.seccomp_load`); a one-shot
container (a script tool's trial, a bash run) starts a program of its own instead, which
would run under the engine's default profile alone, and Docker 20.10's lets io_uring and
AF_VSOCK sockets (the hypervisor's, outside any network namespace) through. So its command
is started as `python3 -I -c <this file's source> <filter, base64> <command...>`: the filter
(and no_new_privs) is loaded here and kept across the exec, for the command and everything
it starts. Standard library only: it runs in any image that has python3, the base image too.
"""

from __future__ import annotations

import base64
import ctypes
import os
import sys

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
# Exit code when the filter cannot be loaded: the command never runs without it.
FILTER_REFUSED = 126


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load(program: bytes) -> int:
    """Load a seccomp filter (BPF) for this process and what it execs; return 0 or an errno."""
    if not program or len(program) % 8:
        return 22  # EINVAL: not a whole number of 8-byte BPF instructions
    code = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(code, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    zero = ctypes.c_ulong(0)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), zero, zero, zero) != 0:
        return ctypes.get_errno()
    mode = ctypes.c_ulong(SECCOMP_MODE_FILTER)
    if libc.prctl(PR_SET_SECCOMP, mode, ctypes.byref(fprog), zero, zero) != 0:
        return ctypes.get_errno()
    return 0


def main(argv: list[str]) -> None:
    """Load the filter of argv[1], then exec argv[2:] in this process (it stays pid 1)."""
    failed = load(base64.b64decode(argv[1], validate=True))
    if failed:
        sys.stderr.write(f"the sandbox's seccomp filter could not be loaded (errno {failed})\n")
        sys.exit(FILTER_REFUSED)
    os.execvp(argv[2], argv[2:])


if __name__ == "__main__":
    main(sys.argv)
