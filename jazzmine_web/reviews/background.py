"""The review worker: one scheduler thread that sweeps, and a few threads that deliver webhooks.

The sweep expires submissions nobody decided in time (reads also expire them, lazily), notes
run ends a callback missed, and picks up webhook deliveries still due after a restart. Work
never runs in a request: views and services only hand ids over.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import close_old_connections

from .conf import setting

logger = logging.getLogger(__name__)


class ReviewWorker:
    """Run timed webhook attempts, ad-hoc jobs and a periodic sweep off the request path."""

    def __init__(self, *, sweep_seconds: float | None = None) -> None:
        self.sweep_seconds = float(sweep_seconds or setting("JAZZMINE_REVIEW_SWEEP_SECONDS"))
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, str, Any]] = []
        self._order = itertools.count()
        self._scheduled: set[int] = set()  # delivery ids in the heap or in flight
        self._stopping = False
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=4, thread_name_prefix="reviews-job"
        )
        self._next_sweep = time.monotonic()
        self._thread = threading.Thread(target=self._main, name="reviews-worker", daemon=True)
        self._thread.start()

    # Any thread

    def deliver_soon(self, delivery_id: int, delay: float = 0.0) -> None:
        """Schedule one attempt of a webhook delivery."""
        with self._cond:
            if delivery_id in self._scheduled:
                return
            self._scheduled.add(delivery_id)
            self._push(delay, "deliver", delivery_id)

    def call_soon(self, job: Callable[[], Any]) -> None:
        """Run a job (a database write, say) on the worker's threads."""
        with self._cond:
            self._push(0.0, "job", job)

    def sweep_now(self) -> None:
        """Ask for a sweep at once."""
        with self._cond:
            self._next_sweep = time.monotonic()
            self._cond.notify()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop scheduling and wait for running jobs."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self._thread.join(timeout)
        self._pool.shutdown(wait=True, cancel_futures=True)

    # The scheduler thread

    def _push(self, delay: float, kind: str, item: Any) -> None:
        heapq.heappush(self._heap, (time.monotonic() + delay, next(self._order), kind, item))
        self._cond.notify()

    def _main(self) -> None:
        while True:
            with self._cond:
                while not self._stopping:
                    now = time.monotonic()
                    due = self._heap[0][0] if self._heap else float("inf")
                    if due <= now or self._next_sweep <= now:
                        break
                    self._cond.wait(min(due, self._next_sweep) - now)
                if self._stopping:
                    return
                now = time.monotonic()
                ready = []
                while self._heap and self._heap[0][0] <= now:
                    _due, _n, kind, item = heapq.heappop(self._heap)
                    ready.append((kind, item))
                sweep = self._next_sweep <= now
                if sweep:
                    self._next_sweep = now + self.sweep_seconds
            for kind, item in ready:
                if kind == "deliver":
                    self._submit(self._deliver, item)
                else:
                    self._submit(_run_job, item)
            if sweep:
                self._submit(self._sweep)

    def _submit(self, fn: Callable[..., Any], *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # shutting down
            self._pool.submit(fn, *args)

    # The job threads

    def _deliver(self, delivery_id: int) -> None:
        from .webhooks import webhook_delivery_attempt

        wait = None
        try:
            close_old_connections()
            wait = webhook_delivery_attempt(delivery_id=delivery_id)
        except Exception:
            logger.exception("webhook delivery %s failed in the worker", delivery_id)
        finally:
            close_old_connections()
        with self._cond:
            if wait is None:
                self._scheduled.discard(delivery_id)
            elif not self._stopping:
                self._push(wait, "deliver", delivery_id)

    def _sweep(self) -> None:
        from .services import submissions_expire_overdue, submissions_note_finished_runs
        from .webhooks import webhook_deliveries_due

        try:
            close_old_connections()
            submissions_expire_overdue()
            submissions_note_finished_runs()
            for delivery_id in webhook_deliveries_due():
                self.deliver_soon(delivery_id)
        except Exception:
            logger.exception("the review sweep failed")
        finally:
            close_old_connections()


def _run_job(job: Callable[[], Any]) -> None:
    try:
        close_old_connections()
        job()
    except Exception:
        logger.exception("a review job failed")
    finally:
        close_old_connections()


_worker: ReviewWorker | None = None
_worker_lock = threading.Lock()


def worker() -> ReviewWorker:
    """Return this process's review worker, starting it once."""
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = ReviewWorker()
        return _worker


def worker_stop() -> None:
    """Stop this process's review worker, if it was started."""
    global _worker
    with _worker_lock:
        current, _worker = _worker, None
    if current is not None:
        current.stop()
