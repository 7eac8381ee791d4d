"""The bubblewrap backend, for machines without Docker: same harness, same request protocol.

Walls: every namespace unshared (so no network), a minimal /usr (the interpreter, its stdlib
and the shared libraries they load, read-only), the runtime directory bound read-only, a
private /tmp, no environment but what we set, a seccomp filter, and the process dies with its
parent. Memory, CPU and pids are limited for the whole run by a cgroup of its own (see
`cgroups`); when that cgroup cannot be made the run does not start. When started as root, the
sandbox drops to nobody first. Callers import its names from this package.
"""

from __future__ import annotations

from .availability import BwrapUnavailable, bwrap_available
from .runner import BwrapOneShot, BwrapRunner
from .staging import RUN_DIR_PREFIX, stage_run_dir

__all__ = [
    "RUN_DIR_PREFIX",
    "BwrapOneShot",
    "BwrapRunner",
    "BwrapUnavailable",
    "bwrap_available",
    "stage_run_dir",
]
