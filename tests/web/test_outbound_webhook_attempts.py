"""A webhook attempt ends within its timeout, follows no redirect and reaches nothing internal.

The receivers listen on loopback, so the deployment allows their one port, as a real one would.
"""

from __future__ import annotations

import time

import pytest

from jazzmine_web.reviews.models import WebhookAttempt, WebhookDelivery
from jazzmine_web.reviews.webhooks import webhook_delivery_attempt, webhook_enqueue
from tests.core.test_outbound_connections import OK, fake_dns
from tests.llm.listener import Listener
from tests.web.reviews.conftest import api, issued, no_worker, submit  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db(transaction=True)


def deliver_once(api, sandbox, url: str) -> WebhookDelivery:  # noqa: F811 - the fixture
    """Save the webhook, queue one event and make its one attempt here."""
    assert api.put("/api/v1/webhook/", {"url": url}, "application/json").status_code == 200
    state = submit(api, sandbox).json()
    delivery = webhook_enqueue(submission_id=state["id"], event="submission.test")
    webhook_delivery_attempt(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    return delivery


def test_a_receiver_answering_a_byte_at_a_time_is_cut_off_at_the_attempt_timeout(
    api,  # noqa: F811 - the fixture
    ecommerce,
    settings,
    no_worker,  # noqa: F811 - the fixture
) -> None:
    """Each byte comes within the timeout, the whole answer would take 12 s: the attempt must
    end at the timeout, or it holds a worker for as long as the receiver likes and outlives its
    claim (a second worker would then send the same delivery)."""
    slow = Listener(
        answer=OK.replace(b"\r\n\r\n", b"\r\nx-pad: " + b"a" * 40 + b"\r\n\r\n"), drip=0.15
    )
    settings.JAZZMINE_WEBHOOK_ALLOWED_HOSTS = [f"127.0.0.1:{slow.port}"]
    settings.JAZZMINE_WEBHOOK_TIMEOUT_SECONDS = 1.0
    settings.JAZZMINE_WEBHOOK_MAX_ATTEMPTS = 1
    started = time.monotonic()
    try:
        delivery = deliver_once(api, ecommerce, f"http://127.0.0.1:{slow.port}/hook")
    finally:
        took = time.monotonic() - started
        slow.close()
    attempt = WebhookAttempt.objects.get()
    assert slow.accepted == 1
    assert attempt.status_code is None
    assert attempt.error == "ReadTimeout: the receiver did not answer in time"
    assert attempt.duration_ms < 2000
    assert took < 6
    assert delivery.status == "failed"
    assert delivery.claimed_until is None


def test_a_redirect_to_an_internal_address_is_not_followed(
    api,  # noqa: F811 - the fixture
    ecommerce,
    settings,
    no_worker,  # noqa: F811 - the fixture
) -> None:
    internal = Listener()
    redirect = Listener(
        answer=(
            f"HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:{internal.port}/\r\n"
            "content-length: 0\r\nconnection: close\r\n\r\n"
        ).encode()
    )
    settings.JAZZMINE_WEBHOOK_ALLOWED_HOSTS = [f"127.0.0.1:{redirect.port}"]
    settings.JAZZMINE_WEBHOOK_MAX_ATTEMPTS = 1
    try:
        delivery = deliver_once(api, ecommerce, f"http://127.0.0.1:{redirect.port}/hook")
    finally:
        redirect.close()
        internal.close()
    attempt = WebhookAttempt.objects.get()
    assert attempt.status_code == 302
    assert "redirects are not followed" in attempt.error
    assert delivery.status == "failed"
    assert redirect.accepted == 1
    assert internal.accepted == 0


def test_a_receiver_name_rebound_to_loopback_after_saving_is_never_reached(
    api,  # noqa: F811 - the fixture
    ecommerce,
    settings,
    no_worker,  # noqa: F811 - the fixture
    monkeypatch,
) -> None:
    """The system resolver (not the checker's own seam) answers public once, then loopback."""
    internal = Listener()
    settings.JAZZMINE_WEBHOOK_MAX_ATTEMPTS = 1
    answers = iter([["93.184.216.34"]])
    asked = fake_dns(
        monkeypatch,
        lambda host: next(answers, ["127.0.0.1"]) if host == "hooks.rebind.test" else None,
    )
    try:
        delivery = deliver_once(api, ecommerce, f"http://hooks.rebind.test:{internal.port}/hook")
    finally:
        internal.close()
    attempt = WebhookAttempt.objects.get()
    # Once when saved, once when delivering (other names, the broker's, pass through).
    assert asked.count("hooks.rebind.test") == 2
    assert attempt.status_code is None
    assert attempt.error.startswith("Refused:") and "loopback" in attempt.error
    assert delivery.status == "failed"
    assert internal.accepted == 0
