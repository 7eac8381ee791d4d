"""The bubblewrap backend, for machines without Docker: same harness, same request protocol.

Walls: every namespace unshared (so no network), the host's /usr bound read-only, the runtime
directory bound read-only, a private /tmp, no environment but what we set, the process dies
with its parent, and rlimits (address space, processes, open files, file size) via prlimit.
When started as root, the sandbox drops to nobody first so that the process limit applies.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
from collections import deque
from collections.abc import AsyncIterator
from pathlib import Path

from .errors import UnrestrictedRefused
from .events import Event
from .harness import UNRESTRICTED_ENV
from .request import RunLimits, RunRequest
from .session import ExitInfo, Stream, drive, engine_unavailable

SANDBOX_UID = 65534
RUNTIME_MOUNT = "/opt/jazzmine"
# Address space is a coarser wall than a cgroup: the interpreter maps some memory up front.
ADDRESS_SPACE_HEADROOM_MB = 64


def bwrap_available() -> tuple[bool, str]:
    """Tell whether bubblewrap can create its namespaces here, and why not."""
    if shutil.which("bwrap") is None:
        return False, "bwrap is not installed (apt-get install bubblewrap)"
    probe = subprocess.run(
        ["bwrap", "--unshare-all", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
         "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--", "/bin/true"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if probe.returncode != 0:
        return False, f"bwrap cannot create namespaces here: {probe.stderr.strip()}"
    return True, "ok"


class BwrapProcess:
    """One bubblewrap sandbox running the harness, ready for exactly one request."""

    backend = "bwrap"

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._chunks: asyncio.Queue[tuple[Stream, bytes] | None] = asyncio.Queue()
        self._open = 2
        self.early: deque[tuple[Stream, bytes]] = deque()
        self.start_errors: list[bytes] = []
        self._pumps = [
            asyncio.get_running_loop().create_task(self._pump("stdout", process.stdout)),
            asyncio.get_running_loop().create_task(self._pump("stderr", process.stderr)),
        ]

    async def _pump(self, stream: Stream, reader: asyncio.StreamReader | None) -> None:
        assert reader is not None
        while chunk := await reader.read(65536):
            await self._chunks.put((stream, chunk))
        await self._chunks.put(None)

    async def read(self) -> tuple[Stream, bytes] | None:
        """Return the next output chunk, or None once both pipes are closed."""
        if self.early:
            return self.early.popleft()
        while self._open:
            item = await self._chunks.get()
            if item is not None:
                return item
            self._open -= 1
        return None

    async def write(self, data: bytes) -> None:
        """Send bytes to the harness's stdin."""
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def kill(self) -> None:
        """Kill the whole sandbox process group."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    async def wait(self) -> ExitInfo:
        """Wait for the sandbox to end; a negative code is the killing signal."""
        code = await self.process.wait()
        return ExitInfo(exit_code=code)

    async def remove(self) -> None:
        """Make sure nothing of the sandbox survives the run."""
        await self.kill()
        with contextlib.suppress(ProcessLookupError):
            await self.process.wait()
        for task in self._pumps:
            task.cancel()


class BwrapRunner:
    """Run scripts under bubblewrap from a staged runtime directory (see SandboxBuilder.stage)."""

    backend = "bwrap"

    def __init__(
        self, *, python: str = "/usr/bin/python3", allow_unrestricted: bool = False
    ) -> None:
        self.python = python
        self.allow_unrestricted = allow_unrestricted

    def command(self, runtime_dir: Path, limits: RunLimits) -> list[str]:
        """Return the full command line of one sandbox."""
        memory = (limits.memory_mb + ADDRESS_SPACE_HEADROOM_MB) * 1024 * 1024
        command = [
            "prlimit", f"--as={memory}", f"--nproc={limits.pids_limit}", "--nofile=256",
            f"--fsize={limits.tmpfs_mb * 1024 * 1024}", "--core=0", "--",
        ]  # fmt: skip
        if os.geteuid() == 0:
            # RLIMIT_NPROC does not bind root: run the sandbox as nobody on the host too.
            command += ["setpriv", f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}",
                        "--clear-groups", "--"]  # fmt: skip
        command += [
            "bwrap", "--unshare-all", "--die-with-parent", "--new-session",
            "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--proc", "/proc", "--dev", "/dev",
            "--size", str(limits.tmpfs_mb * 1024 * 1024), "--tmpfs", "/tmp",
            "--ro-bind", str(runtime_dir), RUNTIME_MOUNT,
            "--clearenv", "--setenv", "PATH", "/usr/bin", "--setenv", "HOME", "/tmp",
            "--setenv", "LANG", "C.UTF-8", "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
            "--chdir", "/tmp", "--hostname", "sandbox",
        ]  # fmt: skip
        if limits.network:
            command.append("--share-net")
        if self.allow_unrestricted:
            command += ["--setenv", UNRESTRICTED_ENV, "1"]
        command += ["--", self.python, "-I", f"{RUNTIME_MOUNT}/harness.py", RUNTIME_MOUNT]
        return command

    async def start_process(self, runtime_dir: Path, limits: RunLimits) -> BwrapProcess:
        """Start one sandbox and wait until its harness is ready."""
        process = await asyncio.create_subprocess_exec(
            *self.command(runtime_dir, limits),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        sandbox = BwrapProcess(process)
        ready = await _await_ready(sandbox)
        if not ready:
            await sandbox.remove()
            detail = b"".join(sandbox.start_errors).decode(errors="replace")
            raise RuntimeError(f"the bwrap sandbox exited before its harness was ready: {detail}")
        return sandbox

    async def run(
        self, runtime_dir: Path, request: RunRequest, limits: RunLimits
    ) -> AsyncIterator[Event]:
        """Run one request in a new bubblewrap sandbox and yield its events as they arrive."""
        if request.unrestricted and not self.allow_unrestricted:
            raise UnrestrictedRefused(
                "unrestricted runs need a runner with allow_unrestricted=True"
            )
        try:
            sandbox = await self.start_process(runtime_dir, limits)
        except (OSError, RuntimeError) as exc:
            for event in engine_unavailable(self.backend, f"bubblewrap sandbox failed: {exc}"):
                yield event
            return
        try:
            async for event in drive(sandbox, request, limits):
                yield event
        finally:
            await sandbox.remove()


async def _await_ready(sandbox: BwrapProcess) -> bool:
    """Consume output until the ready line; put back whatever follows it."""
    pending = b""
    while True:
        item = await sandbox.read()
        if item is None:
            return False
        stream, chunk = item
        if stream == "stderr":
            sandbox.start_errors.append(chunk)  # kept to explain a failed start
            continue
        pending += chunk
        if b"\n" in pending:
            _line, rest = pending.split(b"\n", 1)
            if rest:
                sandbox.early.append(("stdout", rest))
            return True
