"""Races of a run's life: two claims, cancel vs claim, two cancels, two ends, reaper vs beat."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from jazzmine.sandbox import Outcome
from jazzmine_web.runs import lifecycle, services
from jazzmine_web.runs.lifecycle import (
    run_cancel_request,
    run_claim,
    run_stop,
    runs_heartbeat,
    runs_reap,
)
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create
from jazzmine_web.runs.signals import run_finished

from .conftest import at_once

pytestmark = pytest.mark.django_db(transaction=True)
ROUNDS = 15


def queued(sandbox, member) -> Run:
    return run_create(sandbox=sandbox, user=member, body="emit_result(1)\n", start=False)


def test_two_workers_never_both_claim(ecommerce, member):
    for _ in range(ROUNDS):
        run = queued(ecommerce, member)
        results, errors = at_once(
            *[lambda i=i: run_claim(run_id=run.pk, worker=f"w{i}@h") for i in range(4)]
        )
        assert errors == [None] * 4, errors
        assert results.count(True) == 1, results


def test_two_workers_never_both_claim_prepare(ecommerce, member):
    from jazzmine_web.runs.preparation import run_claim_prepare

    for _ in range(5):
        run = queued(ecommerce, member)
        results, errors = at_once(
            *[
                lambda i=i: run_claim_prepare(
                    run_id=run.pk, worker=f"w{i}@h", known_images=frozenset()
                )
                for i in range(3)
            ]
        )
        assert errors == [None] * 3, errors
        assert sum(r is not None for r in results) == 1, results


def test_cancel_vs_claim(ecommerce, member):
    for _ in range(ROUNDS):
        run = queued(ecommerce, member)
        results, errors = at_once(
            lambda: run_claim(run_id=run.pk, worker="w1@h"),
            lambda: run_cancel_request(run_id=run.pk, reason="cancelled by ada"),
        )
        assert errors == [None, None], errors
        claimed, state = results
        run.refresh_from_db()
        if claimed:
            # The worker has it: the cancel must reach it (broadcast, or the next heartbeat).
            assert state == "running"
            assert run.cancel_reason and run.status in lifecycle.ACTIVE
            assert runs_heartbeat(worker="w1@h", ids=[str(run.pk)]) == [str(run.pk)]
        else:
            assert state == "queued"
            assert run.status == RunStatus.FAILED and run.outcome == Outcome.CANCELLED


def test_two_cancels_of_a_queued_run_end_it_cancelled(ecommerce, member):
    """Two people (or a double click, the agent and the page) cancel the same queued run."""
    bad = []
    for _ in range(ROUNDS):
        run = queued(ecommerce, member)
        _results, errors = at_once(
            lambda: run_stop(run_id=run.pk, reason="cancelled by ada"),
            lambda: run_stop(run_id=run.pk, reason="cancelled by ada (again)"),
        )
        assert errors == [None, None], [getattr(e, "_tb_text", e) for e in errors]
        run.refresh_from_db()
        if run.outcome != Outcome.CANCELLED:
            bad.append((run.status, run.outcome, run.message))
    assert bad == [], (len(bad), sorted({b[:2] for b in bad}))


def test_two_ends_of_a_run_the_first_wins_once(ecommerce, member, settings):
    """The worker's own exit and the reaper's end land at once: one end, one run_finished."""
    stale = timezone.now() - datetime.timedelta(
        seconds=settings.JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS + 5
    )
    heard: dict[str, int] = {}

    def count(*, run_id, **_k):
        heard[str(run_id)] = heard.get(str(run_id), 0) + 1

    run_finished.connect(count, weak=False)
    try:
        flips = []
        for _ in range(150):
            run = queued(ecommerce, member)
            assert run_claim(run_id=run.pk, worker="w1@h", running=True)
            exit_ok = {
                "seq": 100,
                "type": "exit",
                "ts": timezone.now().timestamp(),
                "data": {"outcome": "result", "message": "done", "backend": "docker"},
            }
            # The reaper ends the run of a worker it thinks is gone, while that (slow) worker
            # records its script's own exit.
            Run.objects.filter(pk=run.pk).update(heartbeat_at=stale)
            at_once(
                lambda: services.run_record_events(run_id=run.pk, events=[exit_ok]),
                lambda: runs_reap(),
            )
            if heard.get(str(run.pk), 0) != 1:
                run.refresh_from_db()
                flips.append((heard.get(str(run.pk)), run.status, run.outcome))
        assert flips == [], (len(flips), sorted(set(flips)))
    finally:
        run_finished.disconnect(count)


def test_reaper_vs_a_live_heartbeat(ecommerce, member, settings):
    """A heartbeat that lands while the reaper looks keeps the run, or the worker is told."""
    for _ in range(ROUNDS):
        run = queued(ecommerce, member)
        assert run_claim(run_id=run.pk, worker="w1@h", running=True)
        old = timezone.now() - datetime.timedelta(
            seconds=settings.JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS + 5
        )
        Run.objects.filter(pk=run.pk).update(heartbeat_at=old)
        results, errors = at_once(
            lambda: runs_reap(),
            lambda: runs_heartbeat(worker="w1@h", ids=[str(run.pk)]),
        )
        assert errors == [None, None], errors
        run.refresh_from_db()
        if run.status in RunStatus.finished():
            # Reaped: the worker must hear it (this beat or its next one).
            stop = results[1] or runs_heartbeat(worker="w1@h", ids=[str(run.pk)])
            assert stop == [str(run.pk)]
        else:
            assert results[1] == []
