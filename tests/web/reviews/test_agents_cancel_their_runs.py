"""An agent cancels the run of its own submission over the API; nobody else's."""

from __future__ import annotations

import time

import pytest
from django.test import Client

from jazzmine_web.reviews.models import AuditEntry, ReviewPolicy, Submission
from jazzmine_web.runs.lifecycle import run_cancel_request
from jazzmine_web.runs.models import Run
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import api_token_create
from tests.waiting import wait_until
from tests.web.helpers import SPIN, running_sandboxes, teammate, until_spinning

from .conftest import set_policy, submit

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]


def cancel(client: Client, submission_id) -> tuple[int, dict]:
    response = client.post(f"/api/v1/submissions/{submission_id}/cancel/")
    return response.status_code, response.json()


def started(api, ecommerce) -> Submission:
    set_policy(ecommerce, ReviewPolicy.NEVER)
    created = submit(api, ecommerce, SPIN).json()
    submission = Submission.objects.get(pk=created["id"])
    until_spinning(submission.run_id)
    return submission


def test_cancel_stops_a_spinning_run_within_a_second_and_says_so_twice(api, ecommerce, worker):
    submission = started(api, ecommerce)
    before = running_sandboxes()
    asked = time.monotonic()
    status, body = cancel(api, submission.pk)
    assert status == 202 and body["cancelled"] is True
    run = wait_until(
        lambda: Run.objects.filter(pk=submission.run_id, status="failed").first(), timeout=10
    )
    assert time.monotonic() - asked < 1.5
    assert run.outcome == "cancelled" and "cancelled by agent ci-bot (ada)" in run.message
    assert run.backend == "docker"  # where it ran, though the sandbox never said how it ended
    # The run's own sandbox is gone (the pool may have started fresh ones meanwhile).
    wait_until(lambda: before - running_sandboxes(), timeout=5, message="the sandbox is left")
    # Asked again: nothing is live any more, and that is not an error.
    status, body = cancel(api, submission.pk)
    assert status == 200 and body["cancelled"] is False
    assert body["run"]["status"] == "failed"
    assert AuditEntry.objects.filter(submission=submission, action="run_cancelled").count() == 1


# Talks all the time: the worker often has output in hand as a cancel lands. (The exact moment
# that once lost a cancel is hit every time in tests/sandbox/test_a_cancel_reaches_the_reader.py.)
FLOOD = (
    "n = 0\nwhile True:\n    n += 1\n    if n % 5000 == 0:\n        emit_log(n)\nemit_result(n)\n"
)


def test_a_run_that_never_stops_talking_is_cancelled_three_times_in_a_row(api, ecommerce, worker):
    set_policy(ecommerce, ReviewPolicy.NEVER)
    for _ in range(3):
        submission = Submission.objects.get(pk=submit(api, ecommerce, FLOOD).json()["id"])
        until_spinning(submission.run_id)
        asked = time.monotonic()
        assert cancel(api, submission.pk)[0] == 202
        run = wait_until(
            lambda s=submission: Run.objects.filter(pk=s.run_id, status="failed").first(),
            timeout=10,
        )
        assert time.monotonic() - asked < 1.5, "the cancel waited for a heartbeat"
        assert run.outcome == "cancelled" and "cancelled by agent" in run.message


def test_a_cancel_whose_broadcast_was_lost_still_stops_the_run(api, ecommerce, worker):
    submission = started(api, ecommerce)
    # What the cancel stores, without the broadcast (fire and forget: it can be lost).
    assert run_cancel_request(run_id=submission.run_id, reason="cancelled by ada") == "running"
    # The worker's heartbeat hears of it (every 5 s by default) and stops the run.
    run = wait_until(
        lambda: Run.objects.filter(pk=submission.run_id, status="failed").first(), timeout=15
    )
    assert run.outcome == "cancelled" and run.message == "cancelled by ada"
    time.sleep(6)  # more heartbeats: the ended run is not stopped again, nor its end rewritten
    run.refresh_from_db()
    assert run.outcome == "cancelled" and run.message == "cancelled by ada"


def test_only_the_submitting_agents_user_may_cancel(api, ecommerce, team, worker):
    submission = started(api, ecommerce)
    colleague = teammate(team, Role.MEMBER)
    other = Client(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=colleague, name='x').raw}")
    status, body = cancel(other, submission.pk)
    assert status == 403 and body["error"]["code"] == "not_your_submission"
    assert Run.objects.get(pk=submission.run_id).status == "running"
    cancel(api, submission.pk)


def test_a_submission_waiting_for_review_has_no_run_to_cancel(api, ecommerce):
    set_policy(ecommerce, ReviewPolicy.ALWAYS)
    created = submit(api, ecommerce).json()
    status, body = cancel(api, created["id"])
    assert status == 409 and body["error"]["code"] == "no_run"
    assert "pending" in body["error"]["message"]
    assert Submission.objects.get(pk=created["id"]).status == "pending"


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/submissions/00000000-0000-0000-0000-000000000000/cancel/",
        "/api/v1/submissions/not-a-uuid/cancel/",
    ],
)
def test_an_unknown_submission_is_not_found(api, path):
    assert api.post(path).status_code == 404


def test_cancel_is_a_post_with_a_token(api, ecommerce):
    set_policy(ecommerce, ReviewPolicy.ALWAYS)
    created = submit(api, ecommerce).json()
    assert api.get(f"/api/v1/submissions/{created['id']}/cancel/").status_code == 405
    assert Client().post(f"/api/v1/submissions/{created['id']}/cancel/").status_code == 401


def test_an_outsiders_agent_cannot_find_the_submission(api, ecommerce, outsider):
    set_policy(ecommerce, ReviewPolicy.ALWAYS)
    created = submit(api, ecommerce).json()
    stranger = Client(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=outsider, name='s').raw}")
    status, body = cancel(stranger, created["id"])
    assert status == 404 and body["error"]["code"] == "submission_not_found"
