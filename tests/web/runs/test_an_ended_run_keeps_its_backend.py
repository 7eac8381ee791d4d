"""A run says where it ran, however it ended: by its sandbox's own exit or stopped from outside."""

from __future__ import annotations

import pytest

from jazzmine.sandbox import Outcome
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create, run_fail, run_record_event, run_set_status

pytestmark = pytest.mark.django_db


@pytest.fixture
def started(ecommerce, member) -> Run:
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    run_set_status(run_id=run.pk, status=RunStatus.RUNNING, backend="docker", image="img:1")
    return run


@pytest.mark.parametrize(
    "outcome", [Outcome.CANCELLED, Outcome.WORKER_LOST, Outcome.CONTAINER_CRASH]
)
def test_a_run_stopped_from_outside_keeps_the_backend_it_started_on(started, outcome):
    run_fail(run_id=started.pk, outcome=outcome, message="stopped")
    started.refresh_from_db()
    assert (started.status, started.outcome) == (RunStatus.FAILED, outcome.value)
    assert started.backend == "docker"


def test_the_sandboxs_own_exit_says_where_it_ran(started):
    exit_ = {"outcome": "result", "message": "done", "backend": "bwrap"}
    run_record_event(run_id=started.pk, event={"seq": 1, "type": "exit", "data": exit_, "ts": 1.0})
    started.refresh_from_db()
    assert (started.status, started.backend) == (RunStatus.SUCCEEDED, "bwrap")


def test_a_run_cancelled_before_it_started_ran_nowhere(ecommerce, member):
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    run_fail(run_id=run.pk, outcome=Outcome.CANCELLED, message="cancelled by ada")
    run.refresh_from_db()
    assert (run.status, run.backend) == (RunStatus.FAILED, "")
