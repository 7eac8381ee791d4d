"""This worker process: its name, its heartbeat, the rows it holds and the containers it owns.

Each app says how its rows are kept alive (`kind_register`): runs, image builds and trial runs
are claimed and held the same way (`execute_claimed`). A heartbeat thread says every few
seconds that the worker and what it holds are alive, tells each kind which of its rows ended
meanwhile, and removes containers that dead workers left on this Docker host.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from jazzmine.interrupts import Interrupt
from jazzmine.sandbox.engine import engine_client
from jazzmine.sandbox.owner import owner_set, remove_owned

from ..studio.db import DATABASE_UNREACHABLE
from . import services

logger = logging.getLogger(__name__)
T = TypeVar("T")


class DatabaseOutage:
    """When this process last found the database not answering, and what that says of others.

    A worker's silence means it is gone only once this process has seen the database answer
    for a heartbeat timeout and for as long again as the outage lasted: the same outage
    stopped every worker's heartbeat, and each needs a moment to reconnect once it answers.
    That moment grows with the outage: a connection pool tries again after waits that double
    (1, 2, 4, 8 s...), so after 9 s down a worker's next try came 6 s after the database was
    back, and a reaper patient for a 6 s timeout alone ended its run. Ending their runs then,
    or removing their sandboxes, would end work that was never lost.
    """

    def __init__(self) -> None:
        self._lost_at: float | None = None  # monotonic; None: never
        self._began: float = 0.0  # monotonic: when the outage `_lost_at` is part of began

    def seen(self) -> None:
        """Note that the database did not answer just now."""
        now = time.monotonic()
        timeout = settings.JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS
        if self._lost_at is None or now - self._lost_at >= timeout:
            self._began = now  # a new outage, not the last one going on
        self._lost_at = now

    def silence_counts(self) -> bool:
        """Tell whether a silent worker may be judged gone now."""
        lost = self._lost_at
        if lost is None:
            return True
        patience = settings.JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS + (lost - self._began)
        return time.monotonic() - lost >= patience


@dataclass(frozen=True)
class Kind:
    """How rows of one kind (runs, builds, trials) are kept alive and stopped."""

    # beat(worker=name, ids=[...]) says the rows are alive; it returns the ids that ended
    # meanwhile (the reaper gave up on them) when the kind can stop its work, else anything.
    beat: Callable[..., Any]
    # ended(row_id) stops the work on a row that ended under this worker; None: nothing to stop.
    ended: Callable[[Any], Any] | None = None
    # lost(worker=name, before=time) ends the rows an earlier life of this worker still held
    # (heartbeat older than `before`) and returns how many; None: only the reaper ends them.
    lost: Callable[..., int] | None = None


KINDS: dict[str, Kind] = {}
STARTING: list[Callable[[], Any]] = []
STOPPING: list[Callable[[], Any]] = []


def kind_register(
    kind: str,
    *,
    beat: Callable[..., Any],
    ended: Callable[[Any], Any] | None = None,
    lost: Callable[..., int] | None = None,
) -> None:
    """Say how rows of one kind are kept alive, how work on one that ended is stopped, and
    how those an earlier life of the worker left are ended."""
    KINDS[kind] = Kind(beat=beat, ended=ended, lost=lost)


def starting_register(fn: Callable[[], Any]) -> None:
    """Call `fn` when the worker starts, before it takes a task (e.g. to learn its images)."""
    if fn not in STARTING:
        STARTING.append(fn)


def stopping_register(fn: Callable[[], Any]) -> None:
    """Call `fn` when the worker stops, after its tasks have drained (e.g. to close pools)."""
    if fn not in STOPPING:
        STOPPING.append(fn)


class WorkerProcess:
    """The state of the one worker in this process."""

    def __init__(self, *, name: str, concurrency: int) -> None:
        self.name = name
        self.boot = uuid.uuid4().hex
        self.concurrency = concurrency
        self.docker_host = os.environ.get("DOCKER_HOST", "")
        # What this worker holds, (kind, row id), and the stop switch of the work on it
        self._held: dict[tuple[str, Any], Interrupt] = {}
        self._grace_over = False
        self._cold = False  # stopped with no grace (`stop_now`)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="worker-heartbeat", daemon=True)
        self._grace: threading.Timer | None = None
        # When a heartbeat last found the database not answering.
        self._outage = DatabaseOutage()

    def start(self) -> None:
        """Register, remove what an earlier life of this worker left, and start the heartbeat."""
        owner_set(self.name, self.boot, settings.JAZZMINE_DEPLOYMENT)
        started = timezone.now()
        hostname, pid = socket.gethostname(), os.getpid()
        earlier = _in_db(services.worker_earlier_life, name=self.name)
        _in_db(
            services.worker_register,
            name=self.name,
            boot=self.boot,
            hostname=hostname,
            pid=pid,
            docker_host=self.docker_host,
            concurrency=self.concurrency,
            queue=settings.JAZZMINE_REDIS_PREFIX,
        )
        self._queues_compare()
        # Asked before this process listens, so an answer is another process of this name
        # (started twice by mistake): what it holds, rows and containers, is left alone.
        twin = earlier is not None and services.worker_name_answers(self.name)
        if twin:
            logger.error(
                "worker %s: another running process answers to this name; give each worker "
                "its own (celery -n); what that process holds is left alone",
                self.name,
            )
        self._sweep_containers(include_self=not twin)
        if (
            earlier is not None
            and not twin
            and services.earlier_life_gone(earlier, hostname=hostname, pid=pid)
        ):
            self._end_earlier_life(before=started)
        # Beating first: a slow start (an engine slow to answer) must not look like a death
        # to the other workers, whose sweeps would remove this one's containers.
        self._thread.start()
        for fn in STARTING:
            try:
                fn()
            except Exception:
                logger.exception("worker %s: %r failed while starting", self.name, fn)

    def _queues_compare(self) -> None:
        """Say in the log when alive workers of this database listen on another queue.

        One of the two was started with another `JAZZMINE_DEPLOYMENT` or `JAZZMINE_REDIS_PREFIX`
        (or none where the others set one): the runs of one side wait `queued` for ever.
        """
        try:
            alive = services.workers_alive(queue=settings.JAZZMINE_REDIS_PREFIX)
        except DATABASE_UNREACHABLE:
            return
        others = {n: q for n, q in alive.elsewhere.items() if n != self.name}
        if others:
            logger.warning(
                "worker %s listens under Redis prefix %r, but worker(s) of the same database "
                "listen elsewhere: %s. Give every process the same JAZZMINE_DEPLOYMENT and "
                "JAZZMINE_REDIS_PREFIX, or runs wait queued for a worker that never hears them",
                self.name,
                settings.JAZZMINE_REDIS_PREFIX,
                ", ".join(f"{n} ({q!r})" for n, q in sorted(others.items())),
            )

    def _end_earlier_life(self, *, before: datetime.datetime) -> None:
        """End at once what this worker's previous process held when it died (killed, OOM).

        Called only when that process is certainly gone and nothing else answers to the
        name (a second worker misnamed the same, alive, holds rows under it too: the pid of
        the process that last registered says nothing about it). Nothing is taken before
        `start` returns, so every row still held under this name is the earlier life's;
        `before` keeps it so all the same. Without this, a restarted worker's old runs,
        builds and trials wait out the heartbeat timeout, and the Build button with them.
        """
        for kind, spec in KINDS.items():
            if spec.lost is None:
                continue
            try:
                ended = _in_db(spec.lost, worker=self.name, before=before)
            except Exception:
                logger.exception("worker %s: could not end its earlier life's %ss", self.name, kind)
                continue
            if ended:
                logger.warning(
                    "worker %s ended %d %s(s) its previous process left", self.name, ended, kind
                )

    def drain(self) -> None:
        """Take no new work (Celery's warm shutdown) and give what is in flight its grace.

        Once `JAZZMINE_WORKER_GRACE_SECONDS` have passed, the work still going is stopped,
        saying why: a run that would go on for minutes must not keep the worker from
        stopping until its supervisor kills it, which would leave its sandboxes behind.
        """
        if self._grace is not None:
            return  # a second signal: the grace already runs
        seconds = settings.JAZZMINE_WORKER_GRACE_SECONDS
        # A daemon: a worker whose work ended in time exits without waiting for it.
        self._grace = threading.Timer(seconds, self._interrupt)
        self._grace.daemon = True
        self._grace.start()

    def stop(self) -> None:
        """Stop the heartbeat and what the apps keep open (pools), and record the stop."""
        if self._grace is not None:
            self._grace.cancel()
        self._stop.set()
        self._thread.join(10)
        for fn in STOPPING:
            try:
                fn()
            except Exception:
                logger.exception("worker %s: %r failed while stopping", self.name, fn)
        with contextlib.suppress(Exception):
            _in_db(services.worker_stop, name=self.name)

    @contextlib.contextmanager
    def holding(self, kind: str, row_id: Any) -> Iterator[Interrupt]:
        """Keep one claimed row alive with the heartbeat while the block runs.

        The block gets the work's stop switch, fired when the worker's grace is over (at
        once if it is over already).
        """
        interrupt = Interrupt()
        with self._lock:
            self._held[(kind, row_id)] = interrupt
            over = self._grace_over
        if over:
            interrupt.fire(self._stopped_before(kind))
        try:
            yield interrupt
        finally:
            with self._lock:
                self._held.pop((kind, row_id), None)

    def holds(self, kind: str, row_id: Any) -> bool:
        """Tell whether this worker is working on a row now."""
        with self._lock:
            return (kind, row_id) in self._held

    def stop_now(self) -> None:
        """Stop the work still going at once, each saying why: a cold shutdown (a second
        Ctrl-C, or SIGQUIT) gives no grace, and Celery cannot stop a thread itself."""
        if self._grace is not None:
            self._grace.cancel()
        self._interrupt(cold=True)

    def _interrupt(self, *, cold: bool = False) -> None:
        """The grace is over: stop the work still going, each saying why."""
        with self._lock:
            self._grace_over = True
            self._cold = self._cold or cold
            held = list(self._held.items())
        for (kind, row_id), interrupt in held:
            try:
                interrupt.fire(self._stopped_before(kind))
            except Exception:
                logger.exception("could not stop the %s %s still going", kind, row_id)

    def _stopped_before(self, kind: str) -> str:
        if self._cold:
            return (
                f"its worker {self.name} was stopped at once (a cold shutdown: a second Ctrl-C "
                f"or SIGQUIT) before the {kind} ended"
            )
        grace = settings.JAZZMINE_WORKER_GRACE_SECONDS
        return (
            f"its worker {self.name} stopped before the {kind} ended (after a grace of {grace:g} s)"
        )

    def silence_counts(self) -> bool:
        """Tell whether another worker's silence means it is gone, as this process sees it."""
        return self._outage.silence_counts()

    def _beat(self) -> None:
        every = settings.JAZZMINE_HEARTBEAT_SECONDS
        sweeps = max(1, round(settings.JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS / every))
        beat = 0
        while not self._stop.wait(every):
            beat += 1
            with self._lock:
                keys = list(self._held)
            held: dict[str, list[Any]] = {}
            for kind, row_id in sorted(keys, key=str):
                held.setdefault(kind, []).append(row_id)
            try:
                _in_db(services.worker_heartbeat, name=self.name)
                ended = {
                    kind: _in_db(KINDS[kind].beat, worker=self.name, ids=ids)
                    for kind, ids in held.items()
                }
            except DATABASE_UNREACHABLE as exc:
                self._outage.seen()
                logger.warning("worker %s: the database does not answer: %s", self.name, exc)
                continue
            except Exception:
                logger.exception("worker %s: heartbeat failed", self.name)
                continue
            for kind, ids in ended.items():
                _stop_ended(KINDS[kind], ids)
            if beat % sweeps == 0 and self.silence_counts():
                self._sweep_containers(include_self=False)

    def _sweep_containers(self, *, include_self: bool) -> None:
        """Remove containers on this Docker host owned by dead workers (and an earlier self)."""
        try:
            owners = set(_in_db(services.workers_dead)) - {self.name}
            if include_self:
                owners.add(self.name)
            if not owners:
                return
            removed = remove_owned(
                engine_client(),
                owners,
                deployment=settings.JAZZMINE_DEPLOYMENT,
                keep_boot=self.boot,
            )
        except Exception:
            logger.exception("worker %s: could not sweep containers of dead workers", self.name)
            return
        if removed:
            logger.warning(
                "worker %s removed %d container(s) of stopped workers", self.name, removed
            )


def _stop_ended(kind: Kind, ids: Any) -> None:
    if kind.ended is None:  # its beat's answer says nothing about ended rows
        return
    for row_id in ids:
        try:
            kind.ended(row_id)
        except Exception:
            logger.exception("could not stop %r, which ended meanwhile", row_id)


def _in_db(fn: Callable[..., T], /, **kwargs: Any) -> T:
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


def silence_counts() -> bool:
    """`WorkerProcess.silence_counts` of this process's worker (True in any other process)."""
    current = _current
    return current is None or current.silence_counts()


def execute_claimed(
    kind: str, row_id: Any, *, claim: Callable[..., bool], work: Callable[[Interrupt], T]
) -> T | None:
    """Claim a row (a build, a trial) for this worker and do its work, kept alive meanwhile.

    The work gets its stop switch, fired when a stopping worker's grace is over. None when
    another worker (or the reaper) had it first: the message was a duplicate.
    """
    current = _started()
    if not claim(worker=current.name):
        return None
    with current.holding(kind, row_id) as interrupt:
        return work(interrupt)


def execute_held(kind: str, row_id: Any, *, work: Callable[[str, Interrupt], T]) -> T:
    """Do work that claims its row itself (given the worker's name), kept alive meanwhile.

    For work whose claim is one step with its first reads (a run). Until the claim the row
    is not this worker's, so its heartbeat touches nothing of it. The work gets its stop
    switch, as in `execute_claimed`.
    """
    current = _started()
    with current.holding(kind, row_id) as interrupt:
        return work(current.name, interrupt)


def _started() -> WorkerProcess:
    current = worker_process()
    if current is None:  # a task delivered before the worker finished starting
        raise RuntimeError("this process is not a started worker")
    return current


def worker_process_stop() -> None:
    """Stop this process's worker state, if it started."""
    global _current
    current, _current = _current, None
    if current is not None:
        current.stop()
