"""The seccomp filter of a sandbox: the syscalls a script may not make answer EPERM.

bubblewrap loads it for its sandbox (`--seccomp`); a Docker sandbox's harness loads it as it
starts, on top of the engine's own profile (filters stack: a call must pass both), since an
engine's default profile lets some of these through (io_uring and vsock on Docker 20.10).
"""

from __future__ import annotations

import errno
import functools
import os
import socket

from .errors import SandboxError

# Syscalls no script needs that widen the kernel's surface or reach out of the sandbox: they
# fail with EPERM. Names this architecture does not have are skipped.
DENIED_SYSCALLS = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr",
    "unshare", "setns",
    "keyctl", "add_key", "request_key",
    "bpf", "perf_event_open", "userfaultfd", "fanotify_init",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "vhangup",
    "open_by_handle_at", "name_to_handle_at",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "iopl", "ioperm", "uselib", "lookup_dcookie", "nfsservctl", "_sysctl", "sysfs", "ustat",
)  # fmt: skip
# clone() with any of these flags makes namespaces, as unshare() would.
CLONE_NAMESPACE_FLAGS = (
    0x00020000,
    0x02000000,
    0x04000000,
    0x08000000,
    0x10000000,
    0x20000000,
    0x40000000,
)  # fmt: skip  CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
# personality() bits that turn off ASLR or make data executable.
PERSONALITY_TRICKS = (0x0040000, 0x0200000, 0x0400000, 0x0100000)
# Syscalls the kernel gained after this list was last read: from 424 on each has one number
# on every architecture, and none from 450 on (set_mempolicy_home_node, cachestat, fchmodat2,
# the futex2 calls, statmount/listmount, mseal, the *xattrat and open_tree_attr, ...) is
# needed by a sandbox's interpreter or its C library, which falls back when told ENOSYS.
# They answer ENOSYS, as an older kernel would: a call the kernel adds later is not in a
# sandbox's reach until someone reads it and moves this line. (Docker's own profile is an
# allowlist and already does so there; bubblewrap has only this filter.)
FIRST_UNREAD_SYSCALL = 450
# Past it, x86_64 numbers its x32 calls (512-547), which libseccomp handles by architecture.
LAST_UNREAD_SYSCALL = 511
# Sockets to the machine's hypervisor: `network_mode=none` leaves them open, and no script
# or tool has a use for one, networked or not.
AF_VSOCK = 40
# ioctls that push input into, or reconfigure, a terminal outside the sandbox.
TERMINAL_IOCTLS = (0x5412, 0x541C)  # TIOCSTI, TIOCLINUX


class SeccompUnavailable(SandboxError):
    """The seccomp filter cannot be compiled on this host (pyseccomp or libseccomp missing)."""


@functools.lru_cache(maxsize=4)
def seccomp_program(*, network: bool) -> bytes:
    """Compile the seccomp filter of a sandbox (BPF, as bwrap's --seccomp reads it)."""
    try:
        import pyseccomp as seccomp
    except (ImportError, RuntimeError, OSError) as exc:
        message = f"cannot build the seccomp filter (pyseccomp/libseccomp): {exc}"
        raise SeccompUnavailable(message) from exc
    deny = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            rules.add_rule(deny, name)
        except (ValueError, OSError):
            continue  # not a syscall on this architecture
    for flag in CLONE_NAMESPACE_FLAGS:
        rules.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    # clone3 takes its flags in memory where a filter cannot read them: make the C library
    # fall back to clone(), which the rules above can check.
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for number in range(FIRST_UNREAD_SYSCALL, LAST_UNREAD_SYSCALL + 1):
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), number)
    for bit in PERSONALITY_TRICKS:
        rules.add_rule(deny, "personality", seccomp.Arg(0, seccomp.MASKED_EQ, bit, bit))
    for request in TERMINAL_IOCTLS:
        rules.add_rule(deny, "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, request))
    rules.add_rule(deny, "socket", seccomp.Arg(0, seccomp.EQ, AF_VSOCK))
    if not network:
        # Only local socket pairs (asyncio, multiprocessing); no IP, netlink or packet sockets.
        rules.add_rule(deny, "socket", seccomp.Arg(0, seccomp.NE, socket.AF_UNIX))
    fd = os.memfd_create("jazzmine-seccomp")
    with open(fd, "w+b") as program:
        rules.export_bpf(program)
        program.seek(0)
        return program.read()
