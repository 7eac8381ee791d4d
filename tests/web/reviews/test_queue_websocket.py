from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from jazzmine_web.asgi import application
from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_create, submission_reject
from jazzmine_web.teams.services import membership_set, team_create
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
    first = await ws.receive_json_from(timeout=5)
    assert first["type"] == "count"
    return ws


async def test_a_new_submission_arrives_as_a_rendered_row(ecommerce, member, reviewer, issued):
    ws = await connect(reviewer)
    try:
        submission = await agent_submits(ecommerce, member, issued.token)
        message = await ws.receive_json_from(timeout=5)
    finally:
        await ws.disconnect()
    assert message["type"] == "submission" and message["id"] == str(submission.pk)
    assert message["in_queue"] is True and message["status"] == "pending"
    assert f'id="submission-{submission.pk}"' in message["html"]
    assert "agent ci-bot (ada)" in message["html"]
    assert message["count"] == 1


async def test_a_decided_submission_leaves_the_queue(ecommerce, member, reviewer):
    submission = await agent_submits(ecommerce, member)
    ws = await connect(reviewer)
    try:
        await reviewer_rejects(submission, reviewer)
        message = await ws.receive_json_from(timeout=5)
    finally:
        await ws.disconnect()
    assert message["id"] == str(submission.pk) and message["status"] == "rejected"
    assert message["in_queue"] is False and message["html"] == ""
    assert message["count"] == 0


async def test_the_sandbox_filter_holds_for_live_rows(ecommerce, member, reviewer):
    ws = await connect(reviewer, f"/ws/reviews/queue/?sandbox={ecommerce.pk + 999}")
    try:
        await agent_submits(ecommerce, member)
        message = await ws.receive_json_from(timeout=5)
    finally:
        await ws.disconnect()
    assert message["in_queue"] is False and message["count"] == 1


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
        a, b = await asyncio.gather(
            first.receive_json_from(timeout=5), second.receive_json_from(timeout=5)
        )
    finally:
        await first.disconnect()
        await second.disconnect()
    assert a["id"] == b["id"] == str(submission.pk)
    assert a["count"] == 1 and b["count"] == 0  # only reviewers count what they may decide
