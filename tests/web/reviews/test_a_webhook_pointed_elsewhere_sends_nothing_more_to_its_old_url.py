"""A webhook pointed at another URL sends nothing more to the URL it left.

An agent re-points its webhook (`PUT /api/v1/webhook/`) because the old receiver is wrong, or
no longer theirs (a lapsed domain, a rotated host). A delivery queued before that, and its
retries, must not go on posting the submission's state there, signed with the new secret.
"""

from __future__ import annotations

import pytest

import jazzmine.net as net
from jazzmine_web.reviews.models import WebhookDelivery

from .test_webhooks_stop_with_their_token import (
    HOOK,
    attempt,
    hooked,
    pending,
    reject,
    webhook_point,
)

__all__ = ["hooked", "pending"]  # fixtures shared with that module

pytestmark = pytest.mark.django_db

NEW_HOOK = "https://new-receiver.example/hook"


@pytest.fixture
def repointed(api, monkeypatch) -> None:
    webhook_point(api, monkeypatch, NEW_HOOK)


def test_a_delivery_queued_before_the_change_is_not_sent_to_the_old_url(
    api, pending, reviewer, hooked, monkeypatch
) -> None:
    reject(pending, reviewer)
    queued = WebhookDelivery.objects.get()
    assert queued.url == HOOK
    monkeypatch.setattr(net, "resolve", lambda host, port: ["93.184.216.34"])
    response = api.put("/api/v1/webhook/", {"url": NEW_HOOK}, content_type="application/json")
    assert response.status_code == 200, response.content
    urls, delivery = attempt(queued)
    assert HOOK not in urls
    assert delivery.status == "cancelled"
    assert "another URL" in delivery.cancel_reason
    # The agent reads why on its webhook.
    (shown,) = api.get("/api/v1/webhook/").json()["deliveries"]
    assert shown["cancel_reason"] == delivery.cancel_reason


def test_what_is_queued_after_the_change_goes_to_the_new_url(
    pending, reviewer, hooked, repointed
) -> None:
    reject(pending, reviewer)
    urls, delivery = attempt(WebhookDelivery.objects.get())
    assert (urls, delivery.status) == ([NEW_HOOK], "delivered")
