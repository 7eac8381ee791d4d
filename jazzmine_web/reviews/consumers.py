"""The live review queue: one socket per open queue page, joined to each of the user's teams."""

from __future__ import annotations

from typing import Any, TypedDict
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.template.loader import render_to_string

from ..studio.live import connecting_user
from ..teams.selectors import team_ids_with_role
from . import selectors
from .live import queue_group
from .views import queue_filters


class SubmissionPayload(TypedDict):
    """What a queue page receives when a submission changes."""

    type: str  # "submission"
    id: str
    status: str
    in_queue: bool  # whether the row belongs in this page's filtered queue
    html: str  # the row, rendered by the same partial as the first page load
    count: int  # the navigation badge: submissions waiting for this user's decision


class CountPayload(TypedDict):
    type: str  # "count"
    count: int


class ReviewQueueConsumer(AsyncJsonWebsocketConsumer):
    """Push queue rows as submissions arrive and are decided; `?sandbox=&age=` as on the page.

    `?badge=1` is the navigation badge of any page: counts only, no rows rendered.
    """

    async def connect(self) -> None:
        user = await connecting_user(self)
        if user is None:
            return
        query = {k: v[0] for k, v in parse_qs(self.scope.get("query_string", b"").decode()).items()}
        self.filters = queue_filters(query)
        self.badge_only = query.get("badge") == "1"
        self.user = user
        team_ids = await database_sync_to_async(team_ids_with_role)(user=user)
        self.groups_joined = [queue_group(team_id) for team_id in team_ids]
        for group in self.groups_joined:
            await self.channel_layer.group_add(group, self.channel_name)
        await self.accept()
        await self.send_count()

    async def send_count(self) -> None:
        """Send how many submissions wait for this user's decision."""
        count = await database_sync_to_async(selectors.pending_review_count)(self.user)
        await self.send_json(CountPayload(type="count", count=count))

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "groups_joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def queue_changed(self, message: dict[str, Any]) -> None:
        """Send the changed submission's row, rendered for this user and this page's filters."""
        if self.badge_only:
            await self.send_count()
            return
        payload = await database_sync_to_async(_row_payload)(
            self.user, message["submission_id"], self.filters
        )
        if payload is not None:
            await self.send_json(payload)


def _row_payload(
    user: Any, submission_id: str, filters: dict[str, Any]
) -> SubmissionPayload | None:
    submission = selectors.submission_for_user(user, submission_id)
    if submission is None:
        return None
    in_queue = selectors.review_queue(user, **filters).filter(pk=submission.pk).exists()
    html = render_to_string("reviews/queue.html#queue-row", {"s": submission}) if in_queue else ""
    return SubmissionPayload(
        type="submission",
        id=str(submission.pk),
        status=submission.status,
        in_queue=in_queue,
        html=html,
        count=selectors.pending_review_count(user),
    )
