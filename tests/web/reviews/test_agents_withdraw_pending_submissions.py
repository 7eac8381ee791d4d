"""An agent takes back its own submission while it waits for review; it never runs."""

from __future__ import annotations

import datetime

import pytest
from django.test import Client
from django.utils import timezone

from jazzmine_web.reviews.models import AuditEntry, ReviewPolicy, Submission
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import api_token_create
from tests.web.helpers import teammate

from .conftest import set_policy, submit

pytestmark = pytest.mark.django_db


def withdraw(client: Client, submission_id, body: str | None = None) -> tuple[int, dict]:
    response = client.post(
        f"/api/v1/submissions/{submission_id}/withdraw/",
        data=body if body is not None else "",
        content_type="application/json",
    )
    return response.status_code, response.json()


@pytest.fixture
def pending(api, ecommerce) -> Submission:
    set_policy(ecommerce, ReviewPolicy.ALWAYS)
    return Submission.objects.get(pk=submit(api, ecommerce).json()["id"])


def test_a_withdrawn_submission_leaves_the_queue_and_never_runs(
    api, pending, reviewer_client
) -> None:
    status, body = withdraw(api, pending.pk, '{"reason": "wrong customer id"}')
    assert status == 200
    assert body["status"] == "withdrawn" and body["final"] is True and body["decided"] is True
    assert body["feedback"] == "Withdrawn by agent ci-bot (ada): wrong customer id"
    assert body["run"] is None and body["previous_error"] is None
    # The reviewer's queue no longer offers it, and deciding on it now is a conflict.
    queue = reviewer_client.get("/reviews/")
    assert str(pending.pk) not in queue.content.decode()
    approved = reviewer_client.post(f"/reviews/{pending.pk}/approve/")
    assert approved.status_code == 409
    pending.refresh_from_db()
    assert pending.status == "withdrawn" and pending.run_id is None
    entry = AuditEntry.objects.get(submission=pending, action="withdrawn")
    assert entry.note == "wrong customer id" and entry.actor_label == "agent ci-bot (ada)"
    # Asked again, and read again: the same answer, and nothing more is written.
    status, body = withdraw(api, pending.pk)
    assert status == 409 and body["error"]["code"] == "not_pending"
    assert "withdrawn by its agent" in body["error"]["message"]
    again = api.get(f"/api/v1/submissions/{pending.pk}/").json()
    assert again["status"] == "withdrawn" and again["final"] is True
    assert AuditEntry.objects.filter(submission=pending, action="withdrawn").count() == 1


def test_a_decided_submission_cannot_be_withdrawn(api, pending, reviewer_client) -> None:
    rejected = reviewer_client.post(f"/reviews/{pending.pk}/reject/", {"feedback": "no"})
    assert rejected.status_code in (200, 302)
    status, body = withdraw(api, pending.pk)
    assert status == 409 and body["error"]["code"] == "not_pending"
    assert "rejected" in body["error"]["message"]
    pending.refresh_from_db()
    assert pending.status == "rejected" and pending.feedback == "no"


def test_an_overdue_submission_expires_instead_of_being_withdrawn(api, pending) -> None:
    Submission.objects.filter(pk=pending.pk).update(
        expires_at=timezone.now() - datetime.timedelta(seconds=1)
    )
    status, body = withdraw(api, pending.pk)
    assert status == 409 and "expired" in body["error"]["message"]
    pending.refresh_from_db()
    assert pending.status == "expired"


def test_an_auto_approved_submission_is_not_pending(api, ecommerce, no_worker) -> None:
    set_policy(ecommerce, ReviewPolicy.NEVER)
    created = submit(api, ecommerce).json()
    status, body = withdraw(api, created["id"])
    assert status == 409 and body["error"]["code"] == "not_pending"
    assert Submission.objects.get(pk=created["id"]).status == "auto_approved"


def test_only_the_submitting_agents_user_may_withdraw(pending, team) -> None:
    colleague = teammate(team, Role.REVIEWER)
    other = Client(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=colleague, name='x').raw}")
    status, body = withdraw(other, pending.pk)
    assert status == 403 and body["error"]["code"] == "not_your_submission"
    pending.refresh_from_db()
    assert pending.status == "pending"


def test_an_outsiders_agent_cannot_find_the_submission(pending, outsider) -> None:
    stranger = Client(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=outsider, name='s').raw}")
    status, body = withdraw(stranger, pending.pk)
    assert status == 404 and body["error"]["code"] == "submission_not_found"
    pending.refresh_from_db()
    assert pending.status == "pending"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("not json", "invalid_json"),
        ("[1, 2]", "invalid_json"),
        ('{"reason": 7}', "invalid_field"),
        ('{"reason": "' + "x" * 2001 + '"}', "invalid_field"),
    ],
)
def test_a_bad_reason_is_refused_and_the_submission_stays(api, pending, body, code) -> None:
    status, answer = withdraw(api, pending.pk, body)
    assert status == 400 and answer["error"]["code"] == code
    pending.refresh_from_db()
    assert pending.status == "pending"


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/submissions/00000000-0000-0000-0000-000000000000/withdraw/",
        "/api/v1/submissions/not-a-uuid/withdraw/",
    ],
)
def test_an_unknown_submission_is_not_found(api, path) -> None:
    assert api.post(path).status_code == 404


def test_withdraw_is_a_post_with_a_token(api, pending) -> None:
    assert api.get(f"/api/v1/submissions/{pending.pk}/withdraw/").status_code == 405
    assert Client().post(f"/api/v1/submissions/{pending.pk}/withdraw/").status_code == 401
    pending.refresh_from_db()
    assert pending.status == "pending"
