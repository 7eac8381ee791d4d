"""A staff user's admin shows and revokes their own API tokens, webhooks and LLM settings only.

A token, its webhook and a person's LLM endpoint are their owner's, as in the studio (where
only the owner lists, revokes or clears them). A team admin is given the teams' permissions
to manage their members; those included revoking every agent token of every team, and the
webhooks' permission deleting every agent's webhook.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.playground.services import llm_settings_save
from jazzmine_web.reviews.models import WebhookEndpoint
from jazzmine_web.teams.models import ApiToken, Role
from jazzmine_web.teams.services import api_token_create
from tests.web.helpers import teammate

pytestmark = pytest.mark.django_db

HOOK = "https://ledger.example/agent-hook"


@pytest.fixture
def clerk(ledger):
    """A member of the victim team, with an agent token and its webhook."""
    user = teammate(ledger.team, Role.MEMBER, username="ledger_clerk")
    token = api_token_create(user=user, name="payroll-agent").token
    WebhookEndpoint.objects.create(api_token=token, url=HOOK, secret_ciphertext="c")
    return user


def test_a_staff_user_cannot_revoke_another_users_token(mallory: Client, clerk) -> None:
    token = ApiToken.objects.get(user=clerk)
    response = mallory.post(
        "/admin/teams/apitoken/", {"action": "revoke", "_selected_action": [token.pk]}
    )
    assert response.status_code in (200, 302, 403)
    token.refresh_from_db()
    assert token.revoked_at is None


def test_a_staff_user_cannot_delete_another_users_webhook(mallory: Client, clerk) -> None:
    hook = WebhookEndpoint.objects.get(api_token__user=clerk)
    response = mallory.post(f"/admin/reviews/webhookendpoint/{hook.pk}/delete/", {"post": "yes"})
    assert response.status_code in (302, 403)
    assert WebhookEndpoint.objects.filter(pk=hook.pk).exists()


def test_a_staff_user_sees_no_one_elses_tokens_webhooks_or_llm_endpoint(
    mallory: Client, clerk, settings
) -> None:
    settings.JAZZMINE_OUTBOUND_ALLOWED_HOSTS = ["llm.ledger.example"]
    llm_settings_save(
        user=clerk, base_url="https://llm.ledger.example/v1", model="m", api_key="k",
        temperature=None,
    )  # fmt: skip
    for path, secret in [
        ("teams/apitoken", "payroll-agent"),
        ("reviews/webhookendpoint", HOOK),
        ("playground/llmsettings", "llm.ledger.example"),
    ]:
        page = mallory.get(f"/admin/{path}/").content.decode()
        assert secret not in page, path


def test_a_staff_user_still_revokes_their_own_token(mallory: Client, outsider) -> None:
    token = api_token_create(user=outsider, name="mine").token
    response = mallory.post(
        "/admin/teams/apitoken/", {"action": "revoke", "_selected_action": [token.pk]}
    )
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
