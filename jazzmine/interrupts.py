"""The stop switch of one piece of work (a run, a trial, a build), fired from another thread.

A stopping worker gives each piece of work it holds an `Interrupt` and fires them all when
its grace ends. Work says how it stops: blocking work checks it between steps (each line of
a build's log), a child process it waits on is killed for the time it runs (`during`), work
that runs a coroutine (a trial's container) runs it through `Interrupt.run`, which cancels
it so its container is removed on the way out, and work stopped from elsewhere (a run on the
executor's loop) asks to be told (`when_fired`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


class WorkInterrupted(Exception):
    """The work was stopped before it ended; the message says why, in the user's words."""


class Interrupt:
    """The stop switch of one piece of work, fired from another thread (a worker's grace timer)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reason: str | None = None
        self._listeners: list[Callable[[str], Any]] = []

    @property
    def reason(self) -> str | None:
        """Why the work must stop, once fired; else None."""
        return self._reason

    def fire(self, reason: str) -> None:
        """Stop the work: its next `check` raises, and whoever asked to be told is told."""
        with self._lock:
            if self._reason is not None:
                return
            self._reason = reason
            listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener(reason)

    def when_fired(self, listener: Callable[[str], Any]) -> None:
        """Call `listener(reason)` when fired: now, on this thread, if it has been already."""
        with self._lock:
            if self._reason is None:
                self._listeners.append(listener)
                return
        listener(self._reason)

    @contextlib.contextmanager
    def during(self, listener: Callable[[str], Any]) -> Iterator[None]:
        """Call `listener(reason)` if fired while the block runs (at once if fired already).

        For a step that blocks without a line to check between (a silent download): the
        listener ends the step (kills its process), and the block's end forgets it.
        """
        self.when_fired(listener)
        try:
            yield
        finally:
            # ValueError: fired meanwhile, so already called and forgotten.
            with self._lock, contextlib.suppress(ValueError):
                self._listeners.remove(listener)

    def wait(self, seconds: float) -> bool:
        """Wait `seconds`, less if fired meanwhile; tell whether it has been."""
        woken = threading.Event()
        with self.during(lambda _reason: woken.set()):
            woken.wait(seconds)
        return self._reason is not None

    def check(self) -> None:
        """Raise `WorkInterrupted` once fired (blocking work calls it between its steps)."""
        if self._reason is not None:
            raise WorkInterrupted(self._reason)

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine to its end on a loop of this thread's own; cancelled when fired."""

        async def main() -> T:
            if self._reason is not None:
                work.close()  # never started: nothing of it to clean up
                self.check()
            loop, task = asyncio.get_running_loop(), asyncio.current_task()
            assert task is not None

            def cancel(_reason: str) -> None:
                with contextlib.suppress(RuntimeError):  # its loop closed: it ended
                    loop.call_soon_threadsafe(task.cancel)

            self.when_fired(cancel)
            return await work

        try:
            return asyncio.run(main())
        except asyncio.CancelledError:
            # The coroutine's own clean-up ran on the way out (e.g. its container removed).
            if self._reason is None:
                raise
            raise WorkInterrupted(self._reason) from None
