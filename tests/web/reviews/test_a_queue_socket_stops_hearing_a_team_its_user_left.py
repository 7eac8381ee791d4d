"""A review queue's socket hears a team's changes only while its user is in that team.

The socket joins the queue group of each of its user's teams as it opens, and follows the
user's teams as a membership changes (`teams.live`): someone taken out of a team gets one more
frame (the queue as it now is for them: the team's rows leave their page), and then nothing.
Before, the socket stayed in the team's group for as long as it was open and sent a frame for
every change of that team's queue, telling an outsider when its agents submit and its
reviewers decide; and someone added back heard nothing of the team until another team's
message woke the socket.
"""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from jazzmine_web.asgi import application
from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_create
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import membership_remove, membership_set
from tests.web.helpers import ws_headers

from .conftest import BODY

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def agent_submits(sandbox, user, token) -> Submission:
    return submission_create(sandbox=sandbox, user=user, token=token, task="Total", body=BODY)


async def open_socket(user, page: str) -> WebsocketCommunicator:
    headers = await database_sync_to_async(ws_headers)(user)
    ws = WebsocketCommunicator(application, page, headers=headers)
    assert (await ws.connect(timeout=5))[0]
    await ws.receive_from(timeout=5)  # the queue (or the count) as it is now
    return ws


@pytest.mark.parametrize("page", ["/ws/reviews/queue/", "/ws/reviews/queue/?badge=1"])
async def test_a_reviewer_who_left_hears_no_more_of_the_teams_changes(
    ecommerce, member, reviewer, issued, team, page
):
    waiting = await agent_submits(ecommerce, member, issued.token)
    ws = await open_socket(reviewer, page)
    try:
        await database_sync_to_async(membership_remove)(team=team, user=reviewer)
        cleared = await ws.receive_from(timeout=5)  # the team's rows leave the page
        await agent_submits(ecommerce, member, issued.token)
        await agent_submits(ecommerce, member, issued.token)
        heard_again = not await ws.receive_nothing(timeout=1)
    finally:
        await ws.disconnect()
    assert str(waiting.pk) not in cleared and "Total" not in cleared
    if "badge=1" in page:
        assert json.loads(cleared) == {"type": "count", "count": 0}
    assert not heard_again, "the socket still hears every change of a team its user left"


@pytest.mark.parametrize("page", ["/ws/reviews/queue/", "/ws/reviews/queue/?badge=1"])
async def test_a_page_follows_its_user_out_of_a_team_and_back_at_once(
    ecommerce, member, reviewer, issued, team, page
):
    """Told as the membership changes, not at some team's next change (`teams.live`)."""
    waiting = await agent_submits(ecommerce, member, issued.token)
    ws = await open_socket(reviewer, page)
    try:
        await database_sync_to_async(membership_remove)(team=team, user=reviewer)
        left = await ws.receive_from(timeout=5)  # at once: no submission needed to wake it
        await database_sync_to_async(membership_set)(team=team, user=reviewer, role=Role.REVIEWER)
        back = await ws.receive_from(timeout=5)
        later = await agent_submits(ecommerce, member, issued.token)
        heard = await ws.receive_from(timeout=5)  # its groups are the team's again
    finally:
        await ws.disconnect()
    if "badge=1" in page:
        assert [json.loads(x)["count"] for x in (left, back, heard)] == [0, 1, 2]
    else:
        assert str(waiting.pk) not in left
        assert str(waiting.pk) in back
        assert str(later.pk) in heard
