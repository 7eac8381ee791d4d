"""A webhook speaks for its token: once the token could not ask, the webhook is not told.

Revoked, its user deactivated, its user out of the sandbox's team (or moved to another one):
nothing more is queued, and a delivery queued before that is cancelled, saying why, not sent.
"""

from __future__ import annotations

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.test import Client

import jazzmine.net as net
from jazzmine_web.reviews.models import (
    Submission,
    SubmissionStatus,
    WebhookDelivery,
    WebhookEndpoint,
)
from jazzmine_web.reviews.services import submission_reject
from jazzmine_web.reviews.webhooks import webhook_delivery_attempt
from jazzmine_web.teams.models import ApiToken, Membership, Role
from jazzmine_web.teams.services import api_token_revoke, membership_set, team_create

from .conftest import submit

pytestmark = pytest.mark.django_db

HOOK = "https://agent.example/hook"


def webhook_point(api, monkeypatch, url: str) -> WebhookEndpoint:
    """Point the agent's webhook at `url` through the API (its name resolving publicly)."""
    monkeypatch.setattr(net, "resolve", lambda host, port: ["93.184.216.34"])
    response = api.put("/api/v1/webhook/", {"url": url}, content_type="application/json")
    assert response.status_code == 200, response.content
    return WebhookEndpoint.objects.get()


@pytest.fixture
def hooked(api, monkeypatch) -> WebhookEndpoint:
    """Set the agent's webhook through the API (its name resolving to a public address)."""
    return webhook_point(api, monkeypatch, HOOK)


@pytest.fixture
def pending(api, ecommerce, hooked) -> Submission:
    response = submit(api, ecommerce)
    assert response.status_code == 201, response.content
    return Submission.objects.get(pk=response.json()["id"])


class Receiver:
    """An HTTP client whose every request is recorded and answered 204."""

    def __init__(self) -> None:
        self.urls: list[str] = []
        self.client = httpx.Client(transport=httpx.MockTransport(self._answer))

    def _answer(self, request: httpx.Request) -> httpx.Response:
        self.urls.append(str(request.url))
        return httpx.Response(204)


def attempt(delivery: WebhookDelivery) -> tuple[list[str], WebhookDelivery]:
    receiver = Receiver()
    webhook_delivery_attempt(delivery_id=delivery.pk, client=receiver.client)
    return receiver.urls, WebhookDelivery.objects.get(pk=delivery.pk)


def reject(submission: Submission, reviewer) -> None:
    submission_reject(submission=submission, user=reviewer, feedback="Use the week.")


def leave_the_team(user) -> None:
    Membership.objects.filter(user=user).delete()


def move_to_another_team(user) -> None:
    leave_the_team(user)
    membership_set(team=team_create(name="Other", slug="other"), user=user, role=Role.ADMIN)


def deactivate(user) -> None:
    get_user_model().objects.filter(pk=user.pk).update(is_active=False)


# Nothing is queued once the token could not ask.


def test_nothing_is_queued_for_a_revoked_token(pending, reviewer, member, issued) -> None:
    # The revoke withdraws the submission (nobody is asked to decide it any more), and the
    # withdrawal is told to no webhook: the token's went with it.
    api_token_revoke(user=member, token_id=issued.token.pk)
    pending.refresh_from_db()
    assert pending.status == SubmissionStatus.WITHDRAWN
    assert not WebhookDelivery.objects.exists()


def test_nothing_is_queued_once_the_tokens_user_is_deactivated(pending, reviewer, member) -> None:
    deactivate(member)
    reject(pending, reviewer)
    assert not WebhookDelivery.objects.exists()


def test_nothing_is_queued_once_the_tokens_user_left_the_team(pending, reviewer, member) -> None:
    leave_the_team(member)
    reject(pending, reviewer)
    assert not WebhookDelivery.objects.exists()


def test_nothing_is_queued_once_the_tokens_user_moved_to_another_team(
    pending, reviewer, member
) -> None:
    move_to_another_team(member)  # an admin there, which says nothing about this sandbox
    reject(pending, reviewer)
    assert not WebhookDelivery.objects.exists()


# Revoking deactivates the webhook and cancels what it still had to send.


