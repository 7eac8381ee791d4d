"""An agent's task and name reach the reviewer with every character a page hides made visible.

A reviewer decides on the task as much as on the script. Scripts holding a bidi override or a
control character are refused (`legible`); a task cannot be, it is prose. Shown as it was, a
right-to-left override drew "Refund order 1 of $500.00" as something else; now the override is
written as its escape, on the review page, in the queue and on the run's page, while the API
answers the task as it was sent.
"""

from __future__ import annotations

import pytest

from .conftest import set_policy, submit

pytestmark = pytest.mark.django_db

HIDDEN = ["\u202e", "\u2066", "\u200b", "\x1b", "\u061c", "\ufeff", "\x85"]


@pytest.fixture
def pending(api, ecommerce) -> dict:
    set_policy(ecommerce)
    task = "Refund order 1 of $\u202e00.005\u2066 to U-1\u200b\x1b[2K, then mail\x85 it\ufeff."
    state = submit(api, ecommerce, task=task).json()
    assert state["status"] == "pending", state
    return state


def test_the_review_page_and_the_queue_show_the_task_escaped(pending, reviewer_client) -> None:
    for url in (f"/reviews/{pending['id']}/", "/reviews/", f"/reviews/{pending['id']}/"):
        html = reviewer_client.get(url).content.decode()
        assert not [c for c in HIDDEN if c in html], url
        assert "$\\u202e00.005\\u2066" in html or "$\\u202e00.0" in html, url


def test_the_api_answers_the_task_as_it_was_sent(api, pending) -> None:
    state = api.get(f"/api/v1/submissions/{pending['id']}/").json()
    assert "\u202e" in state["task"] and "\x1b" in state["task"]


def test_a_withdrawal_reason_and_a_token_name_are_shown_escaped_in_the_audit(
    member, ecommerce, reviewer_client
) -> None:
    # The decided panel escaped a withdrawal's reason; the audit trail (on the review page
    # and the team's audit page) drew "dup \u202eKO devorppA\u202c" as "dup Approved OK".
    from django.test import Client

    from jazzmine_web.teams.services import api_token_create

    set_policy(ecommerce)
    issued = api_token_create(user=member, name="bot \u202eweiver\u202c")
    agent = Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}")
    state = submit(agent, ecommerce).json()
    reason = "dup \u202eKO devorppA\u202c by rev2"
    withdrawn = agent.post(
        f"/api/v1/submissions/{state['id']}/withdraw/",
        {"reason": reason},
        content_type="application/json",
    )
    assert withdrawn.status_code == 200, withdrawn.content
    for url in (f"/reviews/{state['id']}/", "/reviews/audit/"):
        html = reviewer_client.get(url).content.decode()
        assert "\u202e" not in html and "\u202c" not in html, url
        assert "KO devorppA\\u202c" in html, url
        assert "bot \\u202eweiver\\u202c" in html, url


def test_the_previous_attempts_failure_is_shown_escaped(api, ecommerce, reviewer) -> None:
    from django.test import Client

    from jazzmine_web.reviews.models import Submission
    from jazzmine_web.reviews.services import submission_reject

    set_policy(ecommerce)
    first = submit(api, ecommerce).json()
    submission_reject(
        submission=Submission.objects.get(pk=first["id"]),
        user=reviewer,
        feedback="order \u202eDELIVERED\u202c ok \u200b\u200b zero-width",
    )
    second = submit(api, ecommerce, previous=first["id"], attempt=2).json()
    client = Client()
    client.force_login(reviewer)
    html = client.get(f"/reviews/{second['id']}/").content.decode()
    assert "Its failure" in html
    assert not [c for c in ("\u202e", "\u202c", "\u200b") if c in html]
    assert "order \\u202eDELIVERED\\u202c ok \\u200b\\u200b zero-width" in html
