from __future__ import annotations

import itertools
import json

import pytest

from jazzmine.agent_client import verify_signature
from jazzmine_web.reviews.models import Submission, WebhookDelivery
from jazzmine_web.reviews.services import submission_reject, submissions_expire_overdue
from tests.waiting import wait_until

from .conftest import submit
from .receiver import Receiver

pytestmark = pytest.mark.django_db(transaction=True)


def deployment(**env: str):
    """Mark a test with the settings of its deployment (this process and the worker's)."""
    return pytest.mark.deployment(**env)


@pytest.fixture
def fast_retries(request, settings, celery_workers):
    """Deliver with a worker whose settings are the test's: loopback receivers, quick retries.

    The test receivers listen on 127.0.0.1, so the deployment allows it, as a real one must.
    """
    env = {
        "JAZZMINE_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
        "JAZZMINE_WEBHOOK_BACKOFF_SECONDS": "0.05",
        "JAZZMINE_WEBHOOK_MAX_ATTEMPTS": "4",
    }
    marker = request.node.get_closest_marker("deployment")
    env.update(marker.kwargs if marker else {})
    settings.JAZZMINE_WEBHOOK_ALLOWED_HOSTS = env["JAZZMINE_WEBHOOK_ALLOWED_HOSTS"].split(",")
    settings.JAZZMINE_WEBHOOK_BACKOFF_SECONDS = float(env["JAZZMINE_WEBHOOK_BACKOFF_SECONDS"])
    settings.JAZZMINE_WEBHOOK_MAX_ATTEMPTS = int(env["JAZZMINE_WEBHOOK_MAX_ATTEMPTS"])
    return celery_workers.running(env)


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def set_webhook(api, url: str) -> str:
    response = api.put("/api/v1/webhook/", {"url": url}, content_type="application/json")
    assert response.status_code == 200
    secret = response.json()["secret"]
    assert secret.startswith("whsec_")
    return secret


def delivery_settled(delivery_id: int, timeout: float = 15.0) -> WebhookDelivery:
    return wait_until(
        lambda: WebhookDelivery.objects.exclude(status="pending").filter(pk=delivery_id).first(),
        timeout=timeout,
        interval=0.05,
        message="the delivery never settled",
    )


def test_a_decision_is_posted_signed_to_the_tokens_webhook(
    api, ecommerce, reviewer, receiver, fast_retries
) -> None:
    secret = set_webhook(api, receiver.url)
    state = submit(api, ecommerce).json()
    submission_reject(
        submission=Submission.objects.get(pk=state["id"]), user=reviewer, feedback="Use the week."
    )
    headers, body = receiver.wait_for(1)[0]
    assert verify_signature(secret=secret, body=body, header=headers["X-Jazzmine-Signature"])
    assert not verify_signature(
        secret="whsec_wrong", body=body, header=headers["X-Jazzmine-Signature"]
    )
    assert not verify_signature(
        secret=secret, body=body + b" ", header=headers["X-Jazzmine-Signature"]
    )
    payload = json.loads(body)
    assert headers["X-Jazzmine-Event"] == "submission.decided" == payload["event"]
    assert payload["submission"]["status"] == "rejected"
    assert "Use the week." in payload["submission"]["previous_error"]
    # The worker records the answer after the receiver has it; the test ends once it has.
    assert delivery_settled(WebhookDelivery.objects.get().pk).status == "delivered"