def test_revoking_the_token_deactivates_its_webhook_and_cancels_its_deliveries(
    pending, reviewer, member, issued, hooked
) -> None:
    reject(pending, reviewer)
    assert api_token_revoke(user=member, token_id=issued.token.pk)
    hooked.refresh_from_db()
    assert hooked.active is False
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.cancel_reason) == ("cancelled", "its API token was revoked")
    urls, _ = attempt(delivery)
    assert urls == []
    # Its owner reads why on the webhooks page.
    page = Client()
    page.force_login(member)
    assert "its API token was revoked" in page.get("/reviews/webhooks/").content.decode()


# A delivery queued before the token lost access is checked again when it is attempted.


def test_a_queued_delivery_of_a_token_revoked_since_is_cancelled_unsent(
    pending, reviewer, issued
) -> None:
    reject(pending, reviewer)
    # Revoked by a path that sends no signal: the attempt's own check must hold.
    ApiToken.objects.filter(pk=issued.token.pk).update(revoked_at="2030-01-01T00:00:00Z")
    urls, delivery = attempt(WebhookDelivery.objects.get())
    assert urls == []
    assert (delivery.status, delivery.cancel_reason) == ("cancelled", "its API token was revoked")
    assert delivery.next_attempt_at is None and not delivery.attempts.exists()


def test_a_queued_delivery_of_a_user_deactivated_since_is_cancelled_unsent(
    pending, reviewer, member
) -> None:
    reject(pending, reviewer)
    deactivate(member)
    urls, delivery = attempt(WebhookDelivery.objects.get())
    assert urls == []
    assert (delivery.status, delivery.cancel_reason) == (
        "cancelled",
        "the token's user was deactivated",
    )


def test_a_queued_delivery_of_a_password_changed_behind_the_apps_back_is_cancelled_unsent(
    pending, reviewer, member
) -> None:
    reject(pending, reviewer)
    # Written by a path that revokes nothing: the token no longer authenticates, so it no
    # longer speaks either.
    password = make_password("a-password-set-in-bulk")
    get_user_model().objects.filter(pk=member.pk).update(password=password)
    urls, delivery = attempt(WebhookDelivery.objects.get())
    assert urls == []
    assert (delivery.status, delivery.cancel_reason) == (
        "cancelled",
        "its API token was made under a password that has changed since",
    )


@pytest.mark.parametrize("leave", [leave_the_team, move_to_another_team])
def test_a_queued_delivery_of_a_user_who_left_the_team_since_is_cancelled_unsent(
    leave, api, pending, reviewer, member
) -> None:
    reject(pending, reviewer)
    leave(member)
    urls, delivery = attempt(WebhookDelivery.objects.get())
    assert urls == []
    assert delivery.status == "cancelled"
    assert "may no longer see" in delivery.cancel_reason
    # The token still works: the agent reads why its delivery never came.
    (shown,) = api.get("/api/v1/webhook/").json()["deliveries"]
    assert (shown["status"], shown["cancel_reason"]) == ("cancelled", delivery.cancel_reason)


def test_a_user_added_back_to_the_team_is_told_again(
    api, ecommerce, pending, reviewer, member, team
) -> None:
    leave_the_team(member)
    reject(pending, reviewer)
    assert not WebhookDelivery.objects.exists()
    membership_set(team=team, user=member, role=Role.MEMBER)
    again = Submission.objects.get(pk=submit(api, ecommerce).json()["id"])
    reject(again, reviewer)
    urls, delivery = attempt(WebhookDelivery.objects.get())
    assert (urls, delivery.status, delivery.submission_id) == ([HOOK], "delivered", again.pk)


# A revoked token's webhook cannot be set again: the page looked its token up among all the
# user's tokens, revoked ones included, and marked the webhook active once more.


def test_a_revoked_tokens_webhook_cannot_be_set_again(member, issued, hooked, monkeypatch) -> None:
    assert api_token_revoke(user=member, token_id=issued.token.pk)
    monkeypatch.setattr(net, "resolve", lambda host, port: ["93.184.216.34"])
    page = Client()
    page.force_login(member)
    for url in (HOOK, "https://agent.example/other"):  # the same address, and another
        response = page.post("/reviews/webhooks/", {"token": issued.token.pk, "url": url})
        assert response.status_code == 422, response.status_code
        assert "revoked" in response.content.decode()
    hooked.refresh_from_db()
    assert (hooked.active, hooked.url) == (False, HOOK)
    # Clearing it stays possible.
    page.post("/reviews/webhooks/", {"token": issued.token.pk, "action": "clear"})
    assert not WebhookEndpoint.objects.exists()
