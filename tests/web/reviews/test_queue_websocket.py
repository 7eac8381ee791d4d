from __future__ import annotations

import asyncio
import json
import re

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from jazzmine_web.asgi import application
from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_create, submission_reject
from jazzmine_web.teams.services import membership_remove, membership_set, team_create
from tests.web.helpers import ws_headers

from .conftest import BODY

pytestmark = pytest.mark.django_db(transaction=True)

headers_for = database_sync_to_async(ws_headers)


@database_sync_to_async
def agent_submits(sandbox, user, token=None) -> Submission:
    return submission_create(
        sandbox=sandbox, user=user, token=token, task="Total delivered", body=BODY
    )


@database_sync_to_async
def reviewer_rejects(submission: Submission, reviewer) -> None:
    submission_reject(submission=submission, user=reviewer, feedback="no")


async def connect(user, path: str = "/ws/reviews/queue/") -> WebsocketCommunicator:
    ws = WebsocketCommunicator(application, path, headers=await headers_for(user))
    connected, _ = await ws.connect()
    assert connected
    first = await ws.receive_from(timeout=5)  # the queue as it is now: a reconnect misses nothing
    assert '<table id="queue-table"' in first and 'hx-swap-oob="true"' in first
    return ws


def rows(html: str) -> list[str]:
    """Return the submission ids of the queue rows a fragment shows, in order."""
    return re.findall(r'<tr id="submission-([0-9a-f-]+)"', html)


def badge(html: str) -> int:
    found = re.search(r'id="review-badge" data-review-badge [^>]*hx-swap-oob="true">(\d+)<', html)
    assert found, html
    return int(found[1])


def count(html: str) -> int:
    found = re.search(r'<span id="queue-count" data-queue-count hx-swap-oob="true">(\d+)<', html)
    assert found, html
    return int(found[1])


async def test_a_new_submission_arrives_as_a_rendered_row(ecommerce, member, reviewer, issued):
    ws = await connect(reviewer)
    try:
        submission = await agent_submits(ecommerce, member, issued.token)
        html = await ws.receive_from(timeout=5)
    finally:
        await ws.disconnect()
    assert rows(html) == [str(submission.pk)]
    assert f'<tr id="submission-{submission.pk}" class="queue-row arrived"' in html
    assert "agent ci-bot (ada)" in html
    assert '<tr class="queue-empty" hidden>' in html
    assert count(html) == 1 and badge(html) == 1


async def test_a_decided_submission_leaves_the_queue(ecommerce, member, reviewer):
    submission = await agent_submits(ecommerce, member)
    ws = await connect(reviewer)
    try:
        await reviewer_rejects(submission, reviewer)
        html = await ws.receive_from(timeout=5)
    finally:
        await ws.disconnect()
    assert rows(html) == [] and '<tr class="queue-empty">' in html
    assert count(html) == 0 and badge(html) == 0


async def test_rows_already_shown_are_not_marked_as_arrived(ecommerce, member, reviewer):
    first = await agent_submits(ecommerce, member)
    ws = await connect(reviewer)
    try:
        second = await agent_submits(ecommerce, member)
        html = await ws.receive_from(timeout=5)
    finally:
        await ws.disconnect()
    assert rows(html) == [str(first.pk), str(second.pk)]  # oldest first
    assert f'<tr id="submission-{first.pk}" class="queue-row"' in html
    assert f'<tr id="submission-{second.pk}" class="queue-row arrived"' in html


async def test_the_sandbox_filter_holds_for_live_rows(ecommerce, member, reviewer):
    ws = await connect(reviewer, f"/ws/reviews/queue/?sandbox={ecommerce.pk + 999}")
    try:
        await agent_submits(ecommerce, member)
        html = await ws.receive_from(timeout=5)
    finally:
        await ws.disconnect()
    assert rows(html) == [] and count(html) == 0 and badge(html) == 1


async def test_the_review_page_hears_of_its_submission_and_the_badge(ecommerce, member, reviewer):
    submission = await agent_submits(ecommerce, member)
    ws = WebsocketCommunicator(
        application,
        f"/ws/reviews/queue/?submission={submission.pk}",
        headers=await headers_for(reviewer),
    )
    connected, _ = await ws.connect()
    assert connected
    try:
        first = await ws.receive_from(timeout=5)
        await agent_submits(ecommerce, member)
        other = await ws.receive_from(timeout=5)
        await reviewer_rejects(submission, reviewer)
        decided = await ws.receive_from(timeout=5)
    finally:
        await ws.disconnect()
    assert badge(first) == 1 and 'data-status="pending" hx-get=' in first
    assert badge(other) == 2 and "decision-refresh" not in other
    assert badge(decided) == 1 and 'data-status="rejected" hx-get=' in decided
    assert f'hx-get="/reviews/{submission.pk}/"' in decided and "queue-table" not in decided


async def test_another_team_hears_nothing(ecommerce, member, django_user_model):
    @database_sync_to_async
    def stranger():
        other = team_create(name="Other", slug="other")
        eve = django_user_model.objects.create_user(username="eve", password="x" * 12)
        membership_set(team=other, user=eve, role="admin")
        return eve

    ws = await connect(await stranger())
    try:
        await agent_submits(ecommerce, member)
        assert await ws.receive_nothing(timeout=0.5)
    finally:
        await ws.disconnect()


async def test_anonymous_sockets_are_refused():
    ws = WebsocketCommunicator(
        application, "/ws/reviews/queue/", headers=[(b"origin", b"http://localhost")]
    )
    connected, code = await ws.connect()
    assert not connected and code == 4403
    await ws.disconnect()


async def test_two_queues_see_the_same_arrival(ecommerce, member, reviewer):
    first, second = await connect(reviewer), await connect(member)
    try:
        submission = await agent_submits(ecommerce, member)
        a, b = await asyncio.gather(first.receive_from(timeout=5), second.receive_from(timeout=5))
    finally:
        await first.disconnect()
        await second.disconnect()
    assert rows(a) == rows(b) == [str(submission.pk)]
    assert badge(a) == 1 and badge(b) == 0  # only reviewers count what they may decide


@pytest.mark.parametrize("page", ["/ws/reviews/queue/", "/ws/reviews/queue/?badge=1"])
async def test_a_reviewer_taken_out_of_the_team_receives_none_of_its_submissions(
    ecommerce, member, reviewer, issued, team, page
):
    # The socket stays joined to the team's group, but every message reads the queue again
    # with the access its user has now: nothing of the team reaches someone who left it.
    ws = WebsocketCommunicator(application, page, headers=await headers_for(reviewer))
    assert (await ws.connect())[0]
    await ws.receive_from(timeout=5)
    try:
        await database_sync_to_async(membership_remove)(team=team, user=reviewer)
        submission = await agent_submits(ecommerce, member, issued.token)
        html = await ws.receive_from(timeout=5)
    finally:
        await ws.disconnect()
    assert str(submission.pk) not in html and "Total delivered" not in html
    assert rows(html) == []
    assert (count(html) if "queue-count" in html else json.loads(html)["count"]) == 0
