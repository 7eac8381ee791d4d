"""One beat of a deployment runs its schedule; a second stands by, says so, and takes over.

A second `celery beat` of one deployment started without a word, and every periodic task went
out twice. Here two beats' schedulers tick as beat's loop does, on the real Redis: the one
holding the lease reaps; the other reaps nothing until the first stops.
"""

from __future__ import annotations

import datetime
import logging

import pytest
from django.utils import timezone

from jazzmine_web import beat
from jazzmine_web.celery import app
from jazzmine_web.runs.lifecycle import run_claim
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def beats(tmp_path):
    made = [
        beat.Scheduler(app=app, schedule_filename=str(tmp_path / f"schedule-{n}")) for n in (1, 2)
    ]
    yield made
    for scheduler in made:
        scheduler.close()


def silent_run(ecommerce, member) -> Run:
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    assert run_claim(run_id=run.pk, worker="gone@host", running=True)
    Run.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - datetime.timedelta(hours=1))
    return run


def reaps(scheduler: beat.Scheduler, run: Run) -> bool:
    """Tick as beat's loop does, with every entry due; tell whether the run was ended."""
    scheduler.lease.asked = 0.0  # as if the renewal period had passed
    for entry in scheduler.schedule.values():
        entry.last_run_at = timezone.now() - datetime.timedelta(hours=1)
    scheduler._heap = None  # read the entries again
    for _ in range(len(scheduler.schedule) + 1):
        scheduler.tick()
    run.refresh_from_db()
    return run.status == RunStatus.FAILED


def test_the_second_beat_stands_by_then_takes_over(beats, ecommerce, member, caplog) -> None:
    first, second = beats
    caplog.set_level(logging.WARNING, logger="jazzmine_web.beat")
    assert first.lease.lead()
    run = silent_run(ecommerce, member)
    for _ in range(2):  # and ticking again
        assert second.tick() == beat.LEASE_RENEW_SECONDS
        assert not reaps(second, run)
    said = [r.getMessage() for r in caplog.records]
    assert sum("another beat of this deployment runs its schedule" in m for m in said) == 1
    assert first.lease.holder in " ".join(said)  # which one, by host and pid
    assert reaps(first, run)  # the one holding the lease runs the schedule

    first.close()  # it stops: the lease goes with it
    other = silent_run(ecommerce, member)
    assert reaps(second, other)
    assert any("this one took over" in r.getMessage() for r in caplog.records)
