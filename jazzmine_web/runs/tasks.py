"""Celery tasks and worker commands for runs: thin, each calls the worker state or a service."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task, signals
from celery.worker.control import control_command
from django.conf import settings

from . import lifecycle
from .executor import executor
from .worker import worker_process, worker_process_start, worker_process_stop

logger = logging.getLogger(__name__)


@shared_task(name="runs.execute")
def run_execute(run_id: str) -> str | None:
    """Claim a queued run and execute it in this worker's sandboxes."""
    current = worker_process()
    if current is None:  # a task delivered before the worker finished starting
        raise RuntimeError("this process is not a started worker")
    return current.execute(run_id)


@shared_task(name="runs.reap")
def runs_reap() -> dict[str, int]:
    """End runs whose worker stopped answering; queue again those nobody claimed."""
    return lifecycle.runs_reap()


@control_command(args=[("run_id", str), ("reason", str)], signature="<run_id> <reason>")
def run_cancel(state: Any, run_id: str, reason: str) -> dict[str, Any]:
    """Kill the sandbox of a run if this worker executes it (every worker hears the broadcast)."""
    current = worker_process()
    stopped = current is not None and current.cancel(run_id, reason=reason)
    return {"ok": stopped}


@control_command(args=[("sandbox_id", int)], signature="<sandbox_id>")
def sandbox_prewarm(state: Any, sandbox_id: int) -> dict[str, Any]:
    """Start filling this worker's pool of a sandbox, so that its next run starts warm."""
    if worker_process() is not None:
        executor().prewarm(sandbox_id)
    return {"ok": True}


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
