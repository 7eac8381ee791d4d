"""A webhook cannot point this server at itself, the private network or a metadata service."""

from __future__ import annotations

import pytest

import jazzmine.net as net
from jazzmine_web.reviews.models import (
    Submission,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
)
from jazzmine_web.reviews.services import submission_reject
from jazzmine_web.reviews.webhooks import webhook_delivery_attempt
from tests.llm.listener import Listener, http_answer

from .conftest import submit

pytestmark = pytest.mark.django_db(transaction=True)

REFUSED = [
    "http://127.0.0.1:8000/api/v1/",
    "http://127.1/",
    "http://0x7f000001/",
    "http://2130706433/",
    "http://017700000001/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://localhost./",
    "http://LOCALHOST/",
    "http://0.0.0.0/",
    "http://169.254.169.254/latest/meta-data",
    "http://[fd00:ec2::254]/",
    "http://metadata.google.internal/",
    "http://10.1.2.3/hook",
    "http://192.168.1.10/hook",
    "http://100.64.0.9/hook",
    "http://user@127.0.0.1/",
    "http://example.com@127.0.0.1/",
    "gopher://127.0.0.1:6379/_FLUSHALL",
    "file:///etc/passwd",
    "ftp://example.com/",
    "http://example.com/\nX-Injected: 1",
    "http://exa mple.com/",
]


def put(api, url: str):
    return api.put("/api/v1/webhook/", {"url": url}, content_type="application/json")


@pytest.mark.parametrize("url", REFUSED)
def test_an_internal_or_odd_webhook_url_is_refused_at_save_time(api, url: str) -> None:
    response = put(api, url)
    assert response.status_code == 400, url
    assert response.json()["error"]["code"] == "invalid_field"
    assert not WebhookEndpoint.objects.exists()


def test_a_name_resolving_to_loopback_is_refused_at_save_time(api, monkeypatch) -> None:
    monkeypatch.setattr(net, "resolve", lambda host, port: ["127.0.0.1"])
    response = put(api, "http://localtest.me/hook")
    assert response.status_code == 400
    assert "loopback" in response.json()["error"]["message"]


def test_a_name_that_rebinds_after_saving_is_refused_when_delivering(
    api, ecommerce, reviewer, monkeypatch, settings, no_worker
) -> None:
    """Public when saved, loopback when delivered: the real server on loopback sees nothing."""
    settings.JAZZMINE_WEBHOOK_MAX_ATTEMPTS = 1
    listener = Listener()
    try:
        monkeypatch.setattr(net, "resolve", lambda host, port: ["93.184.216.34"])
        assert put(api, f"http://rebind.test:{listener.port}/hook").status_code == 200
        monkeypatch.setattr(net, "resolve", lambda host, port: ["127.0.0.1"])
        state = submit(api, ecommerce).json()
        submission_reject(
            submission=Submission.objects.get(pk=state["id"]), user=reviewer, feedback="no"
        )
        delivery = WebhookDelivery.objects.get()
        # Here, not in a worker: the name must resolve to loopback where the attempt is made.
        webhook_delivery_attempt(delivery_id=delivery.pk)
        delivery.refresh_from_db()
    finally:
        listener.close()
    assert listener.accepted == 0
    assert delivery.status == "failed"
    assert "Refused" in delivery.attempts.get().error
    assert "loopback" in delivery.attempts.get().error


def test_a_loopback_receiver_is_reached_once_the_deployment_allows_it(
    api, settings, monkeypatch
) -> None:
    listener = Listener()
    try:
        assert put(api, f"http://127.0.0.1:{listener.port}/hook").status_code == 400
        settings.JAZZMINE_WEBHOOK_ALLOWED_HOSTS = [f"127.0.0.1:{listener.port}"]
        assert put(api, f"http://127.0.0.1:{listener.port}/hook").status_code == 200
    finally:
        listener.close()


def test_an_exception_for_the_llm_endpoint_opens_no_webhook_to_it(
    api, ecommerce, settings, no_worker
) -> None:
    # The operator lets the playground reach a local model server; an agent's token must
    # not thereby make the server POST to that internal service, or read its status codes.
    listener = Listener()
    url = f"http://127.0.0.1:{listener.port}/api/pull"
    settings.JAZZMINE_OUTBOUND_ALLOWED_HOSTS = [f"127.0.0.1:{listener.port}"]
    try:
        refused = put(api, url)
        assert refused.status_code == 400
        assert "JAZZMINE_WEBHOOK_ALLOWED_HOSTS" in refused.json()["error"]["message"]
        # Saved while webhooks were allowed there, it is refused again at each attempt.
        settings.JAZZMINE_WEBHOOK_ALLOWED_HOSTS = [f"127.0.0.1:{listener.port}"]
        assert put(api, url).status_code == 200
        settings.JAZZMINE_WEBHOOK_ALLOWED_HOSTS = []
        settings.JAZZMINE_WEBHOOK_MAX_ATTEMPTS = 1
        state = submit(api, ecommerce).json()
        from jazzmine_web.reviews.webhooks import webhook_enqueue

        delivery = webhook_enqueue(submission_id=state["id"], event="submission.test")
        webhook_delivery_attempt(delivery_id=delivery.pk)
    finally:
        listener.close()
    assert listener.accepted == 0
    assert "loopback" in delivery.attempts.get().error


def test_what_a_failing_receiver_answers_is_never_stored_or_shown(
    api, ecommerce, reviewer, member, settings, no_worker
) -> None:
    body = b"internal secret page"
    listener = Listener(answer=http_answer("500 Oops", body))
    settings.JAZZMINE_WEBHOOK_ALLOWED_HOSTS = [f"127.0.0.1:{listener.port}"]
    settings.JAZZMINE_WEBHOOK_MAX_ATTEMPTS = 1
    try:
        assert put(api, f"http://127.0.0.1:{listener.port}/hook").status_code == 200
        state = submit(api, ecommerce).json()
        from jazzmine_web.reviews.webhooks import webhook_enqueue

        delivery = webhook_enqueue(submission_id=state["id"], event="submission.test")
        webhook_delivery_attempt(delivery_id=delivery.pk)
    finally:
        listener.close()
    attempts = list(WebhookAttempt.objects.all())
    assert attempts and all(a.status_code == 500 for a in attempts)
    assert all("secret" not in a.error for a in attempts)
    listed = api.get("/api/v1/webhook/").content.decode()
    assert "internal secret page" not in listed
    from django.test import Client

    page = Client()
    page.force_login(member)
    html = page.get("/reviews/webhooks/").content.decode()
    assert "HTTP 500" in html and "internal secret page" not in html


@pytest.mark.parametrize(
    ("url", "advised"),
    [
        ("http://hooks.nowhere.invalid/hook", False),  # a typo: allowing it fixes nothing
        ("ftp://example.com/", False),
        ("http://metadata.google.internal/", True),
        ("http://[::1]/", True),
        ("http://10.1.2.3/hook", True),
    ],
)
def test_only_a_host_that_is_not_public_gets_the_operators_setting(
    api, url: str, advised: bool
) -> None:
    message = put(api, url).json()["error"]["message"]
    assert ("JAZZMINE_WEBHOOK_ALLOWED_HOSTS" in message) is advised, message
