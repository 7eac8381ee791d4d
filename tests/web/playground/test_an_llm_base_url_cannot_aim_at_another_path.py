"""The LLM settings page refuses a base URL whose query or fragment would hide the path."""

from __future__ import annotations

import pytest

from jazzmine_web.playground.models import LLMSettings

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:11434/api/pull#", "http://127.0.0.1:11434/api/pull?x="]
)
def test_a_base_url_with_a_query_or_fragment_is_refused_with_a_field_error(
    logged_in, settings, url: str
) -> None:
    settings.JAZZMINE_OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1:11434"]
    response = logged_in.post(
        "/playground/settings/", {"base_url": url, "model": "evil/model", "api_key": ""}
    )
    assert response.status_code == 422  # the form again, with the error
    assert "query (?) or fragment (#)" in response.content.decode()
    assert not LLMSettings.objects.exists()


def test_a_row_saved_before_the_rule_is_not_used(user, settings) -> None:
    from jazzmine.llm import LLMConfigError
    from jazzmine_web.playground.services import llm_config_for

    settings.JAZZMINE_OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1:11434"]
    LLMSettings.objects.create(user=user, base_url="http://127.0.0.1:11434/api/pull#", model="m")
    with pytest.raises(LLMConfigError, match="fragment"):
        llm_config_for(user)
