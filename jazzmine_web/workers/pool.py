"""The worker's pool: Celery's threads, answering what a cold shutdown asks of them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from celery.concurrency.thread import TaskPool as ThreadTaskPool
from celery.worker import state

# What stops the work this worker process holds, at once (`WorkerProcess.stop_now`): set as
# the worker starts (`workers.process`). Celery loads the pool before Django's apps are
# ready, so this module imports none of them.
_stop_now: Callable[[], None] | None = None


def stop_now_register(fn: Callable[[], None] | None) -> None:
    """Name what a cold shutdown calls before the pool waits for its threads (None: nothing)."""
    global _stop_now
    _stop_now = fn


class TaskPool(ThreadTaskPool):
    """Celery's thread pool, whose work a cold shutdown stops without killing a thread.

    A cold shutdown (a second Ctrl-C, or SIGQUIT) cancels every task in flight through
    `terminate_job`, which Celery's thread pool does not implement, then stops the pool,
    which waits for its threads: the worker logged two tracebacks and its runs went on to
    their own end or time limit, the page saying "running" until the reaper called the worker
    silent. A thread cannot be killed; the worker's own stop switch ends each run, build and
    trial it holds, saying why (`WorkerProcess.stop_now`), before the pool waits for them.
    """

    def terminate_job(self, pid: Any, signal: Any = None) -> None:
        # Each job is stopped by `on_stop` below, as a whole and saying why.
        return None

    def on_stop(self) -> None:
        # Celery marks a cold shutdown before it stops the pool; a warm one leaves the work
        # in flight its grace (`WorkerProcess.drain`), waited for here.
        stop_now = _stop_now
        if state.should_terminate and stop_now is not None:
            stop_now()
        super().on_stop()
