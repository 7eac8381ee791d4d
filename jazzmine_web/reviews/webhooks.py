"""Webhooks per API token: signed JSON bodies, each delivery retried with exponential backoff.

A webhook speaks for its token: it is sent only while the token still authenticates (not
revoked, its user active) and its user may still see the submission's sandbox, checked when a
delivery is queued and again before each attempt (a delivery queued before the token lost that
is cancelled, saying why, never sent). Revoking a token deactivates its webhook.

A webhook URL makes this server send requests where an agent says, so it is an outbound URL
(`jazzmine.net`): refused when it leads to an internal address, at save time and again on the
address each delivery connects to. What a receiver answers is never stored or shown, only its
status code: the attempts page must not become a way to read internal services.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import logging
import secrets
import time
from typing import Any
from urllib.parse import urlsplit

import httpx
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.dispatch import receiver
from django.utils import timezone

from jazzmine.net import (
    OutboundHostNotPublic,
    OutboundURLRefused,
    outbound_client,
    refusal_in,
    url_check,
)

from ..catalog.crypto import decrypt, encrypt
from ..catalog.selectors import sandbox_for_user
from ..studio.enqueue import task_send_after_commit
from ..studio.outbound import webhook_policy
from ..teams.models import ApiToken, RevokeReason
from ..teams.services import api_token_ended_why
from ..teams.signals import api_token_revoked
from .models import DeliveryStatus, Submission, WebhookAttempt, WebhookDelivery, WebhookEndpoint
from .selectors import submission_state
from .services import SubmissionInvalid
from .signals import submission_event

logger = logging.getLogger(__name__)

SECRET_PREFIX = "whsec_"
SIGNATURE_HEADER = "X-Jazzmine-Signature"
# How long past its HTTP timeout an attempt stays claimed (a worker killed mid-attempt
# releases its delivery after this).
CLAIM_GRACE_SECONDS = 30.0


def webhook_signature(*, secret: str, timestamp: int, body: bytes) -> str:
    """Return the signature header value: `t=<unix time>,v1=<hex HMAC-SHA256 of "t.body">`."""
    signed = str(timestamp).encode() + b"." + body
    digest = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def webhook_set(*, token: ApiToken, url: object) -> tuple[WebhookEndpoint, str]:
    """Point a token's webhook at a URL with a fresh signing secret, returned once."""
    if token.revoked_at is not None:
        # Its webhook hears nothing more (`webhook_refusal`); set again, it would read active.
        raise SubmissionInvalid(
            "invalid_field", "This token was revoked: its webhook can only be cleared."
        )
    ended = api_token_ended_why(
        mac=token.password_mac, password_hash=token.user.password, user_active=token.user.is_active
    )
    if ended:  # not revoked yet (the sweep will), and no longer opening the API either
        raise SubmissionInvalid(
            "invalid_field", f"This token has ended ({_ENDED[ended]}): it can have no webhook."
        )
    if url is not None and not isinstance(url, str):
        raise SubmissionInvalid("invalid_field", "'url' must be a string: an http(s) URL.")
    if not isinstance(url, str) or not url.strip():
        raise SubmissionInvalid("missing_field", "'url' is required.")
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:  # an unbalanced `[` or `]` in the host
        raise SubmissionInvalid("invalid_field", "'url' cannot be parsed as a URL.") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc or len(url) > 500:
        raise SubmissionInvalid("invalid_field", "'url' must be an http(s) URL.")
    try:
        url_check(url, policy=webhook_policy())
    except OutboundURLRefused as exc:
        hint = (
            " (An operator may allow a host that is not public with "
            "JAZZMINE_WEBHOOK_ALLOWED_HOSTS.)"
            if isinstance(exc, OutboundHostNotPublic)
            else ""
        )
        raise SubmissionInvalid("invalid_field", f"'url' is refused. {exc}{hint}") from None
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    endpoint, _ = WebhookEndpoint.objects.update_or_create(
        api_token=token,
        defaults={"url": url, "secret_ciphertext": encrypt(secret), "active": True},
    )
    return endpoint, secret


def webhook_clear(*, token: ApiToken) -> bool:
    """Remove a token's webhook; tell whether it had one."""
    deleted, _ = WebhookEndpoint.objects.filter(api_token=token).delete()
    return deleted > 0


# Why a token nobody revoked no longer speaks (`api_token_ended_why`), as a delivery says it.
_ENDED = {
    RevokeReason.DEACTIVATED: "the token's user was deactivated",
    RevokeReason.UNBOUND: "its API token was made under a password that has changed since",
}


