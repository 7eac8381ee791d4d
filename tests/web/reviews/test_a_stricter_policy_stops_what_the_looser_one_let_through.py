"""An admin who tightens a review policy starts nothing more that nobody read.

Found by trying it: with the policy at "never", an agent queued a script that refunds an order
(behind runs that kept the worker busy); the admin then set "always"; the run started anyway,
after the change, with every tool. An agent can keep runs queued as long as it likes, so the
change has to stop what the looser policy let through and the stricter one would have shown a
person. And a retry may only answer its own person's earlier attempt: another person's
approved script made a new one read as a small retry of something already trusted.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.reviews.models import ReviewPolicy, Submission
from jazzmine_web.reviews.services import review_settings_set, submission_approve
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import api_token_create
from tests.web.helpers import teammate

from .conftest import allow_tools, set_policy, submit

pytestmark = pytest.mark.django_db(transaction=True)

REFUND = 'r = update_order_status(order_id="ORD-1001", status="refunded")\nemit_result(r)\n'
READ = 'emit_result(get_orders(status="delivered"))\n'


@pytest.fixture
def team_admin_user(team):
    return teammate(team, Role.ADMIN, username="root_admin")


def let_through(api, sandbox, body: str) -> Run:
    """Submit as the agent; the policy lets it through: its run waits queued (the session's
    worker is stopped, as one busy with other runs would leave it)."""
    answer = submit(api, sandbox, body=body).json()
    assert answer["status"] == "auto_approved", answer
    run = Submission.objects.get(pk=answer["id"]).run
    assert run.status == RunStatus.QUEUED
    return run


def ended(run: Run) -> tuple[str, str]:
    run.refresh_from_db()
    return run.status, run.cancel_reason


@pytest.mark.parametrize(
    ("before", "after", "body", "stopped"),
    [
        (ReviewPolicy.NEVER, ReviewPolicy.ALWAYS, REFUND, True),
        (ReviewPolicy.NEVER, ReviewPolicy.UNLISTED_TOOLS, REFUND, True),
        (ReviewPolicy.UNLISTED_TOOLS, ReviewPolicy.ALWAYS, READ, True),
        # Let through calling only always-allowed tools: still what the policy lets through.
        (ReviewPolicy.UNLISTED_TOOLS, ReviewPolicy.UNLISTED_TOOLS, READ, False),
        (ReviewPolicy.UNLISTED_TOOLS, ReviewPolicy.NEVER, READ, False),  # looser: nothing
    ],
)  # fmt: skip
def test_a_stricter_policy_stops_the_runs_it_would_have_had_read(
    api, ecommerce, team_admin_user, no_worker, before, after, body, stopped
):
    set_policy(ecommerce, before)
    allow_tools(ecommerce, "get_orders")
    run = let_through(api, ecommerce, body)
    review_settings_set(sandbox=ecommerce, user=team_admin_user, policy=after, timeout_seconds=60)
    status, reason = ended(run)
    if stopped:
        assert status == RunStatus.FAILED and run.outcome == "cancelled"
        assert f"review policy became '{after.label}'" in reason
        assert "submit it again" in reason
    else:
        assert (status, reason) == (RunStatus.QUEUED, "")


def test_the_policy_page_stops_them_too_and_leaves_a_persons_runs(
    api, ecommerce, team_admin_user, member, reviewer, no_worker
):
    set_policy(ecommerce, ReviewPolicy.NEVER)
    unread = let_through(api, ecommerce, REFUND)
    own = run_create(sandbox=ecommerce, user=member, body=REFUND)  # a member's own Run
    set_policy(ecommerce, ReviewPolicy.ALWAYS)
    pending = Submission.objects.get(pk=submit(api, ecommerce, body=REFUND).json()["id"])
    approved = submission_approve(submission=pending, user=reviewer).run
    set_policy(ecommerce, ReviewPolicy.NEVER)

    admin = Client()
    admin.force_login(team_admin_user)
    for _ in range(2):  # saved twice: the second finds nothing more to stop
        response = admin.post(
            f"/reviews/sandboxes/{ecommerce.pk}/policy/",
            {"policy": ReviewPolicy.ALWAYS, "timeout_seconds": 3600},
        )
        assert response.status_code == 302
    assert ended(unread)[0] == RunStatus.FAILED
    assert ended(own) == (RunStatus.QUEUED, "")  # a person ran it: no policy reads it
    assert ended(approved) == (RunStatus.QUEUED, "")  # a reviewer read it


def test_a_retry_answers_only_its_own_persons_attempt(api, ecommerce, team, member):
    set_policy(ecommerce, ReviewPolicy.ALWAYS)
    mine = submit(api, ecommerce, body=READ).json()
    other = teammate(team, Role.MEMBER, username="mallory")
    theirs = Client(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=other, name='m').raw}")
    refused = submit(theirs, ecommerce, body=REFUND, attempt=2, previous=mine["id"])
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "previous_not_found"
    # Its own earlier attempt, and one its person sent with another token, still count.
    again = submit(api, ecommerce, body=READ, attempt=2, previous=mine["id"]).json()
    assert again["previous_id"] == mine["id"]
    second_agent = Client(
        HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=member, name='n').raw}"
    )
    third = submit(second_agent, ecommerce, body=READ, attempt=3, previous=again["id"])
    assert third.json()["previous_id"] == again["id"]
