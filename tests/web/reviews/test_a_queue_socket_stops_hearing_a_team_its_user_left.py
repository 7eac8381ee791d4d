"""A review queue's socket hears a team's changes only while its user is in that team.

The socket joins the queue group of each of its user's teams as it opens. Someone taken out of
a team gets one more frame at the team's next change (the queue as it now is for them: the
team's rows leave their page), and then nothing: before, the socket stayed in the team's group
for as long as it was open and sent a frame for every change of that team's queue, telling an
outsider when its agents submit and its reviewers decide.
"""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from jazzmine_web.asgi import application
from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_create
from jazzmine_web.teams.services import membership_remove
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
    ws = await open_socket(reviewer, page)
    try:
        await database_sync_to_async(membership_remove)(team=team, user=reviewer)
        first = await agent_submits(ecommerce, member, issued.token)
        cleared = await ws.receive_from(timeout=5)  # the team's rows leave the page
        await agent_submits(ecommerce, member, issued.token)
        heard_again = not await ws.receive_nothing(timeout=1)
    finally:
        await ws.disconnect()
    assert str(first.pk) not in cleared and "Total" not in cleared
    if "badge=1" in page:
        assert json.loads(cleared) == {"type": "count", "count": 0}
    assert not heard_again, "the socket still hears every change of a team its user left"
