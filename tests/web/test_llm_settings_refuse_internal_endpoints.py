"""A member's own LLM endpoint cannot point at internal addresses unless the deployment allows it."""

from __future__ import annotations

import pytest

import jazzmine.net as net
from jazzmine_web.playground.models import LLMSettings

pytestmark = pytest.mark.django_db


def save(client, base_url: str):
    return client.post("/playground/settings/", {"base_url": base_url, "model": "m", "api_key": ""})


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:11434/v1",
        "http://127.1:11434/v1",
        "http://0x7f000001/v1",
        "http://[::1]:11434/v1",
        "http://[::ffff:127.0.0.1]/v1",
        "http://localhost:11434/v1",
        "http://169.254.169.254/latest/meta-data",
        "http://[fd00:ec2::254]/",
        "http://10.0.0.5/v1",
        "http://user@127.0.0.1/v1",
    ],
)
def test_an_internal_base_url_is_refused_with_a_field_error(logged_in, url: str) -> None:
    response = save(logged_in, url)
    assert response.status_code == 422  # the form again, with the error
    assert not LLMSettings.objects.filter(base_url=url).exists()


def test_the_error_says_how_a_deployment_allows_a_local_server(logged_in) -> None:
    html = save(logged_in, "http://127.0.0.1:11434/v1").content.decode()
    assert "loopback" in html and "JAZZMINE_OUTBOUND_ALLOWED_HOSTS" in html


def test_a_refused_url_is_not_also_called_missing(logged_in) -> None:
    # Both were filled in: "set both the base URL and the model" beside it was false.
    html = save(logged_in, "http://127.0.0.1:11434/v1").content.decode()
    assert "Set both the base URL and the model" not in html
    one = logged_in.post("/playground/settings/", {"base_url": "", "model": "m", "api_key": ""})
    assert "Set both the base URL and the model, or neither." in one.content.decode()


def test_the_playground_leads_to_the_settings_once_an_llm_is_set(
    logged_in, member, ecommerce, settings
) -> None:
    settings.JAZZMINE_OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1:11434"]
    save(logged_in, "http://127.0.0.1:11434/v1")
    html = logged_in.get("/playground/").content.decode()
    assert 'id="llm-in-use"' in html and 'href="/playground/settings/"' in html


def test_a_name_resolving_to_a_private_address_is_refused(logged_in, monkeypatch) -> None:
    monkeypatch.setattr(net, "resolve", lambda host, port: ["192.168.1.20"])
    save(logged_in, "http://llm.example.com/v1")
    assert not LLMSettings.objects.exists()


def test_an_allowed_local_model_server_is_accepted(logged_in, settings) -> None:
    settings.JAZZMINE_OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1:11434"]
    response = save(logged_in, "http://127.0.0.1:11434/v1")
    assert response.status_code == 302
    assert LLMSettings.objects.get().base_url == "http://127.0.0.1:11434/v1"


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://llm.nowhere.invalid/v1", "does not resolve"),  # a typo in a public name
        ("ftp://llm.example.com/v1", "must start with http:// or https://"),
        ("http://llm.example.com:99999/v1", ""),  # a port out of range
    ],
)
def test_an_error_allowing_a_host_would_not_fix_does_not_suggest_it(
    logged_in, url: str, reason: str
) -> None:
    # Allowing a host that does not resolve changes nothing: the advice sent the operator
    # to the deployment's settings for a typo.
    response = save(logged_in, url)
    html = response.content.decode()
    assert response.status_code == 422 and reason in html
    assert "JAZZMINE_OUTBOUND_ALLOWED_HOSTS" not in html
    assert not LLMSettings.objects.exists()


@pytest.mark.parametrize(
    "url", ["http://localhost:11434/v1", "http://[::1]:11434/v1", "http://10.0.0.5/v1"]
)
def test_every_host_that_is_not_public_gets_the_advice(logged_in, url: str) -> None:
    assert "JAZZMINE_OUTBOUND_ALLOWED_HOSTS" in save(logged_in, url).content.decode()


def test_a_name_resolving_to_a_private_address_gets_the_advice(logged_in, monkeypatch) -> None:
    monkeypatch.setattr(net, "resolve", lambda host, port: ["192.168.1.20"])
    html = save(logged_in, "http://llm.example.com/v1").content.decode()
    assert "resolves to a private address" in html and "JAZZMINE_OUTBOUND_ALLOWED_HOSTS" in html
