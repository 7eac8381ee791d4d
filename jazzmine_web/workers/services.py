"""The worker rows: a worker says it started, that it is alive, and that it stopped."""

from __future__ import annotations

import datetime
import logging
import os
import threading
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from jazzmine.sandbox.egress import Allowed, allowed_from, egress_allow

from ..celery import app as celery_app
from ..studio.claims import heartbeat_cutoff
from ..studio.enqueue import BROKER_ERRORS
from .models import Worker

logger = logging.getLogger(__name__)


def worker_register(
    *,
    name: str,
    boot: str,
    hostname: str,
    pid: int,
    docker_host: str,
    concurrency: int,
    queue: str = "",
) -> Worker:
    """Record a worker that has started (a restart under the same name is a new boot)."""
    now = timezone.now()
    worker, _created = Worker.objects.update_or_create(
        name=name,
        defaults={
            "boot": boot,
            "hostname": hostname,
            "pid": pid,
            "docker_host": docker_host,
            "concurrency": concurrency,
            "queue": queue,
            "started_at": now,
            "heartbeat_at": now,
            "stopped_at": None,
        },
    )
    return worker


@dataclass(frozen=True)
class EarlierLife:
    """What the database knew of a worker's name before this process took it."""

    hostname: str
    pid: int


def worker_earlier_life(*, name: str) -> EarlierLife | None:
    """Return the row of the process that last used this name (None: the name is new)."""
    row = Worker.objects.filter(name=name).values_list("hostname", "pid").first()
    return None if row is None else EarlierLife(hostname=row[0], pid=row[1])


def earlier_life_gone(earlier: EarlierLife, *, hostname: str, pid: int) -> bool:
    """Tell whether the process that last used a worker's name is certainly not running.

    True only when it ran on this host and its pid is ours or no process's. A process
    elsewhere (or a pid taken again meanwhile) may be a second worker started under the same
    name by mistake: its rows are left to the reaper's timeout, which a live process's
    heartbeat keeps off them. Its row saying it stopped proves nothing: a second worker of
    the same name shares that row.
    """
    if earlier.hostname != hostname or earlier.pid <= 0:
        return False
    if earlier.pid == pid:
        return True  # a restart in a fresh pid namespace (a container) takes the same pid
    try:
        os.kill(earlier.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # someone's process has that pid now
    return False


def worker_name_answers(name: str, *, timeout: float = 0.3) -> bool:
    """Tell whether a running worker answers to this name; True when that cannot be told.

    Asked by a worker as it starts, before it listens itself: an answer is another process
    started under the same name, whose rows are not this one's to end.
    """
    try:
        return bool(celery_app.control.ping(destination=[name], timeout=timeout))
    except Exception:
        return True


def worker_heartbeat(*, name: str) -> None:
    """Say a worker is alive (what it holds says so through its own rows)."""
    Worker.objects.filter(name=name).update(heartbeat_at=timezone.now(), stopped_at=None)


def worker_stop(*, name: str) -> None:
    """Record that a worker stopped on purpose (what it held has drained or been cancelled)."""
    Worker.objects.filter(name=name).update(stopped_at=timezone.now())


def workers_dead(*, now: datetime.datetime | None = None) -> list[str]:
    """Return the names of workers that stopped or stopped saying they were alive."""
    cutoff = heartbeat_cutoff(now)
    rows = Worker.objects.all().values_list("name", "heartbeat_at", "stopped_at")
    return [name for name, beat, stopped in rows if stopped is not None or beat < cutoff]


@dataclass(frozen=True)
class WorkersAlive:
    """Who may take this deployment's tasks, as the database knows it now."""

    here: int  # alive workers listening on this deployment's queue
    elsewhere: dict[str, str]  # {name: its queue} of alive workers on another queue


def workers_alive(*, queue: str, now: datetime.datetime | None = None) -> WorkersAlive:
    """Count the alive workers on `queue`, and name those beating here but listening elsewhere.

    A worker started without this deployment's `JAZZMINE_DEPLOYMENT` or `JAZZMINE_REDIS_PREFIX`
    shares the database (its heartbeat looks well) but waits on another queue: runs wait
    `queued` for it for ever, and nothing else would say why.
    """
    cutoff = heartbeat_cutoff(now)
    rows = Worker.objects.filter(stopped_at__isnull=True, heartbeat_at__gte=cutoff)
    here, elsewhere = 0, {}
    for name, theirs in rows.values_list("name", "queue"):
        if not theirs or theirs == queue:  # a row from before workers said their queue
            here += 1
        else:
            elsewhere[name] = theirs
    return WorkersAlive(here=here, elsewhere=elsewhere)


_broadcasting = threading.Lock()


def workers_broadcast(command: str, **arguments: Any) -> bool:
    """Send a command to every worker (fire and forget), one broadcast at a time.

    Concurrent broadcasts from many threads exhaust kombu's connection and producer pools
    and wait on each other for good, taking every later `send_task` down with them
    (measured: 30 threads hang; one at a time, each takes ~20 ms).

    False (logged) when the broker does not take it: what a command asks is stored first
    (a cancel on the run's row, which the worker's heartbeat reads), so a Redis restart
    delays it and never answers the person who asked with a server error.
    """
    with _broadcasting:
        try:
            celery_app.control.broadcast(command, arguments=arguments)
        except BROKER_ERRORS as exc:
            logger.error("workers were not told %s%r: %s", command, arguments, exc)
            return False
    return True


def sandbox_egress_allowed() -> tuple[Allowed, ...]:
    """Return what this deployment's network-enabled sandboxes may reach though not public.

    The keychain and the listed hosts. Raises ImproperlyConfigured when an entry names no
    IPv4 address and port: a typo must not quietly leave a tool without its keychain.
    """
    entries = [settings.JAZZMINE_KEYCHAIN_URL, *settings.JAZZMINE_SANDBOX_EGRESS_ALLOW]
    try:
        return allowed_from(entries)
    except ValueError as exc:
        raise ImproperlyConfigured(
            f"JAZZMINE_KEYCHAIN_URL or JAZZMINE_SANDBOX_EGRESS_ALLOW: {exc}"
        ) from exc


def sandbox_egress_configure() -> None:
    """Let this worker's network-enabled sandboxes reach the keychain and the listed hosts.

    Everything else not public stays out of their reach (`jazzmine.sandbox.egress`); the
    worker does not start when an entry cannot be read (`sandbox_egress_allowed`).
    """
    egress_allow(sandbox_egress_allowed())
