"""A second Ctrl-C (Celery's cold shutdown) ends the runs its worker holds at once, saying so.

Celery cancels the tasks in flight through its pool, and its thread pool cannot: the worker
logged `NotImplementedError(... does not implement kill_job)` with two tracebacks, exited, and
its run stayed "running" for 35 s until the reaper called its worker silent. Now the worker's
own stop switch ends each held run as the cold shutdown begins, its sandbox removed.
"""

from __future__ import annotations

import signal
import time

import pytest

from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create
from tests.waiting import wait_until
from tests.web.helpers import owned_containers, worker_name

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

LONG = "emit_log('started')\ntime.sleep(60)\nemit_result(1)\n"


def test_a_second_ctrl_c_ends_the_run_at_once_with_no_traceback(
    ecommerce, member, base_image, celery_workers
) -> None:
    # A grace far longer than the test: only the cold shutdown can end the run in time.
    worker = celery_workers.running({"JAZZMINE_WORKER_GRACE_SECONDS": "120"})
    try:
        run = run_create(sandbox=ecommerce, user=member, body=LONG)
        wait_until(
            lambda: Run.objects.get(pk=run.pk).events.filter(type="log").exists(),
            timeout=120,
            message="the run never started",
        )
        assert owned_containers(worker)
        worker.process.send_signal(signal.SIGINT)  # warm: the grace begins
        time.sleep(1.0)
        asked = time.monotonic()
        worker.process.send_signal(signal.SIGINT)  # cold
        worker.process.wait(timeout=30)
        took = time.monotonic() - asked
        run.refresh_from_db()
        assert run.status == RunStatus.FAILED and run.outcome == "worker_lost", run.message
        assert (
            f"its worker {worker_name(worker)} was stopped at once (a cold shutdown" in run.message
        )
        assert took < 15, f"the worker took {took:.1f} s to stop"
        log = worker.log()
        assert "NotImplementedError" not in log and "Traceback" not in log, log[-3000:]
        assert owned_containers(worker) == []
    finally:
        celery_workers.stop()