def webhook_refusal(*, endpoint: WebhookEndpoint, submission: Submission | None) -> str:
    """Return why this endpoint may not hear of this submission now, or "" when it may.

    The same conditions as a request made with the token (`teams.auth`), plus what its user
    may see: a webhook is the token speaking, so it must stop when the token could not ask.
    """
    token = endpoint.api_token
    if not endpoint.active:
        return "the webhook was deactivated"
    if token.revoked_at is not None:
        return "its API token was revoked"
    # Ended where nothing revoked it (a bulk update): it no longer authenticates
    # (`teams.auth`), so it no longer speaks either.
    ended = api_token_ended_why(
        mac=token.password_mac, password_hash=token.user.password, user_active=token.user.is_active
    )
    if ended:
        return _ENDED[ended]
    if submission is not None and sandbox_for_user(token.user, submission.sandbox_id) is None:
        return "the token's user may no longer see the submission's sandbox"
    return ""


@receiver(api_token_revoked, dispatch_uid="reviews.webhooks.token_revoked")
def _on_api_token_revoked(*, token_id: int, **_kwargs: Any) -> None:
    """Deactivate a revoked token's webhook and cancel what it still had to send."""
    WebhookEndpoint.objects.filter(api_token_id=token_id).update(active=False)
    # Pending ones not in flight are cancelled now (an attempt under way checked first and
    # sends at most that once); any other is cancelled by its next attempt's own check.
    now = timezone.now()
    WebhookDelivery.objects.filter(
        endpoint__api_token_id=token_id, status=DeliveryStatus.PENDING
    ).filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)).update(
        status=DeliveryStatus.CANCELLED,
        cancel_reason="its API token was revoked",
        next_attempt_at=None,
        claimed_until=None,
    )


@receiver(submission_event, dispatch_uid="reviews.webhooks.submission_event")
def _on_submission_event(*, submission_id: Any, event: str, **_kwargs: Any) -> None:
    webhook_enqueue(submission_id=submission_id, event=event)


def webhook_enqueue(*, submission_id: Any, event: str) -> WebhookDelivery | None:
    """Queue one event for the webhook of the token that made a submission, if it has one."""
    submission = (
        Submission.objects.select_related(
            "sandbox", "sandbox__team", "api_token", "decided_by", "run", "previous"
        )
        .filter(pk=submission_id)
        .first()
    )
    if submission is None or submission.api_token_id is None:
        return None
    endpoint = (
        WebhookEndpoint.objects.select_related("api_token", "api_token__user")
        .filter(api_token_id=submission.api_token_id, active=True)
        .first()
    )
    if endpoint is None:
        return None
    refusal = webhook_refusal(endpoint=endpoint, submission=submission)
    if refusal:
        # Nothing is queued: the body would carry the submission's state (its run included)
        # to a URL chosen by someone who may no longer read it.
        logger.info(
            "webhook of token %s not queued for %s: %s", endpoint.api_token_id, event, refusal
        )
        return None
    with transaction.atomic():
        delivery = WebhookDelivery.objects.create(
            endpoint=endpoint,
            submission=submission,
            event=event,
            url=endpoint.url,
            body="",
            next_attempt_at=timezone.now(),
        )
        payload = {
            "event": event,
            "delivery_id": delivery.pk,
            "created_at": delivery.created_at.isoformat(),
            "submission": submission_state(submission),
        }
        delivery.body = json.dumps(payload, sort_keys=True, default=str)
        delivery.save(update_fields=["body"])
    task_send_after_commit("reviews.webhook_deliver", delivery.pk)
    return delivery


def backoff_seconds(attempt_count: int) -> float:
    """Return the wait before the next try after `attempt_count` failed ones (doubling)."""
    return settings.JAZZMINE_WEBHOOK_BACKOFF_SECONDS * (2 ** max(0, attempt_count - 1))


