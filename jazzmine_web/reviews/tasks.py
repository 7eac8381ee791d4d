"""Celery tasks for reviews: thin, each calls a service."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task

from .services import (
    submission_note_run_finished,
    submissions_expire_overdue,
    submissions_note_finished_runs,
)
from .webhooks import webhook_deliveries_due, webhook_delivery_attempt

logger = logging.getLogger(__name__)

# A due delivery is picked up by the sweep only when its own retry is this late (lost).
LOST_AFTER_SECONDS = 30.0


@shared_task(name="reviews.webhook_deliver", bind=True, max_retries=None)
def webhook_deliver(self: Any, delivery_id: int) -> None:
    """Make one attempt of a delivery; Celery retries it after the backoff the attempt sets."""
    wait = webhook_delivery_attempt(delivery_id=delivery_id)
    if wait is not None:
        raise self.retry(countdown=wait)


@shared_task(name="reviews.note_run_finished")
def submission_run_finished(submission_id: int) -> None:
    """Record that a reviewed submission's run ended (audit, webhook)."""
    submission_note_run_finished(submission_id=submission_id)


@shared_task(name="reviews.sweep")
def reviews_sweep() -> None:
    """Expire overdue submissions, note missed run ends, and resend lost deliveries."""
    submissions_expire_overdue()
    submissions_note_finished_runs()
    for delivery_id in webhook_deliveries_due(overdue_seconds=LOST_AFTER_SECONDS):
        webhook_deliver.delay(delivery_id)
