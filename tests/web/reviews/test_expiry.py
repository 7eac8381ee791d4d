from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import (
    ReviewConflict,
    submission_approve,
    submissions_expire_overdue,
)
from jazzmine_web.runs.models import Run
from tests.waiting import wait_until

from .conftest import set_policy, submit

pytestmark = pytest.mark.django_db


def overdue(submission_id) -> Submission:
    Submission.objects.filter(pk=submission_id).update(
        expires_at=timezone.now() - datetime.timedelta(seconds=1)
    )
    return Submission.objects.get(pk=submission_id)


def test_a_submission_expires_after_the_sandboxs_review_timeout(api, ecommerce) -> None:
    set_policy(ecommerce, timeout=90)
    state = submit(api, ecommerce).json()
    submission = Submission.objects.get(pk=state["id"])
    assert (submission.expires_at - submission.created_at).total_seconds() == pytest.approx(
        90, abs=1
    )


def test_reading_an_overdue_submission_expires_it_and_tells_the_agent(api, ecommerce) -> None:
    state = submit(api, ecommerce).json()
    overdue(state["id"])
    polled = api.get(f"/api/v1/submissions/{state['id']}/").json()
    assert polled["status"] == "expired" and polled["final"] is True
    assert "did not run" in polled["previous_error"]
    audit = Submission.objects.get(pk=state["id"]).audit.values_list("action", flat=True)
    assert "expired" in audit


def test_an_overdue_submission_leaves_the_queue_before_any_sweep(
    api, ecommerce, reviewer_client
) -> None:
    state = submit(api, ecommerce).json()
    Submission.objects.filter(pk=state["id"]).update(
        expires_at=timezone.now() - datetime.timedelta(seconds=1)
    )
    from jazzmine_web.reviews.selectors import pending_review_count, review_queue

    submission = Submission.objects.get(pk=state["id"])
    assert not review_queue(submission.submitted_by).exists()
    assert pending_review_count(submission.submitted_by) == 0


def test_an_expired_submission_cannot_be_approved(api, ecommerce, reviewer) -> None:
    state = submit(api, ecommerce).json()
    submission = overdue(state["id"])
    with pytest.raises(ReviewConflict):
        submission_approve(submission=submission, user=reviewer)
    assert Run.objects.count() == 0
    assert Submission.objects.get(pk=state["id"]).status == "expired"


def test_the_sweep_expires_every_overdue_submission_once(api, ecommerce) -> None:
    ids = [submit(api, ecommerce).json()["id"] for _ in range(3)]
    overdue(ids[0])
    overdue(ids[1])
    assert submissions_expire_overdue() == 2
    assert submissions_expire_overdue() == 0
    statuses = dict(Submission.objects.values_list("pk", "status"))
    assert sorted(statuses.values()) == ["expired", "expired", "pending"]


@pytest.mark.django_db(transaction=True)
def test_the_beat_sweep_expires_without_anyone_reading(api, ecommerce, celery_workers) -> None:
    celery_workers.running({"JAZZMINE_REVIEW_SWEEP_SECONDS": "0.2"}, beat=True)
    state = submit(api, ecommerce).json()
    overdue(state["id"])
    wait_until(
        lambda: Submission.objects.get(pk=state["id"]).status != "pending",
        timeout=10,
        message="the sweep never expired the submission",
    )
    assert Submission.objects.get(pk=state["id"]).status == "expired"


def test_the_agent_is_told_the_whole_time_it_was_given(api, ecommerce) -> None:
    # The time was counted from a moment just before the row was created: 10 s read "9".
    set_policy(ecommerce, timeout=10)
    state = submit(api, ecommerce).json()
    submission = Submission.objects.get(pk=state["id"])
    assert submissions_expire_overdue(now=submission.expires_at, submission_ids=[state["id"]])
    polled = api.get(f"/api/v1/submissions/{state['id']}/").json()
    assert polled["feedback"] == "No reviewer decided within 10 seconds; the script did not run."
