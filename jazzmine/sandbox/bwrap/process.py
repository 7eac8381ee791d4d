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


class BwrapProcess:
    """One bubblewrap sandbox running the harness, ready for exactly one request."""

    backend = "bwrap"

    def __init__(self, process: asyncio.subprocess.Process, cgroup: RunCgroup) -> None:
        self.process = process
        self.cgroup = cgroup
        self._chunks: asyncio.Queue[tuple[Stream, bytes] | None] = asyncio.Queue()
        self._open = 2
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
        while chunk := await reader.read(65536):
            await self._chunks.put((stream, chunk))
        await self._chunks.put(None)

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
        """Kill every process of the sandbox."""
        self._kill_now()

    async def wait(self) -> ExitInfo:
        """Wait for the sandbox to end; a negative code is the killing signal."""
        code = await self.process.wait()
        return ExitInfo(exit_code=code, oom_killed=self.cgroup.out_of_memory())

    async def remove(self) -> None:
        """Make sure nothing of the sandbox survives the run, its cgroup included."""
        self._kill_now()
        try:
            with contextlib.suppress(ProcessLookupError, TimeoutError):
                async with asyncio.timeout(5):  # not `wait_for`: it can drop a cancel on 3.11
                    await self.process.wait()
        finally:
            for task in self._tasks:
                task.cancel()
            self.cgroup.remove()
