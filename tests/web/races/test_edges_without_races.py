"""Edges without a race: decisions on what is no longer pending, cancels of what has ended."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from jazzmine.sandbox import Outcome
from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_approve
from jazzmine_web.runs.models import Run
from jazzmine_web.runs.services import run_fail
from tests.web.reviews.conftest import submit

pytestmark = pytest.mark.django_db(transaction=True)


def test_approving_an_expired_submission_is_409(api, ecommerce, reviewer_client):
    sub = Submission.objects.get(pk=submit(api, ecommerce).json()["id"])
    Submission.objects.filter(pk=sub.pk).update(
        expires_at=timezone.now() - datetime.timedelta(seconds=1)
    )
    before = Run.objects.count()
    response = reviewer_client.post(f"/reviews/{sub.pk}/approve/")
    assert response.status_code == 409
    sub.refresh_from_db()
    assert sub.status == "expired" and sub.run_id is None and Run.objects.count() == before
    response = reviewer_client.post(
        f"/reviews/{sub.pk}/edit/", {"body": "emit_result(2)\n", "tools_seen": []}
    )
    assert response.status_code == 409 and Run.objects.count() == before


def test_approving_a_withdrawn_or_rejected_submission_is_409(api, ecommerce, reviewer_client):
    for how in ("withdraw", "reject"):
        sub = Submission.objects.get(pk=submit(api, ecommerce).json()["id"])
        if how == "withdraw":
            assert (
                api.post(
                    f"/api/v1/submissions/{sub.pk}/withdraw/", content_type="application/json"
                ).status_code
                == 200
            )
        else:
            r = reviewer_client.post(f"/reviews/{sub.pk}/reject/", {"feedback": "no"})
            assert r.status_code in (200, 302)
        before = Run.objects.count()
        assert reviewer_client.post(f"/reviews/{sub.pk}/approve/").status_code == 409
        assert Run.objects.count() == before
        # and the agent cannot withdraw a decided one, or cancel a run that does not exist
        assert (
            api.post(
                f"/api/v1/submissions/{sub.pk}/withdraw/", content_type="application/json"
            ).status_code
            == 409
        )
        assert (
            api.post(
                f"/api/v1/submissions/{sub.pk}/cancel/", content_type="application/json"
            ).status_code
            == 409
        )


def test_cancelling_a_finished_run(api, ecommerce, reviewer, no_worker):
    sub = Submission.objects.get(pk=submit(api, ecommerce).json()["id"])
    approved = submission_approve(submission=sub, user=reviewer)
    run_fail(run_id=approved.run.pk, outcome=Outcome.CONTAINER_CRASH, message="gone")
    response = api.post(f"/api/v1/submissions/{sub.pk}/cancel/", content_type="application/json")
    assert response.status_code == 200 and response.json()["cancelled"] is False
    run = Run.objects.get(pk=approved.run.pk)
    assert run.outcome == Outcome.CONTAINER_CRASH and run.cancel_reason == ""
    # A second approval of the approved submission: 409, no second run.
    from django.test import Client

    from jazzmine_web.teams.models import Role
    from tests.web.helpers import teammate

    other = Client()
    other.force_login(teammate(ecommerce.team, Role.REVIEWER, username="second"))
    before = Run.objects.count()
    assert other.post(f"/reviews/{sub.pk}/approve/").status_code == 409
    assert Run.objects.count() == before
