"""A script sent again after a rejection reaches the next reviewer with that rejection.

An agent need not say a script is a retry (`previous`): rejected by one reviewer with "Do NOT
cancel delivered orders", the same body sent again with another task and no `previous`
reached the next reviewer with no history, who approved it, and the order was cancelled.
The review page now lists the earlier decisions on the same code in the same sandbox.
"""

from __future__ import annotations

import pytest

from jazzmine_web.catalog.services import tool_delete
from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_reject
from jazzmine_web.runs.models import code_sha256
from tests.web.helpers import migrate

from .conftest import set_policy, submit

pytestmark = pytest.mark.django_db

CANCEL = (
    'r = update_order_status(order_id="ORD-1001", status="cancelled")\nemit_result(r.message)\n'
)
FEEDBACK = "Do NOT cancel delivered orders"


def test_the_same_script_sent_again_shows_the_rejection(api, ecommerce, reviewer, reviewer_client):
    set_policy(ecommerce)
    first = submit(api, ecommerce, body=CANCEL, task="Tidy up orders").json()
    submission_reject(
        submission=Submission.objects.get(pk=first["id"]), user=reviewer, feedback=FEEDBACK
    )
    again = submit(api, ecommerce, body=CANCEL, task="Cancel the stale order").json()
    assert again["status"] == "pending" and again.get("previous") in (None, "")
    for _ in range(2):  # and after a reload
        html = reviewer_client.get(f"/reviews/{again['id']}/").content.decode()
        assert "This script was sent before" in html
        assert FEEDBACK in html and first["id"][:8] in html


def test_the_same_body_shows_the_rejection_after_the_tools_changed(
    api, ecommerce, reviewer, reviewer_client
):
    # The same body assembles to other code once the sandbox's tools change: the body's own
    # digest still finds the decision.
    set_policy(ecommerce)
    first = submit(api, ecommerce, body=CANCEL).json()
    submission_reject(
        submission=Submission.objects.get(pk=first["id"]), user=reviewer, feedback=FEEDBACK
    )
    tool_delete(tool=ecommerce.tools.get(name="get_user"))
    again = submit(api, ecommerce, body=CANCEL).json()
    assert again["status"] == "pending", again
    before, after = Submission.objects.filter(pk__in=[first["id"], again["id"]]).order_by(
        "created_at"
    )
    assert before.code_sha256 != after.code_sha256  # other code, the same body
    html = reviewer_client.get(f"/reviews/{again['id']}/").content.decode()
    assert "This script was sent before" in html and FEEDBACK in html


@pytest.mark.django_db(transaction=True)
def test_an_upgrade_gives_submissions_of_before_their_body_digest(
    api, ecommerce, reviewer, reviewer_client
):
    set_policy(ecommerce)
    first = submit(api, ecommerce, body=CANCEL).json()
    submission_reject(
        submission=Submission.objects.get(pk=first["id"]), user=reviewer, feedback=FEEDBACK
    )
    try:
        migrate(("reviews", "0012_readings_of_script_tools_without_their_description"))
    finally:
        migrate()
    assert Submission.objects.get(pk=first["id"]).body_sha256 == code_sha256(CANCEL)
    tool_delete(tool=ecommerce.tools.get(name="get_user"))
    again = submit(api, ecommerce, body=CANCEL).json()
    html = reviewer_client.get(f"/reviews/{again['id']}/").content.decode()
    assert "This script was sent before" in html and FEEDBACK in html


def test_another_script_shows_no_such_history(api, ecommerce, reviewer, reviewer_client):
    set_policy(ecommerce)
    first = submit(api, ecommerce, body=CANCEL).json()
    submission_reject(
        submission=Submission.objects.get(pk=first["id"]), user=reviewer, feedback=FEEDBACK
    )
    other = submit(api, ecommerce, body=CANCEL.replace("ORD-1001", "ORD-1002")).json()
    html = reviewer_client.get(f"/reviews/{other['id']}/").content.decode()
    assert "This script was sent before" not in html and FEEDBACK not in html
    # The first page does not list the later one either: only what came before it.
    html = reviewer_client.get(f"/reviews/{first['id']}/").content.decode()
    assert "This script was sent before" not in html
