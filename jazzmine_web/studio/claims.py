"""Rows that workers execute (runs, builds, trials): one worker claims each, and keeps it alive.

A claim is a conditional update, so the database decides between two workers holding a
message for the same row. A heartbeat older than the timeout means the worker is gone.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone


def row_claim(
    update: Callable[..., int],
    *,
    worker: str,
    now: datetime.datetime | None = None,
    **changes: Any,
) -> bool:
    """Make the rows a conditional update still matches the worker's; False when none was left.

    `update` sets columns on the rows its filter matches and returns how many (a queryset's
    `update`, or a `studio.hotrows` shape's bound to its values).
    """
    return bool(update(worker=worker, heartbeat_at=now or timezone.now(), **changes))


def rows_heartbeat(rows: QuerySet[Any], *, worker: str) -> int:
    """Say that the worker holding these rows is alive; return how many it still holds."""
    return rows.filter(worker=worker).update(heartbeat_at=timezone.now())


def heartbeat_cutoff(now: datetime.datetime | None = None) -> datetime.datetime:
    """Return the time before which a heartbeat means its worker is gone."""
    timeout = datetime.timedelta(seconds=settings.JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS)
    return (now or timezone.now()) - timeout


def never_started_cutoff(now: datetime.datetime | None = None) -> datetime.datetime:
    """Return the time before which a queued row nobody claimed counts as lost."""
    wait = datetime.timedelta(seconds=settings.JAZZMINE_REQUEUE_AFTER_SECONDS)
    return (now or timezone.now()) - wait
