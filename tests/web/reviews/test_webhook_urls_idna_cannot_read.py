"""A webhook URL whose host IDNA cannot decode is a 4xx with a clear error.

`http://xn--localhost/` used to raise idna.IDNAError out of url_check: a 500 on the API and on
the webhooks page.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.reviews.models import WebhookEndpoint

pytestmark = pytest.mark.django_db

BAD_A_LABELS = [
    "http://xn--localhost/",
    "http://xn--/",
    "http://xn--ls8h.la/hook",
    "https://XN--LOCALHOST:8443/hook",
]


@pytest.mark.parametrize("url", BAD_A_LABELS)
def test_the_webhook_api_answers_400_naming_the_url(issued, url: str) -> None:
    api = Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}", raise_request_exception=False)
    response = api.put("/api/v1/webhook/", {"url": url}, content_type="application/json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_field" and "cannot be parsed" in error["message"]
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.parametrize("url", BAD_A_LABELS)
def test_the_webhooks_page_answers_with_a_form_error(member, issued, url: str) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(member)
    response = client.post("/reviews/webhooks/", {"token": issued.token.pk, "url": url})
    assert response.status_code == 422
    assert "cannot be parsed" in response.content.decode()
    assert not WebhookEndpoint.objects.exists()
