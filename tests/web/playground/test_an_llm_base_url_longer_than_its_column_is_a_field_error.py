"""An LLM base URL longer than the column it is stored in is a field error on the settings
page naming the limit, and nothing is stored: the form took any length, and PostgreSQL refused
the row with a DataError (a 500; SQLite kept the whole URL)."""

from __future__ import annotations

import pytest

import jazzmine.net as net
from jazzmine_web.playground.models import LLMSettings

pytestmark = pytest.mark.django_db

LONGEST = LLMSettings._meta.get_field("base_url").max_length


def url_of(length: int) -> str:
    """Return an https URL of a public host, exactly `length` characters long."""
    start = "https://llm.example.com/"
    return start + "a" * (length - len(start) - 3) + "/v1"


@pytest.fixture(autouse=True)
def public_host(monkeypatch) -> None:
    monkeypatch.setattr(net, "resolve", lambda host, port: ["93.184.216.34"])


def save(client, base_url: str):
    return client.post("/playground/settings/", {"base_url": base_url, "model": "m", "api_key": ""})


def test_a_base_url_past_the_column_is_refused_with_a_field_error(logged_in) -> None:
    response = save(logged_in, url_of(380))
    assert response.status_code == 422  # the form again, with the error
    errors = response.context["form"].errors["base_url"]
    assert any(f"at most {LONGEST} characters" in error for error in errors), errors
    assert not LLMSettings.objects.exists()


def test_a_base_url_of_the_columns_length_is_kept(logged_in) -> None:
    url = url_of(LONGEST)
    assert save(logged_in, url).status_code == 302
    assert LLMSettings.objects.get().base_url == url
