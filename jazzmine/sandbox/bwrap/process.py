"""One started sandbox as `drive` sees it: its output, its stdin, its end; killed out of memory."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import deque

from ..cgroups import RunCgroup
from ..session import ExitInfo
from ..streams import Stream

OOM_POLL_SECONDS = 0.05
READ_BYTES = 65536
# Output waits here until the driver takes it, and only then counts against the run's cap.
# Unbounded, a sandbox writing faster than the driver took (or while its caller paused: to
# store the run's end, say) filled the host's memory, hundreds of MiB past a 1 MB cap. Full,
# the pumps stop reading: the pipes fill and the sandbox's writers block, as on Docker's
# attach socket. At most QUEUED_CHUNKS * READ_BYTES (1 MiB) here, plus what each
# StreamReader buffers before it pauses its pipe (a few hundred KiB).
QUEUED_CHUNKS = 16


class BwrapProcess:
    """One bubblewrap sandbox running the harness, ready for exactly one request."""

    backend = "bwrap"

    def __init__(self, process: asyncio.subprocess.Process, cgroup: RunCgroup) -> None:
        self.process = process
        self.cgroup = cgroup
        self._chunks: asyncio.Queue[tuple[Stream, bytes] | None] = asyncio.Queue(QUEUED_CHUNKS)
        self._open = 2
        self._discarding = False
        self.early: deque[tuple[Stream, bytes]] = deque()
        self.start_errors: list[bytes] = []
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._pump("stdout", process.stdout)),
            loop.create_task(self._pump("stderr", process.stderr)),
            loop.create_task(self._watch_memory()),
        ]

    async def _pump(self, stream: Stream, reader: asyncio.StreamReader | None) -> None:
        assert reader is not None
        while chunk := await reader.read(READ_BYTES):
            if not self._discarding:
                await self._chunks.put((stream, chunk))  # waits while the driver is behind
        await self._chunks.put(None)

    def _discard(self) -> None:
        """Drop the output nobody will read and read the pipes to their end from now on.

        The run is over. Without this a full queue kept the pumps, and so the pipes, stopped:
        the pipes never reached their end and `process.wait()`, which waits for them, hung.
        """
        self._discarding = True
        while not self._chunks.empty():
            if self._chunks.get_nowait() is None:  # each frees a pump waiting to put
                self._open -= 1  # a pipe's end, dropped with the rest: `read` still counts it

    async def _watch_memory(self) -> None:
        """Kill the whole run as soon as it is out of memory (v1 tasks wait rather than die)."""
        while not self.cgroup.out_of_memory():
            await asyncio.sleep(OOM_POLL_SECONDS)
        self._kill_now()

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

    def _kill_now(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        # The sandbox starts its own session inside, out of our process group: the cgroup
        # holds every process of the run whatever it did.
        self.cgroup.kill()

    async def kill(self) -> None:
        """Kill every process of the sandbox; output not read yet is dropped."""
        self._kill_now()
        self._discard()

    async def wait(self) -> ExitInfo:
        """Wait for the sandbox to end; a negative code is the killing signal."""
        code = await self.process.wait()
        return ExitInfo(exit_code=code, oom_killed=self.cgroup.out_of_memory())

    async def remove(self) -> None:
        """Make sure nothing of the sandbox survives the run, its cgroup included."""
        self._kill_now()
        self._discard()
        try:
            with contextlib.suppress(ProcessLookupError, TimeoutError):
                async with asyncio.timeout(5):  # not `wait_for`: it can drop a cancel on 3.11
                    await self.process.wait()
        finally:
            for task in self._tasks:
                task.cancel()
            self.cgroup.remove()