def webhook_delivery_attempt(
    *, delivery_id: int, client: httpx.Client | None = None
) -> float | None:
    """Make one HTTP attempt of a delivery; return seconds until the next one, or None when done.

    The attempt is claimed first: of several workers holding a message for one delivery (a
    retry and a sweep, say), one sends, and only once its backoff has passed. The others drop
    their message: the worker that made the last attempt has scheduled the next one, and the
    sweep picks up a delivery whose message was lost.
    """
    timeout = settings.JAZZMINE_WEBHOOK_TIMEOUT_SECONDS
    now = timezone.now()
    claimed = (
        WebhookDelivery.objects.filter(
            pk=delivery_id, status=DeliveryStatus.PENDING, next_attempt_at__lte=now
        )
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        .update(claimed_until=now + datetime.timedelta(seconds=timeout + CLAIM_GRACE_SECONDS))
    )
    if not claimed:
        return None
    delivery = (
        WebhookDelivery.objects.select_related(
            "endpoint", "endpoint__api_token", "endpoint__api_token__user", "submission"
        )
        .filter(pk=delivery_id)
        .first()
    )
    if delivery is None:
        return None
    # Checked again on every attempt: the token may have been revoked (or its user
    # deactivated or taken out of the team) since the delivery was queued.
    refusal = webhook_refusal(endpoint=delivery.endpoint, submission=delivery.submission)
    if not refusal and delivery.url != delivery.endpoint.url:
        # Re-pointed since it was queued: the agent left that URL (wrong, or no longer theirs)
        # and holds a new secret; the submission's state goes nowhere it no longer names.
        refusal = "the webhook was pointed at another URL since it was queued"
    if refusal:
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            status=DeliveryStatus.CANCELLED,
            cancel_reason=refusal[:200],
            next_attempt_at=None,
            claimed_until=None,
        )
        logger.info("webhook delivery %s cancelled: %s", delivery.pk, refusal)
        return None
    secret = decrypt(delivery.endpoint.secret_ciphertext)
    body = delivery.body.encode()
    number = delivery.attempt_count + 1
    timestamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "jazzmine-webhooks/1",
        "X-Jazzmine-Event": delivery.event,
        "X-Jazzmine-Delivery": str(delivery.pk),
        "X-Jazzmine-Attempt": str(number),
        SIGNATURE_HEADER: webhook_signature(secret=secret, timestamp=timestamp, body=body),
    }
    started = timezone.now()
    clock = time.perf_counter()
    status_code: int | None = None
    error = ""
    max_attempts = settings.JAZZMINE_WEBHOOK_MAX_ATTEMPTS
    own = client is None
    # Connects only to vetted addresses (checked again now: DNS may have changed since the URL
    # was saved), never follows a redirect, never goes through an env proxy. The timeout bounds
    # the whole attempt, not each read: a receiver sending its answer a byte at a time would
    # otherwise hold this worker (shared with runs and builds) for hours, and outlive the claim
    # so that a second worker sends the same delivery alongside.
    http = client or outbound_client(webhook_policy(), timeout=timeout, total_timeout=timeout)
    try:
        with http.stream("POST", delivery.url, content=body, headers=headers) as response:
            # The body is never read: only the status says whether the receiver took it.
            status_code = response.status_code
        if not 200 <= status_code < 300:
            error = f"HTTP {status_code}: {_status_sentence(status_code, number, max_attempts)}"
    except httpx.HTTPError as exc:
        refusal = refusal_in(exc)
        if refusal is not None:
            error = f"Refused: {refusal}"[:500]
        else:
            # The exception's text may quote what the receiver sent (h11 quotes a bad line):
            # only its kind is stored and shown.
            error = f"{type(exc).__name__}: {_transport_sentence(exc)}"
    finally:
        if own:
            http.close()
    duration = round((time.perf_counter() - clock) * 1000, 2)
    ok = not error
    wait = None if ok or number >= max_attempts else backoff_seconds(number)
    with transaction.atomic():
        WebhookAttempt.objects.create(
            delivery=delivery,
            number=number,
            started_at=started,
            status_code=status_code,
            error=error,
            duration_ms=duration,
        )
        changes: dict[str, Any] = {"attempt_count": number, "claimed_until": None}
        if ok:
            changes.update(
                status=DeliveryStatus.DELIVERED, delivered_at=timezone.now(), next_attempt_at=None
            )
        elif wait is None:
            changes.update(status=DeliveryStatus.FAILED, next_attempt_at=None)
        else:
            changes["next_attempt_at"] = timezone.now() + datetime.timedelta(seconds=wait)
        WebhookDelivery.objects.filter(pk=delivery.pk).update(**changes)
    if not ok:
        logger.info("webhook delivery %s attempt %d failed: %s", delivery.pk, number, error)
    return wait


def webhook_deliveries_due(
    *, now: datetime.datetime | None = None, overdue_seconds: float = 0.0
) -> list[int]:
    """Return the ids of pending, unclaimed deliveries due for at least `overdue_seconds`."""
    now = now or timezone.now()
    return list(
        WebhookDelivery.objects.filter(
            status=DeliveryStatus.PENDING,
            next_attempt_at__lte=now - datetime.timedelta(seconds=overdue_seconds),
        )
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        .values_list("pk", flat=True)
    )


def _transport_sentence(exc: httpx.HTTPError) -> str:
    """Say in a fixed sentence how the exchange failed, quoting nothing of the receiver's."""
    for kind, sentence in _TRANSPORT_SENTENCES:
        if isinstance(exc, kind):
            return sentence
    return "the request failed"


_TRANSPORT_SENTENCES: tuple[tuple[type[httpx.HTTPError], str], ...] = (
    (httpx.ConnectTimeout, "the receiver did not accept the connection in time"),
    (httpx.ConnectError, "could not connect to the receiver"),
    (httpx.TimeoutException, "the receiver did not answer in time"),
    (httpx.RemoteProtocolError, "the receiver did not answer in HTTP"),
    (httpx.ProtocolError, "the exchange broke off"),
    (httpx.NetworkError, "the connection failed"),
)


def _status_sentence(status: int, number: int, max_attempts: int) -> str:
    if 300 <= status < 400:
        return "the receiver redirected; redirects are not followed."
    if status >= 500 and number >= max_attempts:
        return f"the receiver failed; that was the last of {max_attempts} attempts."
    if status >= 500:
        return "the receiver failed; the delivery is retried."
    return "the receiver refused the delivery."
