"""Beat runs the reapers itself: a deployment whose only worker died still ends its runs.

Sent to the workers as the other periodic tasks are, a reaper needed a live worker to judge a
dead one: with the only worker killed, its runs stayed `running`, their pages promising an end
at 30 s that never came. Here no worker runs at all; beat's scheduler is asked to apply its
entries as its loop does.
"""

from __future__ import annotations

import datetime

import pytest
from celery.beat import ScheduleEntry
from django.db import OperationalError
from django.utils import timezone

from jazzmine_web import beat
from jazzmine_web.catalog.models import ImageBuild
from jazzmine_web.celery import app
from jazzmine_web.runs.lifecycle import run_claim
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def scheduler(tmp_path):
    scheduler = beat.Scheduler(app=app, lazy=True, schedule_filename=str(tmp_path / "schedule"))
    yield scheduler
    scheduler.close()


def entry(task: str) -> ScheduleEntry:
    return ScheduleEntry(name=task, task=task, schedule=10.0, app=app)


def silent_run(ecommerce, member, seconds: float = 31) -> Run:
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    assert run_claim(run_id=run.pk, worker="only@host", running=True)
    beat_at = timezone.now() - datetime.timedelta(seconds=seconds)
    Run.objects.filter(pk=run.pk).update(heartbeat_at=beat_at)
    return run


def test_beat_ends_a_run_whose_only_worker_went_silent(scheduler, ecommerce, member):
    run = silent_run(ecommerce, member)
    scheduler.apply_entry(entry("runs.reap"))
    run.refresh_from_db()
    assert (run.status, run.outcome) == (RunStatus.FAILED, "worker_lost")
    assert "only@host" in run.message and "stopped answering" in run.message
    # Beat removes no container: it says who does (it promised "the reaper" did).
    assert "removed by another worker on its Docker host, which looks every 30 s" in run.message
    scheduler.apply_entry(entry("runs.reap"))  # and again: ended once
    assert run.events.count() == 2


def test_beat_ends_a_build_whose_worker_went_silent(scheduler, ecommerce):
    build = ImageBuild.objects.create(
        sandbox=ecommerce, checksum="0" * 16, status="building", worker="only@host",
        heartbeat_at=timezone.now() - datetime.timedelta(seconds=120),
    )  # fmt: skip
    scheduler.apply_entry(entry("catalog.builds_reap"))
    build.refresh_from_db()
    assert build.status == "failed" and "only@host" in build.error


def test_every_reaper_of_the_schedule_runs_in_beat(settings):
    reapers = {e["task"] for e in settings.CELERY_BEAT_SCHEDULE.values() if "reap" in e["task"]}
    assert reapers == set(beat.REAPERS)


def test_after_beat_found_the_database_down_no_silence_counts_for_a_timeout(
    scheduler, ecommerce, member, monkeypatch, settings
):
    # The same outage stopped every worker's heartbeat: ending their runs as soon as the
    # database answers again would end work that was never lost.
    settings.JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS = 3600
    run = silent_run(ecommerce, member)
    real = beat.REAPERS["runs.reap"]

    def down(**kwargs):
        raise OperationalError("connection failed: Connection refused")

    monkeypatch.setitem(beat.REAPERS, "runs.reap", down)
    scheduler.apply_entry(entry("runs.reap"))  # logged, not raised: beat goes on
    monkeypatch.setitem(beat.REAPERS, "runs.reap", real)
    scheduler.apply_entry(entry("runs.reap"))
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING


def test_beat_closes_its_scheduler_twice_without_an_error(tmp_path):
    # Beat closes it as it stops and again at its exit: the second close raised, a traceback
    # at every Ctrl-C of scripts/run.sh.
    scheduler = beat.Scheduler(app=app, lazy=True, schedule_filename=str(tmp_path / "schedule"))
    scheduler.setup_schedule()
    scheduler.close()
    scheduler.close()
