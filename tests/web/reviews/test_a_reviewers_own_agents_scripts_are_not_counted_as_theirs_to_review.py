"""A reviewer's badge counts the scripts waiting for them, not those their own agent sent.

They may not approve what their own token sent (another reviewer must), yet the badge
"Submissions waiting for your review" went from 1 to 2 when their agent submitted, and the
queue did not say which row was theirs. The row stays in their queue, marked.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.reviews.selectors import pending_review_count
from jazzmine_web.teams.services import api_token_create

from .conftest import set_policy, submit

pytestmark = pytest.mark.django_db


def test_the_badge_leaves_out_the_reviewers_own_agents_script(api, ecommerce, reviewer):
    set_policy(ecommerce)
    submit(api, ecommerce)  # the member's agent
    assert pending_review_count(reviewer) == 1
    own = Client(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=reviewer, name='mine').raw}")
    mine = submit(own, ecommerce).json()
    assert mine["status"] == "pending", mine
    assert pending_review_count(reviewer) == 1
    browser = Client()
    browser.force_login(reviewer)
    html = browser.get("/reviews/").content.decode()
    row = html.split(f'id="submission-{mine["id"]}"', 1)[1].split("</tr>", 1)[0]
    assert "your agent" in row
    assert html.count("your agent</span>") == 1  # the member's agent's row is not marked
    fetched = browser.get(f"/reviews/{mine['id']}/row/")  # as the socket's clients fetch it
    assert fetched.status_code == 200 and "your agent" in fetched.content.decode()
