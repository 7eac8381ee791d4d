"""A webhook receiver answering with NUL characters anywhere still has its attempt stored.

What a receiver answers is never stored (only its status code, and for a failure a fixed
sentence of what kind it was), so a NUL in its answer never reaches PostgreSQL, which could
not hold one: the attempt is stored and the delivery goes on as for any other answer.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.reviews.models import WebhookAttempt, WebhookDelivery
from jazzmine_web.reviews.webhooks import webhook_delivery_attempt, webhook_enqueue
from tests.llm.listener import Listener

from .conftest import submit

pytestmark = pytest.mark.django_db(transaction=True)

NUL = b"\x00"
ANSWERS = {
    "ok-body": (b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\na" + NUL + b"b", 200, "delivered"),
    "error-body": (b"HTTP/1.1 500 Oops\r\nContent-Length: 1\r\n\r\n" + NUL, 500, "failed"),
    "reason": (b"HTTP/1.1 503 Bu" + NUL + b"sy\r\nContent-Length: 0\r\n\r\n", None, "failed"),
    "header": (b"HTTP/1.1 200 OK\r\nX-Note: a" + NUL + b"\r\nContent-Length: 0\r\n\r\n",
               None, "failed"),
    "status-line": (NUL + b" 200 OK\r\n\r\n", None, "failed"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_an_answer_with_a_nul_is_stored_as_its_status_only(
    api, ecommerce, member, settings, no_worker, name: str
) -> None:
    answer, status_code, status = ANSWERS[name]
    listener = Listener(answer=answer)
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
    assert attempt.status_code == status_code
    assert "\x00" not in attempt.error
    assert WebhookDelivery.objects.get().status == status
    page = Client()
    page.force_login(member)
    assert page.get("/reviews/webhooks/").status_code == 200
