"""A warm pool: pre-started sandboxes with the harness loaded and waiting for one request.

Each sandbox serves exactly one run and is then removed; a replacement starts in the
background. No state can leak from one script to the next, yet dispatch costs only a write
to an already attached socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

from .containers import ImageMissing, remove_labelled
from .docker_runner import (
    POOL_LABEL,
    STALE_ATTEMPTS,
    DockerRunner,
    Remake,
    Vet,
    start_failure,
    vetted,
)
from .engine import EngineUnavailable
from .events import Event
from .request import RunLimits, RunRequest
from .session import drive


class WarmPool:
    """A `Runner` keeping `size` ready sandboxes of one image and limits; one per request."""

    backend = "docker"

    def __init__(
        self,
        runner: DockerRunner,
        image: str,
        limits: RunLimits,
        *,
        size: int = 2,
        max_starting: int = 4,
    ) -> None:
        if size < 1:
            raise ValueError("a warm pool needs at least one sandbox")
        self.runner = runner
        self.image = image
        self.limits = limits
        self.size = size
        self.id = uuid.uuid4().hex[:12]
        self._ready: asyncio.Queue[Any] = asyncio.Queue()
        self._starting: set[asyncio.Task[None]] = set()
        # Bound concurrent container starts: on two cores, twenty at once slow every one.
        self._start_slots = asyncio.Semaphore(max_starting)
        self._closed = False
        self._waiting = 0
        self._runs = 0  # runs between their start and their end (`busy`)
        self._failures = 0  # failed starts queued among the ready sandboxes
        self.last_error: Exception | None = None

    @property
    def label(self) -> str:
        """Return the label filter matching this pool's containers."""
        return f"{POOL_LABEL}={self.id}"

    @property
    def busy(self) -> bool:
        """Tell whether a run is using this pool: waiting for a sandbox, or running in one."""
        return self._runs > 0

    @property
    def ready_count(self) -> int:
        """Return how many sandboxes are ready right now (failed starts are not)."""
        return self._ready.qsize() - self._failures

    async def start(self, *, wait: bool = True) -> None:
        """Fill the pool; with `wait`, return once every sandbox is ready."""
        for _ in range(self.size - self._ready.qsize() - len(self._starting)):
            self._spawn()
        if wait:
            while self._starting:
                await asyncio.gather(*list(self._starting), return_exceptions=True)

    def _spawn(self) -> None:
        if self._closed:
            return
        task = asyncio.get_running_loop().create_task(self._start_one())
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

    async def _start_one(self) -> None:
        async with self._start_slots:
            if self._closed:
                return
            try:
                process = await self.runner.start_process(
                    self.image, self.limits, labels={POOL_LABEL: self.id}
                )
            except (EngineUnavailable, ImageMissing) as exc:
                self.last_error = exc
                self._failures += 1
                self._ready.put_nowait(exc)  # wake one waiting run with the reason
                return
        if self._closed:
            await process.remove()
            return
        self._ready.put_nowait(process)

    async def _take(self) -> Any:
        """Return a ready sandbox (or the error that prevented one), starting one if none comes."""
        while True:
            self._waiting += 1
            try:
                # More runs waiting than sandboxes ready or on the way: start one for this run.
                if self._ready.qsize() + len(self._starting) < self._waiting:
                    self._spawn()
                item = await self._ready.get()
            finally:
                self._waiting -= 1
            if isinstance(item, Exception):
                self._failures -= 1
                if self.ready_count > 0:
                    continue  # a sandbox that did start serves this run (the error is kept)
                return item
            if item.alive:
                return item
            await item.remove()  # died while idle; never hand it out

    async def run(
        self, request: RunRequest, *, remake: Remake | None = None, vet: Vet | None = None
    ) -> AsyncIterator[Event]:
        """Run one request on a warm sandbox and yield its events (`_run`), counted in `busy`."""
        self._runs += 1
        events = self._run(request, remake=remake, vet=vet)
        try:
            async for event in events:
                yield event
        finally:
            await events.aclose()  # its own clean-up (the sandbox's removal) now, not at GC
            self._runs -= 1

    async def _run(
        self, request: RunRequest, *, remake: Remake | None = None, vet: Vet | None = None
    ) -> AsyncIterator[Event]:
        """Run one request on a warm sandbox and yield its events as they arrive.

        A sandbox that could not start because the image is gone (removed under a run that
        saw it a moment earlier) is started once more after `remake` made the image again
        and said so; nothing of the script ran before that. With `vet`, the request sent is
        the one it returns for the sandbox's image; a sandbox it finds stale goes, with every
        sandbox that was ready beside it (started from the same old image), and the run
        takes a new one.
        """
        self.runner.check(request)
        if self._closed:
            raise RuntimeError("this warm pool is closed")
        for attempt in range(1, STALE_ATTEMPTS + 1):
            item = await self._take()
            if isinstance(item, ImageMissing) and remake is not None and await remake():
                self._failures_drop()  # starts that failed before the image was made again
                item = await self._take()
            if isinstance(item, Exception):
                for event in start_failure(self.backend, item):
                    yield event
                return
            sent = await vetted(item, request, vet, last=attempt == STALE_ATTEMPTS)
            if sent is not None:
                break
            await self._ready_drop()  # started from the same old image
        try:
            async for event in drive(item, sent, self.limits):
                yield event
        finally:
            await item.remove()
            # Back to size once the run is over, not when it starts: starting a container costs
            # CPU the run needs right now (on two cores, a start during a run slows its events
            # by half), and the other ready sandboxes cover the runs in between.
            if self._ready.qsize() + len(self._starting) < self.size:
                self._spawn()

    async def _ready_drop(self) -> None:
        """Remove the ready sandboxes (made from an image no longer current); start others."""
        while not self._ready.empty():
            item = self._ready.get_nowait()
            if isinstance(item, Exception):
                self._failures -= 1
            else:
                await item.remove()

    def _failures_drop(self) -> None:
        """Forget the failed starts queued among the ready sandboxes (their cause is gone)."""
        kept = []
        while not self._ready.empty():
            item = self._ready.get_nowait()
            if not isinstance(item, Exception):
                kept.append(item)
        for item in kept:
            self._ready.put_nowait(item)
        self._failures = 0

    async def close(self, *, timeout: float = 30.0) -> None:
        """Stop refilling and remove every container of this pool."""
        self._closed = True
        # Let starts in flight finish rather than cancel them: a start cancelled while the
        # engine creates its container leaves a container that no task knows about. Each
        # start sees `_closed` when it returns and removes its own container.
        starting = list(self._starting)
        if starting:
            _done, pending = await asyncio.wait(starting, timeout=timeout)
            for task in pending:
                task.cancel()
        while not self._ready.empty():
            item = self._ready.get_nowait()
            if not isinstance(item, Exception):
                await item.remove()
        self._failures = 0
        # Whatever a cancelled start still created is swept by label.
        with contextlib.suppress(Exception):
            await asyncio.to_thread(remove_labelled, self.runner.client, self.label)

    async def __aenter__(self) -> WarmPool:
        await self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()
