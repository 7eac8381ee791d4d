"""The live review queue: one socket per open page, joined to each of the user's teams.

The queue page and the review page follow it with htmx's ws extension: each change sends the
partials the page itself was rendered with, out of band. `?badge=1` is the navigation badge of
every other page (`static/studio/review-badge.js`): counts only, as JSON.
"""

from __future__ import annotations

import json
from typing import Any, TypedDict
from urllib.parse import parse_qs
from uuid import UUID

from channels.db import database_sync_to_async
from django.template.loader import render_to_string

from ..studio.live import connecting_user
from ..studio.session_bound import SessionBoundWebsocketConsumer
from ..teams.live import teams_group
from ..teams.selectors import team_ids_with_role
from . import selectors
from .live import queue_group
from .views import queue_filters

CLOSE_NOT_FOUND = 4404


class CountPayload(TypedDict):
    """What the badge socket of any page receives."""

    type: str  # "count"
    count: int


class ReviewQueueConsumer(SessionBoundWebsocketConsumer):
    """Send the queue (`?sandbox=&age=` as on the page), one review (`?submission=`), or counts."""

    async def connect(self) -> None:
        user = await connecting_user(self)
        if user is None:
            return
        query = {k: v[0] for k, v in parse_qs(self.scope.get("query_string", b"").decode()).items()}
        self.filters = queue_filters(query)
        self.badge_only = query.get("badge") == "1"
        self.submission_id = _uuid(query.get("submission"))
        if query.get("submission") and self.submission_id is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        self.user = user
        self.shown: set[Any] = set()  # the rows this page has: a row not among them arrived
        self.groups_joined: set[str] = set()
        await self._groups_follow_teams()
        await self.accept()
        # Joined first, then read: what the page missed while it was away arrives now.
        await self.send_state(changed=None)

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "groups_joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def queue_changed(self, message: dict[str, Any]) -> None:
        """Send what one changed submission changes on this page."""
        # The user's teams as they are now: a team they left is heard no more after this
        # message (whose frame takes its rows off the page), not for as long as the page stays
        # (`teams_changed` is told at once; this holds if that message was lost).
        await self._groups_follow_teams()
        await self.send_state(changed=message["submission_id"])

    async def teams_changed(self, message: dict[str, Any]) -> None:
        """Follow the user's teams as a membership changed: a team joined is heard at once."""
        await self._groups_follow_teams()
        await self.send_state(changed=None)

    async def _groups_follow_teams(self) -> None:
        """Be in the queue group of each of the user's teams now, and of no other."""
        team_ids = await database_sync_to_async(team_ids_with_role)(user=self.user)
        wanted = {teams_group(self.user.pk), *(queue_group(team_id) for team_id in team_ids)}
        # Noted one at a time: a layer failing halfway leaves no joined group unknown to
        # `disconnect`.
        for group in self.groups_joined - wanted:
            await self.channel_layer.group_discard(group, self.channel_name)
            self.groups_joined.discard(group)
        for group in wanted - self.groups_joined:
            self.groups_joined.add(group)
            await self.channel_layer.group_add(group, self.channel_name)

    async def send_state(self, *, changed: str | None) -> None:
        if self.badge_only:
            count = await database_sync_to_async(selectors.pending_review_count)(self.user)
            await self.send(text_data=json.dumps(CountPayload(type="count", count=count)))
            return
        if self.submission_id is not None:
            if changed is not None and changed != self.submission_id:
                html = await database_sync_to_async(_badge_html)(self.user)
            else:
                html = await database_sync_to_async(_review_html)(self.user, self.submission_id)
        else:
            html, self.shown = await database_sync_to_async(_queue_html)(
                self.user, self.filters, self.shown if changed is not None else None
            )
        await self.send(text_data=html)


def _queue_html(user: Any, filters: dict[str, Any], shown: set[Any] | None) -> tuple[str, set[Any]]:
    """Return the queue's table, count and badge; rows not in `shown` are marked as arrived."""
    submissions = list(selectors.review_queue(user, **filters))
    ids = {s.pk for s in submissions}
    html = render_to_string(
        "reviews/queue.html#queue-update",
        {
            "submissions": submissions,
            "filters": filters,
            "arrived": set() if shown is None else ids - shown,
            "pending_count": selectors.pending_review_count(user),
            "viewer_id": user.pk,
        },
    )
    return html, ids


def _badge_html(user: Any) -> str:
    return render_to_string(
        "reviews/_badge.html", {"count": selectors.pending_review_count(user), "oob": True}
    )


def _review_html(user: Any, submission_id: str) -> str:
    """Return the badge, and a trigger that reloads the decision panel if its status is old."""
    submission = selectors.submission_for_user(user, submission_id)
    html = _badge_html(user)
    if submission is not None:
        html += render_to_string(
            "reviews/review.html#decision-refresh", {"submission": submission, "oob": True}
        )
    return html


def _uuid(value: str | None) -> str | None:
    try:
        return str(UUID(value)) if value else None
    except ValueError:
        return None
