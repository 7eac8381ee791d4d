"""The worker's start and stop, as Celery signals them."""

from __future__ import annotations

from typing import Any

from celery import signals
from django.conf import settings

from .process import worker_process_start, worker_process_stop


@signals.worker_init.connect
def _worker_started(sender: Any = None, **_kwargs: Any) -> None:
    name = getattr(sender, "hostname", None) or "worker"
    concurrency = getattr(sender, "concurrency", None) or settings.JAZZMINE_WORKER_CONCURRENCY
    worker_process_start(name=name, concurrency=int(concurrency))


@signals.worker_shutdown.connect
def _worker_stopped(**_kwargs: Any) -> None:
    # Celery's warm shutdown has waited for the tasks in flight (the drain); what is left are
    # the idle pools, which must not outlive the process.
    worker_process_stop()
