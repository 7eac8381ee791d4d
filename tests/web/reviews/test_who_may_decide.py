from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import ReviewForbidden, submission_approve, submission_reject
from jazzmine_web.teams.services import api_token_create, membership_set, team_create

from .conftest import submit

pytestmark = pytest.mark.django_db


@pytest.fixture
def pending(api, ecommerce):
    return Submission.objects.get(pk=submit(api, ecommerce).json()["id"])


def test_a_member_who_is_not_a_reviewer_cannot_approve(logged_in, pending) -> None:
    response = logged_in.post(f"/reviews/{pending.pk}/approve/")
    assert response.status_code == 403
    pending.refresh_from_db()
    assert pending.status == "pending"


def test_a_member_who_is_not_a_reviewer_cannot_reject(pending, django_user_model, team) -> None:
    bob = django_user_model.objects.create_user(username="bob", password="x" * 12)
    membership_set(team=team, user=bob, role="member")
    with pytest.raises(ReviewForbidden) as refused:
        submission_reject(submission=pending, user=bob, feedback="no")
    assert refused.value.code == "not_reviewer"


def test_a_reviewer_cannot_approve_what_their_own_token_submitted(
    reviewer, reviewer_client, ecommerce
) -> None:
    own = Client(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=reviewer, name='mine').raw}")
    submission = Submission.objects.get(pk=submit(own, ecommerce).json()["id"])
    page = reviewer_client.get(f"/reviews/{submission.pk}/")
    assert b"data-self-approval" in page.content
    assert b'data-decision="approve"' not in page.content
    response = reviewer_client.post(f"/reviews/{submission.pk}/approve/")
    assert response.status_code == 403
    response = reviewer_client.post(f"/reviews/{submission.pk}/edit/", {"body": "emit_result(1)"})
    assert response.status_code == 403
    submission.refresh_from_db()
    assert submission.status == "pending" and submission.run is None


def test_a_reviewer_may_still_reject_their_own_agents_script(reviewer, ecommerce) -> None:
    own = Client(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=reviewer, name='mine').raw}")
    submission = Submission.objects.get(pk=submit(own, ecommerce).json()["id"])
    assert (
        submission_reject(submission=submission, user=reviewer, feedback="no").status == "rejected"
    )


def test_the_agent_token_has_no_way_to_approve(api, pending) -> None:
    # Decisions are session pages only: a bearer token never reaches them.
    response = api.post(f"/reviews/{pending.pk}/approve/")
    assert response.status_code == 302 and "/login/" in response["Location"]
    pending.refresh_from_db()
    assert pending.status == "pending"


def test_a_reviewer_of_another_team_gets_not_found(pending, django_user_model) -> None:
    other = team_create(name="Other", slug="other")
    eve = django_user_model.objects.create_user(username="eve", password="x" * 12)
    membership_set(team=other, user=eve, role="admin")
    client = Client()
    client.force_login(eve)
    assert client.get(f"/reviews/{pending.pk}/").status_code == 404
    assert client.post(f"/reviews/{pending.pk}/approve/").status_code == 404
    assert client.post(f"/reviews/{pending.pk}/reject/", {"feedback": "x"}).status_code == 404
    assert pending.pk.hex[:8] not in client.get("/reviews/").content.decode()
    with pytest.raises(ReviewForbidden):
        submission_approve(submission=pending, user=eve)


def test_a_rejection_needs_feedback(reviewer_client, pending) -> None:
    response = reviewer_client.post(f"/reviews/{pending.pk}/reject/", {"feedback": "  "})
    assert response.status_code == 400
    pending.refresh_from_db()
    assert pending.status == "pending"


def test_a_rejection_feeds_the_agents_next_prompt(reviewer_client, api, pending) -> None:
    response = reviewer_client.post(
        f"/reviews/{pending.pk}/reject/", {"feedback": "Only count orders from this week."}
    )
    assert response.status_code == 302
    state = api.get(f"/api/v1/submissions/{pending.pk}/").json()
    assert state["status"] == "rejected" and state["final"] is True
    assert state["decided_by"] == "grace"
    assert "Only count orders from this week." in state["previous_error"]


def test_a_decided_submission_cannot_be_decided_again(reviewer_client, pending) -> None:
    reviewer_client.post(f"/reviews/{pending.pk}/reject/", {"feedback": "no"})
    response = reviewer_client.post(f"/reviews/{pending.pk}/approve/")
    assert response.status_code == 409
