"""The worker's start and stop, as Celery signals them."""

from __future__ import annotations

from typing import Any

from celery import signals
from django.conf import settings
from django.db import close_old_connections

from ..studio.heap import startup_heap_freeze
from .pool import stop_now_register
from .process import worker_process, worker_process_start, worker_process_stop
from .services import sandbox_egress_configure


@signals.worker_init.connect
def _worker_started(sender: Any = None, **_kwargs: Any) -> None:
    name = getattr(sender, "hostname", None) or "worker"
    concurrency = getattr(sender, "concurrency", None) or settings.JAZZMINE_WORKER_CONCURRENCY
    sandbox_egress_configure()
    current = worker_process_start(name=name, concurrency=int(concurrency))
    stop_now_register(current.stop_now)  # what a cold shutdown stops first


@signals.worker_ready.connect
def _worker_ready(**_kwargs: Any) -> None:
    startup_heap_freeze()  # its run events wait on the loop as a web process's sockets do


@signals.worker_shutdown.connect
def _worker_stopped(**_kwargs: Any) -> None:
    # Celery's warm shutdown has waited for the tasks in flight (the drain); what is left are
    # the idle pools, which must not outlive the process.
    worker_process_stop()


@signals.worker_shutting_down.connect
def _worker_shutting_down(how: str = "Warm", **_kwargs: Any) -> None:
    # Sent from the signal handler as a warm shutdown begins: only start the grace's timer.
    # A cold one stops what is held at once, as it stops the pool (`workers.pool`).
    current = worker_process()
    if current is not None and how == "Warm":
        current.drain()


@signals.task_prerun.connect
@signals.task_postrun.connect
def _task_connections(**_kwargs: Any) -> None:
    # What Django does around a request: a connection that broke or outlived CONN_MAX_AGE
    # is closed (every task's, on PostgreSQL, whose pool keeps them), any other is kept.
    close_old_connections()
