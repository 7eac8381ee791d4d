"""The Django admin re-points no playground session and no user's LLM endpoint.

A session moved to another user or sandbox would hand over its scripts and prompts; an LLM
endpoint changed there would send its user's API key where a staff user says, unchecked.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.playground.models import LLMSettings
from jazzmine_web.playground.services import llm_settings_save, session_open

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(django_user_model) -> Client:
    user = django_user_model.objects.create_superuser(username="root", password="x" * 12)
    client = Client()
    client.force_login(user)
    return client


def test_a_users_llm_endpoint_is_not_changed_in_the_admin(root, member, settings) -> None:
    settings.JAZZMINE_OUTBOUND_ALLOWED_HOSTS = ["llm.example"]
    llm_settings_save(
        user=member, base_url="https://llm.example/v1", model="m", api_key="sk-1", temperature=None
    )
    row = LLMSettings.objects.get(user=member)
    response = root.post(
        f"/admin/playground/llmsettings/{row.pk}/change/",
        {"user": member.pk, "base_url": "http://169.254.169.254/v1", "model": "m"},
    )
    assert response.status_code in (200, 302, 403)
    row.refresh_from_db()
    assert row.base_url == "https://llm.example/v1"
    assert root.get("/admin/playground/llmsettings/add/").status_code == 403


def test_a_session_is_not_moved_to_another_user(root, member, ecommerce, outsider) -> None:
    session = session_open(user=member, sandbox=ecommerce, task="t")
    root.post(
        f"/admin/playground/playgroundsession/{session.pk}/change/",
        {
            "user": outsider.pk,
            "sandbox": ecommerce.pk,
            "task": "t",
            "attempts-TOTAL_FORMS": "0",
            "attempts-INITIAL_FORMS": "0",
        },
    )
    session.refresh_from_db()
    assert session.user == member
