"""Start sandboxes: the command line of the walls, a cgroup per run, one sandbox per request."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

from ..cgroups import CgroupUnavailable, RunCgroup, create_run_cgroup
from ..errors import SandboxError, UnrestrictedRefused
from ..events import Event
from ..harness import UNRESTRICTED_ENV
from ..identity import USER_ENVIRONMENT, sandbox_uid
from ..request import MAX_OPEN_FILES, RunLimits, RunRequest
from ..session import drive, engine_unavailable
from ..syscalls import seccomp_program
from ..workdirs import workdir_remove
from .process import BwrapProcess
from .usr import minimal_usr

RUNTIME_MOUNT = "/opt/jazzmine"
# bwrap itself: the outer process that waits (with `--as-pid-1` there is no inner init).
BWRAP_PIDS = 1
# Exit code of the launcher when the process cannot join its cgroup (it then never runs).
CGROUP_JOIN_FAILED = 125
# Writes its own pid to each cgroup.procs file given before "--", then runs what follows.
JOIN_CGROUP_SCRIPT = (
    f'while [ "$1" != -- ]; do echo $$ > "$1" || exit {CGROUP_JOIN_FAILED}; shift; done; '
    'shift; exec "$@"'
)


# All the launcher chain (sh, prlimit, setpriv, bwrap) needs.
LAUNCHER_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}


class BwrapRunner:
    """Run scripts under bubblewrap from a staged runtime directory (see `stage_run_dir`)."""

    backend = "bwrap"

    def __init__(
        self, *, python: str = "/usr/bin/python3", allow_unrestricted: bool = False
    ) -> None:
        self.python = python
        self.allow_unrestricted = allow_unrestricted

    def command(
        self, runtime_dir: Path, limits: RunLimits, *, cgroup: RunCgroup, seccomp_fd: int
    ) -> list[str]:
        """Return the full command line of one sandbox."""
        # The launcher joins the run's cgroup before anything else runs, so every process the
        # sandbox ever makes is inside it; if it cannot join, it stops before bwrap starts.
        command = [
            "/bin/sh", "-c",
            JOIN_CGROUP_SCRIPT,
            "jazzmine-join", *(str(f) for f in cgroup.procs_files), "--",
        ]  # fmt: skip
        command += [
            "prlimit", f"--nofile={MAX_OPEN_FILES}", f"--fsize={limits.tmpfs_mb * 1024 * 1024}", "--core=0",
            "--",
        ]  # fmt: skip
        if os.geteuid() == 0:
            # A uid of its own (`identity`); a worker that is not root can give none but its
            # own, which every one of its sandboxes then shares (README).
            uid = sandbox_uid()
            command += ["setpriv", f"--reuid={uid}", f"--regid={uid}",
                        "--clear-groups", "--"]  # fmt: skip
        command += [
            "bwrap", "--unshare-all", "--die-with-parent", "--new-session",
            # No bwrap init inside: it would hold the host's stdin and stdout as the sandbox
            # user, dumpable, so a script could write code into it (/proc/1/mem), hand it an
            # orphan to reap and print forged events past the relay. The relay (non-dumpable)
            # is pid 1 instead, as in a container; when it exits the kernel kills the rest.
            "--as-pid-1",
            *minimal_usr(self.python),
            "--proc", "/proc", "--dev", "/dev",
            "--size", str(limits.tmpfs_mb * 1024 * 1024), "--tmpfs", "/tmp",
            "--ro-bind", str(runtime_dir), RUNTIME_MOUNT,
            # Like Docker's read-only root: bwrap builds / (and /dev) on tmpfs mounts of its
            # own, unsized and writable, which no run limit counted. Only /tmp and a /dev/shm
            # of the same size stay writable; a device node still takes writes when read-only.
            "--size", str(limits.tmpfs_mb * 1024 * 1024), "--tmpfs", "/dev/shm",
            "--remount-ro", "/dev", "--remount-ro", "/",
            "--clearenv", "--setenv", "PATH", "/usr/bin", "--setenv", "HOME", "/tmp",
            "--setenv", "LANG", "C.UTF-8", "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
            *(arg for name, value in USER_ENVIRONMENT.items()
              for arg in ("--setenv", name, value)),
            "--chdir", "/tmp", "--hostname", "sandbox",
            "--seccomp", str(seccomp_fd),
        ]  # fmt: skip
        if self.allow_unrestricted:
            command += ["--setenv", UNRESTRICTED_ENV, "1"]
        command += ["--", self.python, "-I", f"{RUNTIME_MOUNT}/harness.py", RUNTIME_MOUNT]
        return command

    async def start_process(self, runtime_dir: Path, limits: RunLimits) -> BwrapProcess:
        """Start one sandbox in a cgroup of its own and wait until its harness is ready."""
        if limits.network:
            # bwrap's only network is the host's own (`--share-net`): its loopback services
            # (Redis, PostgreSQL) and abstract unix sockets included. Refused, not weakened.
            raise SandboxError(
                "the bubblewrap backend gives no network of its own (only the host's, loopback "
                "included); use the Docker backend for a sandbox with network"
            )
        program = seccomp_program(network=False)
        cgroup = create_run_cgroup(
            memory_mb=limits.memory_mb, cpus=limits.cpus, pids_limit=limits.pids_limit + BWRAP_PIDS
        )
        seccomp_fd = os.memfd_create("jazzmine-seccomp", 0)  # not CLOEXEC: bwrap reads it
        try:
            os.write(seccomp_fd, program)
            os.lseek(seccomp_fd, 0, os.SEEK_SET)
            process = await asyncio.create_subprocess_exec(
                *self.command(runtime_dir, limits, cgroup=cgroup, seccomp_fd=seccomp_fd),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                pass_fds=(seccomp_fd,),
                # Not the worker's environment (its keys, database URL): bwrap's own process
                # stays in the sandbox as pid 1, and `--clearenv` cleans only what it runs.
                env=LAUNCHER_ENV,
            )
        except BaseException:
            cgroup.remove()
            raise
        finally:
            os.close(seccomp_fd)
        sandbox = BwrapProcess(process, cgroup)
        ready = await _await_ready(sandbox)
        if not ready:
            await sandbox.remove()
            detail = b"".join(sandbox.start_errors).decode(errors="replace").strip()
            if process.returncode == CGROUP_JOIN_FAILED:
                raise CgroupUnavailable(f"the sandbox could not join its cgroup: {detail}")
            raise RuntimeError(f"the bwrap sandbox exited before its harness was ready: {detail}")
        return sandbox

    def check(self, request: RunRequest) -> None:
        """Refuse what this runner may not run."""
        if request.unrestricted and not self.allow_unrestricted:
            raise UnrestrictedRefused(
                "unrestricted runs need a runner with allow_unrestricted=True"
            )

    def bind(
        self, runtime_dir: Path, limits: RunLimits, *, remove_runtime_dir: bool = False
    ) -> BwrapOneShot:
        """Return the runner of one runtime directory and limits: a new sandbox per request.

        With `remove_runtime_dir` the runner owns its (per-run) directory and removes it
        however its run ends: result, error, timeout, kill or the caller walking away.
        """
        return BwrapOneShot(self, runtime_dir, limits, remove_runtime_dir=remove_runtime_dir)


class BwrapOneShot:
    """A `Runner` that starts a new bubblewrap sandbox from one runtime directory per request."""

    backend = "bwrap"

    def __init__(
        self,
        runner: BwrapRunner,
        runtime_dir: Path,
        limits: RunLimits,
        *,
        remove_runtime_dir: bool = False,
    ) -> None:
        self.runner = runner
        self.runtime_dir = runtime_dir
        self.limits = limits
        self.remove_runtime_dir = remove_runtime_dir

    async def run(self, request: RunRequest) -> AsyncIterator[Event]:
        """Run one request in a new bubblewrap sandbox and yield its events as they arrive."""
        try:
            self.runner.check(request)
            try:
                sandbox = await self.runner.start_process(self.runtime_dir, self.limits)
            except (OSError, RuntimeError, SandboxError) as exc:
                for event in engine_unavailable(self.backend, f"bubblewrap sandbox failed: {exc}"):
                    yield event
                return
            try:
                async for event in drive(sandbox, request, self.limits):
                    yield event
            finally:
                await sandbox.remove()
        finally:
            if self.remove_runtime_dir:
                workdir_remove(self.runtime_dir)


# What a start keeps of the sandbox's stderr to explain a failure (its end), and the longest
# first line it waits for: a tool's module that writes without end as it loads must not fill
# the host's memory before the harness could say it is ready.
START_ERRORS_BYTES = 16_384
READY_LINE_BYTES = 65_536


async def _await_ready(sandbox: BwrapProcess) -> bool:
    """Consume output until the ready line; put back whatever follows it."""
    pending = b""
    kept = 0
    while True:
        item = await sandbox.read()
        if item is None:
            return False
        stream, chunk = item
        if stream == "stderr":
            sandbox.start_errors.append(chunk)  # kept to explain a failed start
            kept += len(chunk)
            while kept - len(sandbox.start_errors[0]) >= START_ERRORS_BYTES:
                kept -= len(sandbox.start_errors.pop(0))  # only the end explains
            continue
        pending += chunk
        if len(pending) > READY_LINE_BYTES and b"\n" not in pending:
            sandbox.start_errors.append(b"\nthe harness wrote a first line too long to be ready")
            return False
        if b"\n" in pending:
            _line, rest = pending.split(b"\n", 1)
            if rest:
                sandbox.early.append(("stdout", rest))
            return True
