"""What a webhook receiver answers is never stored or shown, even when it is not HTTP at all,
and a URL that cannot be parsed is a field error, never a server error."""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.reviews.models import WebhookAttempt
from jazzmine_web.reviews.webhooks import webhook_delivery_attempt, webhook_enqueue
from tests.llm.listener import Listener

from .conftest import submit

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = b"redis_password=hunter2"
# Answers whose parse errors quote the receiver's bytes (h11 quotes a bad line), or which
# carry them where a careless reading would keep them.
ANSWERS = {
    "a bad header line": b"HTTP/1.1 500 Oops\r\n" + SECRET + b"\r\n\r\n",
    "not HTTP at all": b"SSH-2.0-OpenSSH " + SECRET + b"\r\n",
    "a bad status line": SECRET + b" 200 OK\r\n\r\n",
    "a reason phrase": b"HTTP/1.1 503 " + SECRET + b"\r\nContent-Length: 0\r\n\r\n",
    "a body": b"HTTP/1.1 500 Oops\r\nContent-Length: 22\r\n\r\n" + SECRET,
    "cut off mid-headers": b"HTTP/1.1 200 OK\r\nX-" + SECRET,
}


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_a_failed_attempt_keeps_only_what_kind_of_failure_it_was(
    api, ecommerce, member, settings, no_worker, name: str
) -> None:
    listener = Listener(answer=ANSWERS[name])
    settings.JAZZMINE_WEBHOOK_ALLOWED_HOSTS = [f"127.0.0.1:{listener.port}"]
    settings.JAZZMINE_WEBHOOK_MAX_ATTEMPTS = 1
    try:
        url = f"http://127.0.0.1:{listener.port}/hook"
        assert api.put("/api/v1/webhook/", {"url": url}, "application/json").status_code == 200
        state = submit(api, ecommerce).json()
        delivery = webhook_enqueue(submission_id=state["id"], event="submission.test")
        webhook_delivery_attempt(delivery_id=delivery.pk)
    finally:
        listener.close()
    attempt = WebhookAttempt.objects.get()
    assert attempt.error, "the attempt failed"
    assert "hunter2" not in attempt.error, attempt.error
    page = Client()
    page.force_login(member)
    shown = page.get("/reviews/webhooks/")
    assert shown.status_code == 200
    assert "hunter2" not in shown.content.decode()
    assert "hunter2" not in api.get("/api/v1/webhook/").content.decode()


UNPARSABLE = [
    "http://[::1/hook",
    "http://example.com]/hook",
    "http://[x]/",
    "https://[/",
    "http://]",
]


@pytest.mark.parametrize("url", UNPARSABLE)
def test_an_unparsable_url_is_a_field_error_on_the_api(api, url: str) -> None:
    response = api.put("/api/v1/webhook/", {"url": url}, content_type="application/json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_field"
    assert error["message"].startswith("'url'"), error


@pytest.mark.parametrize("url", UNPARSABLE[:2])
def test_an_unparsable_url_is_a_form_error_on_the_page(member, issued, url: str) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(member)
    response = client.post("/reviews/webhooks/", {"token": issued.token.pk, "url": url})
    assert response.status_code == 422, response.status_code
    assert "cannot be parsed" in response.content.decode()
