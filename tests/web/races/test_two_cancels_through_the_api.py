"""An agent's cancel sent twice at once (a retry after a timeout, two processes of one agent)
ends the queued run `cancelled` once, with one audit entry: only the first request records
its reason and ends the run (two ends at once collided on the events' numbers, and the run
read as a protocol error).
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine.sandbox import Outcome
from jazzmine_web.reviews.models import AuditEntry, Submission
from jazzmine_web.reviews.services import submission_approve
from tests.web.reviews.conftest import submit

from .conftest import at_once

pytestmark = pytest.mark.django_db(transaction=True)
ROUNDS = 8


def test_two_api_cancels_at_once_end_the_run_cancelled_once(
    api, issued, ecommerce, reviewer, no_worker
):
    bad = []
    for _ in range(ROUNDS):
        sub = Submission.objects.get(pk=submit(api, ecommerce).json()["id"])
        approved = submission_approve(submission=sub, user=reviewer)
        assert approved.run.status == "queued"  # no worker in this test: it stays queued
        clients = [Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}") for _ in range(2)]
        results, errors = at_once(
            *[
                lambda c=c: c.post(
                    f"/api/v1/submissions/{sub.pk}/cancel/", content_type="application/json"
                )
                for c in clients
            ]
        )
        assert errors == [None, None], errors
        assert all(r.status_code < 500 for r in results), [r.status_code for r in results]
        run = approved.run
        run.refresh_from_db()
        audits = AuditEntry.objects.filter(submission=sub, action="run_cancelled").count()
        if run.outcome != Outcome.CANCELLED or audits != 1:
            bad.append((run.outcome, audits))
    assert bad == [], bad
