"""A worker told to stop (SIGTERM, as Ctrl-C in scripts/run.sh sends it) finishes what it can
within its grace, then stops the rest itself, and leaves no sandbox behind.

Before the grace, a run that went on for minutes kept the stopping worker alive until its
supervisor killed it (honcho: after 5 s), with its sandboxes still there and the run
`running` until the reaper.
"""

from __future__ import annotations

import time

import pytest

from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create
from tests.waiting import wait_until
from tests.web.helpers import GRACE, SPIN, owned_containers, until_spinning, worker_name

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

# About a second of work, then its result: it ends within the grace.
SHORT = "n = 0\nfor i in range(3_000_000):\n    n += i\nemit_result(n)\n"


def test_a_run_longer_than_the_grace_is_stopped_and_nothing_is_left(ecommerce, member, graced):
    spinning = run_create(sandbox=ecommerce, user=member, body=SPIN)
    until_spinning(spinning.pk)
    assert owned_containers(graced)  # what there is to leave behind
    asked = time.monotonic()
    assert graced.stop(timeout=30) == 0  # it exits by itself: nobody had to kill it
    took = time.monotonic() - asked
    assert GRACE <= took < GRACE + 3, f"the worker took {took:.1f} s to stop"
    spinning.refresh_from_db()
    assert (spinning.status, spinning.outcome) == (RunStatus.FAILED, "worker_lost")
    assert f"its worker {worker_name(graced)} stopped" in spinning.message
    assert f"{GRACE:g} s" in spinning.message
    assert spinning.backend == "docker"
    assert owned_containers(graced) == []  # the run's sandbox and the warm pool's


def test_a_run_that_ends_within_the_grace_ends_as_it_would_have(ecommerce, member, graced):
    spinning = run_create(sandbox=ecommerce, user=member, body=SPIN)
    until_spinning(spinning.pk)
    short = run_create(sandbox=ecommerce, user=member, body=SHORT)
    wait_until(
        lambda: Run.objects.filter(pk=short.pk, status=RunStatus.RUNNING).exists(), timeout=60
    )
    assert graced.stop(timeout=30) == 0
    short.refresh_from_db()
    spinning.refresh_from_db()
    assert (short.status, short.outcome) == (RunStatus.SUCCEEDED, "result")
    assert spinning.outcome == "worker_lost"
    assert owned_containers(graced) == []