# A backoff long enough to tell waits from requests.
@deployment(JAZZMINE_WEBHOOK_BACKOFF_SECONDS="0.3")
def test_a_failing_receiver_is_retried_with_backoff_until_it_answers(
    api, ecommerce, reviewer, fast_retries
) -> None:
    receiver = Receiver(statuses=[500, 503])
    try:
        secret = set_webhook(api, receiver.url)
        state = submit(api, ecommerce).json()
        submission_reject(
            submission=Submission.objects.get(pk=state["id"]), user=reviewer, feedback="no"
        )
        delivery = delivery_settled(WebhookDelivery.objects.get().pk)
        requests = receiver.wait_for(3)
    finally:
        receiver.close()
    assert delivery.status == "delivered"
    attempts = list(delivery.attempts.order_by("number"))
    assert [a.status_code for a in attempts] == [500, 503, 200]
    gaps = [(b.started_at - a.started_at).total_seconds() for a, b in itertools.pairwise(attempts)]
    # The wait doubles: 0.3 s, then 0.6 s. Each gap is its wait plus a request, so compare
    # each with its own wait (a wait that did not double would leave the second gap short).
    assert gaps[0] >= 0.3 * 0.95
    assert gaps[1] >= 0.6 * 0.95
    # Every attempt carries the same body, signed afresh.
    bodies = {body for _h, body in requests}
    assert len(bodies) == 1
    assert all(
        verify_signature(secret=secret, body=b, header=h["X-Jazzmine-Signature"])
        for h, b in requests
    )
    assert [h["X-Jazzmine-Attempt"] for h, _b in requests] == ["1", "2", "3"]


def test_a_receiver_that_never_answers_is_given_up_after_the_last_attempt(
    api, ecommerce, reviewer, fast_retries
) -> None:
    receiver = Receiver(statuses=[500] * 10)
    try:
        set_webhook(api, receiver.url)
        state = submit(api, ecommerce).json()
        submission_reject(
            submission=Submission.objects.get(pk=state["id"]), user=reviewer, feedback="no"
        )
        delivery = delivery_settled(WebhookDelivery.objects.get().pk)
    finally:
        receiver.close()
    assert delivery.status == "failed"
    assert delivery.attempts.count() == 4
    # Each attempt but the last says the delivery goes on; the last says it was the last.
    said = [a.error for a in delivery.attempts.order_by("number")]
    assert all(e.endswith("the delivery is retried.") for e in said[:3]), said
    assert said[3] == "HTTP 500: the receiver failed; that was the last of 4 attempts.", said


@deployment(JAZZMINE_WEBHOOK_MAX_ATTEMPTS="2")
def test_an_unreachable_receiver_records_the_connection_error(
    api, ecommerce, reviewer, fast_retries
) -> None:
    receiver = Receiver()
    url = receiver.url
    receiver.close()  # nothing listens there any more
    set_webhook(api, url)
    state = submit(api, ecommerce).json()
    submission_reject(
        submission=Submission.objects.get(pk=state["id"]), user=reviewer, feedback="no"
    )
    delivery = delivery_settled(WebhookDelivery.objects.get().pk)
    assert delivery.status == "failed"
    assert all(a.status_code is None and "Connect" in a.error for a in delivery.attempts.all())


def test_expiry_is_posted_to_the_webhook(api, ecommerce, receiver, fast_retries) -> None:
    import datetime

    from django.utils import timezone

    set_webhook(api, receiver.url)
    state = submit(api, ecommerce).json()
    Submission.objects.filter(pk=state["id"]).update(
        expires_at=timezone.now() - datetime.timedelta(seconds=1)
    )
    submissions_expire_overdue()
    headers, body = receiver.wait_for(1)[0]
    assert headers["X-Jazzmine-Event"] == "submission.expired"
    assert json.loads(body)["submission"]["status"] == "expired"


def test_delivery_attempts_are_visible_to_the_agent_and_on_the_page(
    api, ecommerce, reviewer, member, fast_retries
) -> None:
    receiver = Receiver(statuses=[500])
    try:
        set_webhook(api, receiver.url)
        state = submit(api, ecommerce).json()
        submission_reject(
            submission=Submission.objects.get(pk=state["id"]), user=reviewer, feedback="no"
        )
        delivery_settled(WebhookDelivery.objects.get().pk)
    finally:
        receiver.close()
    listed = api.get("/api/v1/webhook/").json()
    assert listed["url"] == receiver.url
    assert [a["status_code"] for a in listed["deliveries"][0]["attempts"]] == [500, 200]
    from django.test import Client

    page = Client()
    page.force_login(member)
    html = page.get("/reviews/webhooks/").content.decode()
    assert "HTTP 500" in html and "HTTP 200" in html and "Delivered" in html
    assert "not now" not in html  # what the receiver answered is never shown


def test_a_webhook_url_must_be_http(api) -> None:
    response = api.put(
        "/api/v1/webhook/", {"url": "file:///etc/passwd"}, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_field"
