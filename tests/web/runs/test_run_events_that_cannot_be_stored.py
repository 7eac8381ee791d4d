"""A run whose events the database refuses still ends, failed, saying why; clean-up goes on."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from jazzmine_web.runs.lifecycle import runs_reap
from jazzmine_web.runs.models import Run, RunEvent, RunStatus
from jazzmine_web.runs.services import run_create, run_record_event, run_record_events

pytestmark = pytest.mark.django_db


def queued(ecommerce, member) -> Run:
    return run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)


def test_an_event_numbered_beyond_the_database_ends_the_run_failed(ecommerce, member):
    run = queued(ecommerce, member)
    run_record_event(run_id=run.pk, event={"seq": 2**63, "type": "log",
                                           "data": {"message": "x"}, "ts": 1.0})  # fmt: skip
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "could not be stored" in run.message


def test_a_duplicate_event_ends_the_run_and_a_later_exit_cannot_make_it_succeed(ecommerce, member):
    run = queued(ecommerce, member)
    log = {"seq": 1, "type": "log", "data": {"message": "x"}, "ts": 1.0}
    run_record_event(run_id=run.pk, event=log)
    run_record_event(run_id=run.pk, event=log)
    run_record_event(run_id=run.pk, event={"seq": 2, "type": "exit",
                                           "data": {"outcome": "result"}, "ts": 1.0})  # fmt: skip
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "could not be stored" in run.message


def log(seq: int) -> dict:
    return {"seq": seq, "type": "log", "data": {"message": f"line {seq}"}, "ts": 1.0}


def test_a_batch_keeps_the_events_before_a_refused_one_and_ends_the_run_there(ecommerce, member):
    run = queued(ecommerce, member)
    assert run_record_events(run_id=run.pk, events=[log(1), log(2)])
    exit_ = {"seq": 5, "type": "exit", "data": {"outcome": "result"}, "ts": 1.0}
    # 2 again: the database refuses it, so 3 is kept, and nothing after 2 is.
    assert not run_record_events(run_id=run.pk, events=[log(3), log(2), log(4), exit_])
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "could not be stored" in run.message
    assert list(RunEvent.objects.filter(run=run).values_list("seq", flat=True)) == [1, 2, 3]
    assert run.event_count == 3


def test_a_batch_is_stored_with_its_result_and_ends_the_run_at_its_exit(ecommerce, member):
    run = queued(ecommerce, member)
    events = [log(1), {"seq": 2, "type": "result", "data": {"n": 1}, "ts": 1.0},
              {"seq": 3, "type": "exit", "data": {"outcome": "result"}, "ts": 1.0}]  # fmt: skip
    assert run_record_events(run_id=run.pk, events=events)
    run.refresh_from_db()
    assert (run.status, run.result, run.event_count) == (RunStatus.SUCCEEDED, {"n": 1}, 3)


def test_the_reaper_never_stops_at_one_bad_run(ecommerce, member, monkeypatch):
    runs = [queued(ecommerce, member) for _ in range(3)]
    long_ago = timezone.now() - datetime.timedelta(minutes=5)
    Run.objects.filter(pk__in=[r.pk for r in runs]).update(
        status=RunStatus.RUNNING, worker="gone@host", heartbeat_at=long_ago
    )
    from jazzmine_web.runs import services

    real = services.run_fail

    def fail_on_the_first(*, run_id, **kwargs):
        if run_id == runs[0].pk:
            raise RuntimeError("a broken row")
        real(run_id=run_id, **kwargs)

    monkeypatch.setattr(services, "run_fail", fail_on_the_first)
    assert runs_reap()["failed"] == 2
    statuses = [Run.objects.get(pk=r.pk).status for r in runs]
    assert statuses[1:] == [RunStatus.FAILED, RunStatus.FAILED]


@pytest.mark.parametrize("warm", [True, False, None])
def test_a_first_batch_that_ends_the_run_records_its_start_before_the_end(
    ecommerce, member, monkeypatch, warm
):
    # A result and the exit that follows it come as one batch: the run must not read as
    # finished (its watchers and agents are told so) before its start figures are there.
    from jazzmine_web.runs import services

    run = queued(ecommerce, member)
    seen: list[tuple[str, float | None, bool | None]] = []
    announce = services.run_status_announce

    def observed(*, run_id, status, **kwargs):
        row = Run.objects.get(pk=run_id)
        seen.append((status, row.first_event_ms, row.warm))
        announce(run_id=run_id, status=status, **kwargs)

    monkeypatch.setattr(services, "run_status_announce", observed)
    run_record_events(
        run_id=run.pk,
        events=[
            {"seq": 1, "type": "result", "data": 1, "ts": 1.0},
            {"seq": 2, "type": "exit", "data": {"outcome": "result"}, "ts": 1.0},
        ],
        first=(12.5, warm),
    )
    assert seen == [(RunStatus.SUCCEEDED, 12.5, warm)]
    run.refresh_from_db()
    assert (run.status, run.first_event_ms, run.warm) == (RunStatus.SUCCEEDED, 12.5, warm)


def test_only_the_first_batch_records_the_start(ecommerce, member):
    run = queued(ecommerce, member)
    run_record_events(run_id=run.pk, events=[{"seq": 1, "type": "log", "data": {"message": "a"},
                                              "ts": 1.0}], first=(3.0, True))  # fmt: skip
    run_record_events(run_id=run.pk, events=[{"seq": 2, "type": "log", "data": {"message": "b"},
                                              "ts": 1.0}])  # fmt: skip
    run.refresh_from_db()
    assert (run.first_event_ms, run.warm, run.event_count) == (3.0, True, 2)
