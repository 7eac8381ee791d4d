"""An approved run cancelled by its agent while the real worker claims it: never both."""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine.sandbox import Outcome
from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_approve
from jazzmine_web.runs.models import Run, RunEvent, RunStatus
from tests.waiting import wait_until
from tests.web.reviews.conftest import submit

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]
BODY = 'emit_result({"ran": True})\n'


def test_cancel_racing_the_worker(api, issued, ecommerce, reviewer, worker):
    seen = []
    for _ in range(6):
        sub = Submission.objects.get(pk=submit(api, ecommerce, body=BODY).json()["id"])
        approved = submission_approve(submission=sub, user=reviewer)
        agent = Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}")
        response = agent.post(
            f"/api/v1/submissions/{sub.pk}/cancel/", {}, content_type="application/json"
        )
        assert response.status_code < 500
        run_id = approved.run.pk
        wait_until(lambda: Run.objects.get(pk=run_id).status in RunStatus.finished(), timeout=120)
        run = Run.objects.get(pk=run_id)
        ran = RunEvent.objects.filter(run_id=run_id, type="result").exists()
        seen.append((response.json()["cancelled"], run.status, run.outcome, ran, run.worker))
        if run.worker == "":  # ended where the cancel was asked: no worker ever had it
            assert not ran and run.outcome == Outcome.CANCELLED
        if run.outcome == Outcome.CANCELLED and run.started_at is None:
            assert not ran
    print(seen)
