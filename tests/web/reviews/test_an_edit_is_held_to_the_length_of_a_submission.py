"""A reviewer's edit may be no longer than an agent's submission (100,000 characters).

The API and the edit's live reading refused more, but the approve-with-edit form took any
length: a 2 MB edit held the one checker process that reads every big script of the web
process for up to its 30 s, before anything said no. It is refused unread now, saying why.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from jazzmine_web.reviews.models import Submission, SubmissionStatus
from jazzmine_web.reviews.services import MAX_BODY_CHARS, SubmissionInvalid, submission_approve
from jazzmine_web.runs import services as run_services
from jazzmine_web.runs.models import Run

from .conftest import submit

pytestmark = pytest.mark.django_db

LONG = "x = 1\n" * (MAX_BODY_CHARS // 6) + "emit_result(x)\n"


checked = run_services.checked


def read_nowhere(chars: int, *args, **kwargs):
    assert chars <= MAX_BODY_CHARS, "an edit past the limit was read"
    return checked(chars, *args, **kwargs)


def test_a_longer_edit_is_refused_unread(api, gated, reviewer, monkeypatch) -> None:
    assert len(LONG) > MAX_BODY_CHARS
    monkeypatch.setattr(run_services, "checked", read_nowhere)
    state = submit(api, gated).json()
    submission = Submission.objects.get(pk=state["id"])
    with pytest.raises(SubmissionInvalid) as refused:
        submission_approve(submission=submission, user=reviewer, body=LONG)
    assert f"{MAX_BODY_CHARS:,}" in refused.value.message
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.PENDING
    assert Run.objects.count() == 0


def test_the_edit_form_says_so(api, gated, reviewer_client, monkeypatch) -> None:
    monkeypatch.setattr(run_services, "checked", read_nowhere)
    state = submit(api, gated).json()
    url = reverse("reviews:decide", args=[state["id"], "edit"])
    page = reviewer_client.post(url, {"body": LONG, "tools_seen_sent": "1"})
    assert page.status_code == 400, page.status_code  # as any refused field
    assert f"{MAX_BODY_CHARS:,}" in page.content.decode()
    assert Run.objects.count() == 0
