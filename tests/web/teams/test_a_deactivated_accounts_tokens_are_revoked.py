"""Deactivating an account revokes its API tokens, and their list says why.

The API already refused a deactivated person's token (the check reads `is_active`), but the
token stayed "active" on its list, its webhook stayed set, and reactivating the account
brought it back: a person let go kept agents waiting to wake. Deactivation revokes through
the service, as the owner's revoke does: webhooks stop, long requests end, and nothing
revives on reactivation.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

import jazzmine.net as net
from jazzmine_web.reviews.models import WebhookEndpoint
from jazzmine_web.teams.models import ApiToken
from jazzmine_web.teams.services import api_token_create

pytestmark = pytest.mark.django_db


def test_deactivating_an_account_revokes_its_tokens_for_good(member, monkeypatch) -> None:
    raw = api_token_create(user=member, name="ci-bot").raw
    agent = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    monkeypatch.setattr(net, "resolve", lambda host, port: ["93.184.216.34"])
    hook = {"url": "https://agent.example/hook"}
    assert agent.put("/api/v1/webhook/", hook, content_type="application/json").status_code == 200

    user = get_user_model().objects.get(pk=member.pk)
    user.is_active = False
    user.save()  # as the admin's "active" box does

    token = ApiToken.objects.get()
    assert token.revoked_at is not None and token.revoked_reason == "deactivated"
    assert not WebhookEndpoint.objects.get().active
    user.is_active = True
    user.save()
    assert agent.get("/api/v1/sandboxes/").status_code == 401
    browser = Client()
    browser.force_login(user)
    assert "the account was deactivated" in browser.get("/account/tokens/").content.decode()


def test_saving_a_login_reads_nothing_more(member, django_assert_num_queries) -> None:
    """A login saves `last_login` only: the check of the account's password costs no query."""
    api_token_create(user=member, name="ci-bot")
    member.save(update_fields=["last_login"])
    with django_assert_num_queries(1):
        member.save(update_fields=["last_login"])
