"""Celery tasks and worker commands for runs: thin, each calls the executor or a service."""

from __future__ import annotations

import concurrent.futures
import logging
from typing import Any

from celery import shared_task
from celery.worker.control import control_command

from jazzmine.interrupts import Interrupt
from jazzmine.sandbox import Outcome

from ..workers.process import (
    execute_held,
    kind_register,
    silence_counts,
    starting_register,
    stopping_register,
    worker_process,
)
from . import lifecycle
from .executor import executor, executor_shutdown, executor_start
from .models import RunStatus

logger = logging.getLogger(__name__)

CANCELLED_BY_REAPER = "the run was ended while its worker was not answering"


def _run_ended(run_id: Any) -> None:
    # The reaper failed this run (the worker was too slow to say it was alive), or someone
    # cancelled it and the broadcast never reached this worker: stop it.
    reason = lifecycle.run_cancel_reason(run_id=run_id) or CANCELLED_BY_REAPER
    executor().cancel(run_id, reason=reason)


kind_register(
    "run",
    beat=lifecycle.runs_heartbeat,
    ended=_run_ended,
    lost=lifecycle.runs_of_earlier_life_end,
)
starting_register(executor_start)
stopping_register(executor_shutdown)


@shared_task(name="runs.execute")
def run_execute(run_id: str) -> str | None:
    """Claim a queued run and execute it in this worker's sandboxes (None: not ours)."""
    # The executor claims the run in the same step on its DB thread as it reads what the run
    # needs: one hand-over between threads and one write fewer before the sandbox starts.
    return execute_held("run", run_id, work=lambda worker, stop: _execute(run_id, worker, stop))


def _execute(run_id: str, worker: str, stop: Interrupt) -> str | None:
    try:
        future = executor().submit(run_id, worker=worker, stop=stop)
        # Told once the run is the executor's (its future exists): a stopping worker's grace
        # that ended during the claim stops it all the same. It ends as an infrastructure
        # failure (the script did nothing wrong; the agent may submit it again).
        stop.when_fired(
            lambda reason: executor().cancel(run_id, reason=reason, outcome=Outcome.WORKER_LOST)
        )
        return future.result()
    except concurrent.futures.CancelledError:
        # The worker is stopping after its drain: the reaper ends the run once its heartbeat
        # stops, with a message saying so.
        logger.warning("run %s was stopped with its worker", run_id)
        return RunStatus.FAILED
    except Exception:
        logger.exception("run %s ended in the worker", run_id)
        return RunStatus.FAILED


@shared_task(name="runs.reap")
def runs_reap() -> dict[str, int]:
    """End runs whose worker stopped answering; queue again those nobody claimed."""
    return lifecycle.runs_reap(judge_silence=silence_counts())


@control_command(args=[("run_id", str), ("reason", str)], signature="<run_id> <reason>")
def run_cancel(state: Any, run_id: str, reason: str) -> dict[str, Any]:
    """Kill the sandbox of a run if this worker executes it (every worker hears the broadcast)."""
    current = worker_process()
    here = current is not None and current.holds("run", run_id)
    return {"ok": here and executor().cancel(run_id, reason=reason)}


@control_command(args=[("sandbox_id", int)], signature="<sandbox_id>")
def sandbox_prewarm(state: Any, sandbox_id: int) -> dict[str, Any]:
    """Start filling this worker's pool of a sandbox, so that its next run starts warm."""
    if worker_process() is not None:
        executor().prewarm(sandbox_id)
    return {"ok": True}
