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
