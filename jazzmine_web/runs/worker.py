"""This worker process: its name, its heartbeat, the runs it holds and the containers it owns.

A Celery worker (threads pool) executes each run on the process's `RunExecutor`, whose warm
pools live as long as the process. A heartbeat thread says every few seconds that the worker
and its runs are alive; it stops runs the reaper ended meanwhile, and removes containers that
dead workers left on this Docker host.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from django.conf import settings
from django.db import close_old_connections

from jazzmine.sandbox.owner import owner_set, remove_owned

from . import lifecycle
from .executor import executor, executor_shutdown
from .models import RunStatus

logger = logging.getLogger(__name__)
T = TypeVar("T")

CANCELLED_BY_REAPER = "the run was ended while its worker was not answering"

# Besides runs, what else a worker holds and how it says it is alive: {kind: fn(worker, ids)}.
# Each app registers its own (builds, trials), so this module needs none of them.
HEARTBEATS: dict[str, Callable[..., Any]] = {}


def heartbeat_register(kind: str, beat: Callable[..., Any]) -> None:
    """Say how rows of one kind are kept alive: `beat(worker=name, ids=[...])`."""
    HEARTBEATS[kind] = beat


class WorkerProcess:
    """The state of the one worker in this process."""

    def __init__(self, *, name: str, concurrency: int) -> None:
        self.name = name
        self.boot = uuid.uuid4().hex
        self.concurrency = concurrency
        self.docker_host = os.environ.get("DOCKER_HOST", "")
        self._runs: set[str] = set()
        self._held: dict[str, set[Any]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="worker-heartbeat", daemon=True)

    def start(self) -> None:
        """Register, remove what an earlier life of this worker left, and start the heartbeat."""
        owner_set(self.name, self.boot)
        _in_db(
            lifecycle.worker_register,
            name=self.name,
            boot=self.boot,
            hostname=socket.gethostname(),
            pid=os.getpid(),
            docker_host=self.docker_host,
            concurrency=self.concurrency,
        )
        self._sweep_containers(include_self=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the heartbeat and the executor (its pools), and record the stop."""
        self._stop.set()
        self._thread.join(10)
        executor_shutdown()
        with contextlib.suppress(Exception):
            _in_db(lifecycle.worker_stop, name=self.name)

    def execute(self, run_id: str) -> str | None:
        """Claim and execute one run; None when it was not this worker's to run."""
        if not _in_db(lifecycle.run_claim, run_id=run_id, worker=self.name):
            return None
        with self._lock:
            self._runs.add(run_id)
        try:
            return executor().submit(run_id).result()
        except Exception:
            logger.exception("run %s ended in the worker", run_id)
            return RunStatus.FAILED
        finally:
            with self._lock:
                self._runs.discard(run_id)

    @contextlib.contextmanager
    def holding(self, kind: str, row_id: Any) -> Iterator[None]:
        """Keep one claimed row (a build, a trial) alive with the heartbeat while the block runs."""
        with self._lock:
            self._held.setdefault(kind, set()).add(row_id)
        try:
            yield
        finally:
            with self._lock:
                self._held[kind].discard(row_id)

    def cancel(self, run_id: str, *, reason: str) -> bool:
        """Stop a run of this worker, killing its sandbox; tell whether it was here."""
        with self._lock:
            here = run_id in self._runs
        return here and executor().cancel(run_id, reason=reason)

    def _beat(self) -> None:
        every = settings.JAZZMINE_HEARTBEAT_SECONDS
        sweeps = max(1, round(settings.JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS / every))
        beat = 0
        while not self._stop.wait(every):
            beat += 1
            with self._lock:
                runs = sorted(self._runs)
                held = {kind: sorted(ids, key=str) for kind, ids in self._held.items() if ids}
            try:
                ended = _in_db(lifecycle.worker_heartbeat, name=self.name, run_ids=runs)
                for kind, ids in held.items():
                    _in_db(HEARTBEATS[kind], worker=self.name, ids=ids)
            except Exception:
                logger.exception("worker %s: heartbeat failed", self.name)
                continue
            for run_id in ended:
                executor().cancel(run_id, reason=CANCELLED_BY_REAPER)
            if beat % sweeps == 0:
                self._sweep_containers(include_self=False)

    def _sweep_containers(self, *, include_self: bool) -> None:
        """Remove containers on this Docker host owned by dead workers (and an earlier self)."""
        try:
            owners = set(_in_db(lifecycle.workers_dead)) - {self.name}
            if include_self:
                owners.add(self.name)
            if not owners:
                return
            import docker

            removed = remove_owned(docker.from_env(), owners, keep_boot=self.boot)
        except Exception:
            logger.exception("worker %s: could not sweep containers of dead workers", self.name)
            return
        if removed:
            logger.warning(
                "worker %s removed %d container(s) of stopped workers", self.name, removed
            )


def _in_db(fn: Any, /, **kwargs: Any) -> Any:
    close_old_connections()
    try:
        return fn(**kwargs)
    finally:
        close_old_connections()


_current: WorkerProcess | None = None


def worker_process_start(*, name: str, concurrency: int) -> WorkerProcess:
    """Start the worker state of this process (once)."""
    global _current
    if _current is None:
        _current = WorkerProcess(name=name, concurrency=concurrency)
        _current.start()
    return _current


def worker_process() -> WorkerProcess | None:
    """Return this process's worker, if it is one."""
    return _current


def execute_claimed(
    kind: str, row_id: Any, *, claim: Callable[..., bool], work: Callable[[], T]
) -> T | None:
    """Claim a row (a build, a trial) for this worker and do its work, kept alive meanwhile.

    None when another worker (or the reaper) had it first: the message was a duplicate.
    """
    current = worker_process()
    if current is None:  # a task delivered before the worker finished starting
        raise RuntimeError("this process is not a started worker")
    if not claim(worker=current.name):
        return None
    with current.holding(kind, row_id):
        return work()


def worker_process_stop() -> None:
    """Stop this process's worker state, if it started."""
    global _current
    current, _current = _current, None
    if current is not None:
        current.stop()
