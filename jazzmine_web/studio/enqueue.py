"""Hand work to the workers through the broker, never failing what is already stored.

Whatever a task is for (a run, a build, a trial, a delivery) is committed before it is sent,
and each has a sweep for what waits unsent: the reaper queues a never-started run again and
ends a build or trial nobody took, saying so; the review sweep retries an overdue delivery.
So when the broker does not answer (a Redis restart), the send is logged, not raised: raised
after the commit, it answered 500 for a submission that exists and will run, and an agent
told 500 submits again (the same script twice).
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from kombu.exceptions import OperationalError as BrokerUnavailable
from redis.exceptions import RedisError

from ..celery import app as celery_app

logger = logging.getLogger(__name__)

# What a send raises when the broker cannot be reached or refuses (after kombu's retries).
BROKER_ERRORS = (BrokerUnavailable, RedisError, OSError)


def task_send(name: str, *args: Any) -> bool:
    """Queue the task `name` (by name: tasks belong to the worker's side); False if unsent."""
    try:
        celery_app.send_task(name, args=list(args))
    except BROKER_ERRORS as exc:
        logger.error("task %s%r was not queued, the broker did not take it: %s", name, args, exc)
        return False
    return True


def task_send_after_commit(name: str, *args: Any) -> None:
    """Queue the task `name` once the transaction commits: the worker must see the rows."""
    transaction.on_commit(lambda: task_send(name, *args))
