"""How a stopping worker stops a build or a trial still going when its grace ends.

Each piece of work the worker holds gets an `Interrupt`. The grace's timer fires it from its
own thread: blocking work checks it between steps (each line of a build's log), and work that
runs a coroutine (a trial's container) runs it through `Interrupt.run`, which cancels it, so
its container is removed on the way out. Either way the work ends with `WorkInterrupted`,
whose message says why.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class WorkInterrupted(Exception):
    """The worker stopped before this work ended; the message says so, in the user's words."""


class Interrupt:
    """The stop switch of one piece of work, fired from another thread (the grace's timer)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reason: str | None = None
        self._running: tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]] | None = None

    @property
    def reason(self) -> str | None:
        """Why the work must stop, once fired; else None."""
        return self._reason

    def fire(self, reason: str) -> None:
        """Stop the work: its next `check` raises, and the coroutine it runs is cancelled."""
        with self._lock:
            if self._reason is not None:
                return
            self._reason = reason
            running = self._running
        if running is not None:
            loop, task = running
            with contextlib.suppress(RuntimeError):  # its loop closed meanwhile: it ended
                loop.call_soon_threadsafe(task.cancel)

    def check(self) -> None:
        """Raise `WorkInterrupted` once fired (blocking work calls it between its steps)."""
        if self._reason is not None:
            raise WorkInterrupted(self._reason)

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine to its end on a loop of this thread's own; cancelled when fired."""

        async def main() -> T:
            with self._lock:
                fired = self._reason is not None
                if not fired:
                    self._running = (asyncio.get_running_loop(), asyncio.current_task())  # type: ignore[assignment]
            if fired:
                work.close()  # never started: nothing of it to clean up
                self.check()
            try:
                return await work
            finally:
                with self._lock:
                    self._running = None

        try:
            return asyncio.run(main())
        except asyncio.CancelledError:
            # The coroutine's own clean-up ran on the way out (e.g. its container removed).
            if self._reason is None:
                raise
            raise WorkInterrupted(self._reason) from None
