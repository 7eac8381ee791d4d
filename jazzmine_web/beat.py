"""Beat's scheduler: sends the periodic tasks to the workers, and runs the reapers itself.

A reaper ends the runs, builds and trials whose worker stopped answering. Sent to the workers
like the other periodic tasks, it needed a live worker to judge a dead one: with the only
worker of a deployment killed (an OOM kill, a crash), its runs stayed `running`, with their
pages promising an end that never came, until a worker started again. Beat runs them here
instead, on its own database connection: a reaper reads and writes a few rows and touches no
sandbox (each worker removes what dead workers left on its own Docker host).

Configured as `beat_scheduler` (settings: CELERY_BEAT_SCHEDULER), so `celery beat` needs no
option of its own.
"""

from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import Callable
from typing import Any

from celery.beat import PersistentScheduler, ScheduleEntry
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


class Scheduler(PersistentScheduler):
    """celery beat's persistent scheduler, with the reapers run in this process."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.outage = DatabaseOutage()
        # The reapers' database connection is this thread's own. Beat embedded in a worker
        # (`worker --beat`) is a fork whose inherited descriptors celery closed: a connection
        # object of the forking thread may name a descriptor reused since, so none is used.
        self.reaping = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="beat-reaper"
        )
        self.closed = False
        super().__init__(*args, **kwargs)

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
