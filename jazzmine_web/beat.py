"""Beat's scheduler: sends the periodic tasks to the workers, and runs the reapers itself.

A reaper ends the runs, builds and trials whose worker stopped answering. Sent to the workers
like the other periodic tasks, it needed a live worker to judge a dead one: with the only
worker of a deployment killed (an OOM kill, a crash), its runs stayed `running`, with their
pages promising an end that never came, until a worker started again. Beat runs them here
instead, on its own database connection: a reaper reads and writes a few rows and touches no
sandbox (each worker removes what dead workers left on its own Docker host).

Configured as `beat_scheduler` (settings: CELERY_BEAT_SCHEDULER), so `celery beat` needs no
option of its own.

Exactly one beat of a deployment runs its schedule: the one holding its lease in Redis. A
second one started by mistake (or on purpose, on another host) stands by, says so, and takes
over within `LEASE_SECONDS` once the first stops; before, it started without a word and every
periodic task went out twice.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from typing import Any

import redis
from celery.beat import PersistentScheduler, ScheduleEntry
from django.conf import settings
from django.db import close_old_connections, connections

from .catalog.services import image_builds_reap
from .runs.lifecycle import runs_reap
from .scripttools.services import trials_reap
from .studio.db import DATABASE_UNREACHABLE
from .workers.process import DatabaseOutage

logger = logging.getLogger(__name__)

# The periodic tasks beat runs itself, by task name: each takes `judge_silence`.
REAPERS: dict[str, Callable[..., Any]] = {
    "runs.reap": runs_reap,
    "catalog.builds_reap": image_builds_reap,
    "scripttools.trials_reap": trials_reap,
}


# How long a beat's hold on the schedule lasts unless renewed, and how often it is renewed
# (and a standby beat looks whether it is free).
LEASE_SECONDS = 30.0
LEASE_RENEW_SECONDS = 5.0
# Redis scripts: renew or release the lease only if this beat still holds it.
_RENEW = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
)
_RELEASE = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
    "else return 0 end"
)


class Lease:
    """Whether this beat runs its deployment's schedule: it does while it holds a Redis key."""

    def __init__(self, *, url: str, key: str, seconds: float = LEASE_SECONDS) -> None:
        self.key = key
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.milliseconds = int(seconds * 1000)
        self.client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        self.leading: bool | None = None  # not asked yet
        self.asked = 0.0

    def lead(self) -> bool:
        """Take or renew the lease (at most every `LEASE_RENEW_SECONDS`); tell whether held."""
        if self.leading is not None and time.monotonic() - self.asked < LEASE_RENEW_SECONDS:
            return self.leading
        self.asked = time.monotonic()
        was = self.leading
        try:
            held = bool(
                self.client.set(self.key, self.holder, nx=True, px=self.milliseconds)
                or self.client.eval(_RENEW, 1, self.key, self.holder, self.milliseconds)
            )
            other = None if held else self.client.get(self.key)
        except redis.RedisError as exc:
            # Nobody can tell who leads: run the schedule (fail open). Its sends fail without
            # Redis anyway, and the reapers it runs here change only what is still to change.
            logger.warning("beat: Redis does not answer (%s); running the schedule meanwhile", exc)
            held, other = True, None
        self.leading = held
        if held and was is False:
            logger.warning("beat: the other beat of this deployment stopped; this one took over")
        elif not held and was is not False:
            who = other.decode(errors="replace") if isinstance(other, bytes) else other
            logger.warning(
                "beat: another beat of this deployment runs its schedule (%s); this one stands "
                "by and takes over within %g s of its stop. Run exactly one beat.",
                who, self.milliseconds / 1000,
            )  # fmt: skip
        return held

    def release(self) -> None:
        """Give the lease up, so that a standby beat takes over at once."""
        try:
            self.client.eval(_RELEASE, 1, self.key, self.holder)
        except redis.RedisError:
            pass  # it lapses by itself
        finally:
            self.client.close()


class Scheduler(PersistentScheduler):
    """celery beat's persistent scheduler, with the reapers run in this process, run by one
    beat of the deployment at a time (`Lease`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.lease = Lease(
            url=settings.JAZZMINE_REDIS_URL, key=f"{settings.JAZZMINE_REDIS_PREFIX}:beat:lease"
        )
        self.outage = DatabaseOutage()
        # The reapers' database connection is this thread's own. Beat embedded in a worker
        # (`worker --beat`) is a fork whose inherited descriptors celery closed: a connection
        # object of the forking thread may name a descriptor reused since, so none is used.
        self.reaping = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="beat-reaper"
        )
        self.closed = False
        super().__init__(*args, **kwargs)

    def tick(self, *args: Any, **kwargs: Any) -> float:
        if not self.lease.lead():
            return LEASE_RENEW_SECONDS  # standing by: look again then
        return min(super().tick(*args, **kwargs), LEASE_RENEW_SECONDS)

    def apply_entry(self, entry: ScheduleEntry, producer: Any = None) -> None:
        reaper = REAPERS.get(entry.task)
        if reaper is None:
            super().apply_entry(entry, producer=producer)
            return
        self.reaping.submit(reap, reaper, self.outage, entry.task).result()

    def close(self) -> None:
        super().close()
        if self.closed:
            return  # beat closes its scheduler once as it stops, and again at its exit
        self.closed = True
        self.lease.release()
        self.reaping.submit(connections.close_all).result()
        self.reaping.shutdown(wait=True)


def reap(reaper: Callable[..., Any], outage: DatabaseOutage, name: str) -> Any:
    """Run one reaper; a database that does not answer waits (None: it did not run to its end).

    The next period tries again.
    """
    close_old_connections()  # a connection an outage broke is not used again
    try:
        return reaper(judge_silence=outage.silence_counts())
    except DATABASE_UNREACHABLE as exc:
        outage.seen()
        logger.warning("beat: %s waits, the database does not answer: %s", name, exc)
    except Exception:
        logger.exception("beat: %s failed", name)
    finally:
        close_old_connections()
    return None
