"""The tools a script calls are read again from a reviewer's edit, and approval is decided on them."""

from __future__ import annotations

import pytest

from jazzmine_web.reviews.models import AuditAction, AuditEntry, Submission

from .conftest import allow_tools, set_policy, submit

pytestmark = pytest.mark.django_db

AGENT = 'orders = get_orders(status="delivered")\nemit_result(len(orders.data["orders"]))\n'
# The edit adds a call to get_user, which is not always-allowed: it needs a person's review.
EDIT = AGENT + 'emit_result(get_user("U-1").data)\n'


@pytest.fixture
def pending(api, ecommerce):
    set_policy(ecommerce)
    allow_tools(ecommerce, "get_orders")
    state = submit(api, ecommerce, body=AGENT).json()
    assert state["status"] == "pending"
    assert [t["name"] for t in state["tools_called"]] == ["get_orders"]
    return Submission.objects.get(pk=state["id"])


def reading(client, submission, body: str) -> str:
    response = client.post(
        f"/reviews/{submission.pk}/reading/",
        {"body": body},
        headers={"HX-Request": "true", "HX-Target": "tools-panel"},
    )
    assert response.status_code == 200
    return response.content.decode()


def test_the_reading_of_an_edit_lists_the_tool_it_adds_with_the_gates_reason(
    pending, reviewer_client
) -> None:
    html = reading(reviewer_client, pending, EDIT)
    assert html.lstrip().startswith('<section class="card tools-panel" id="tools-panel"')
    assert 'data-reading="edit"' in html
    assert 'data-tool="get_user"' in html and "added by the edit" in html
    assert "no — needs review" in html
    assert "called on line 3" in html  # jazzmine.gate's reason, by body line
    # The form's list of tools seen follows, out of band, and so does the diff of the edit.
    assert 'id="tools-seen" hidden hx-swap-oob="true"' in html
    assert 'name="tools_seen" value="get_user"' in html
    # ...with the tools it shows as needing review: what an approval of this text asks about.
    assert 'name="tools_asked" value="get_user"' in html
    assert 'name="tools_asked" value="get_orders"' not in html  # shown as always allowed
    assert 'id="edit-changes" class="edit-changes" hx-swap-oob="true"' in html
    assert '+emit_result(get_user("U-1").data)' in html


def test_an_edit_that_removes_every_call_lists_none(pending, reviewer_client) -> None:
    html = reading(reviewer_client, pending, "emit_result(1)\n")
    assert "data-tool=" not in html and "It calls none of the sandbox" in html


def test_a_doubtful_edit_lists_what_it_may_call(pending, reviewer_client) -> None:
    html = reading(reviewer_client, pending, 'f = globals()["get_user"]\nemit_result(f("U-1"))\n')
    assert 'data-tool="get_user"' in html and 'data-certain="no"' in html
    assert "may be called" in html


def test_the_unchanged_script_reads_as_the_agents(pending, reviewer_client) -> None:
    html = reading(reviewer_client, pending, AGENT)
    assert 'data-reading="agent"' in html and 'data-tool="get_user"' not in html


def test_approving_an_edit_with_a_tool_the_reviewer_was_not_shown_is_refused(
    pending, reviewer_client
) -> None:
    # The page still listed only get_orders when the reviewer approved.
    response = reviewer_client.post(
        f"/reviews/{pending.pk}/edit/",
        {"body": EDIT, "tools_seen_sent": "1", "tools_seen": ["get_orders"]},
        headers={"HX-Request": "true", "HX-Target": "decision-panel"},
    )
    html = response.content.decode()
    pending.refresh_from_db()
    assert pending.status == "pending" and pending.run is None
    assert "calls get_user, which the list of tools you saw did not show" in html
    # The answer shows the edit's reading: the tools panel out of band, the editor kept.
    assert 'id="tools-panel" data-reading="edit"' in html and 'hx-swap-oob="true"' in html
    assert 'name="tools_seen" value="get_user"' in html
    assert "get_user(&quot;U-1&quot;)" in html


def test_a_form_without_the_list_saw_only_the_agents_tools(pending, reviewer_client) -> None:
    response = reviewer_client.post(f"/reviews/{pending.pk}/edit/", {"body": EDIT})
    assert response.status_code == 409
    pending.refresh_from_db()
    assert pending.status == "pending"


def test_the_approval_covers_the_tools_of_the_edited_script(pending, reviewer_client) -> None:
    # What the page's form sends once the panel shows the edit's reading: get_user needs review.
    response = reviewer_client.post(
        f"/reviews/{pending.pk}/edit/",
        {
            "body": EDIT,
            "tools_seen_sent": "1",
            "tools_seen": ["get_orders", "get_user"],
            "tools_asked_sent": "1",
            "tools_asked": ["get_user"],
        },
        headers={"HX-Request": "true", "HX-Target": "decision-panel"},
    )
    assert response.status_code == 200
    pending.refresh_from_db()
    assert pending.status == "edited_and_approved"
    assert pending.approved_body == EDIT and pending.run.body == EDIT
    # A person approved the edit as read: the run may call what the edit calls.
    allowed = pending.run.allowed_tools
    assert allowed is None or "get_user" in allowed
    edited = AuditEntry.objects.get(submission=pending, action=AuditAction.EDITED)
    assert [t["name"] for t in edited.data["tools_called"]] == ["get_orders", "get_user"]
    assert edited.data["tools_added"] == ["get_user"]
    assert edited.data["original_tools"] == ["get_orders"]
    approved = AuditEntry.objects.get(submission=pending, action=AuditAction.EDITED_AND_APPROVED)
    assert approved.data["tools_approved"] == ["get_orders", "get_user"]
    # After the decision the tools panel shows the approved edit's reading.
    html = response.content.decode()
    assert 'data-reading="approved-edit"' in html and 'data-tool="get_user"' in html
    page = reviewer_client.get(f"/reviews/{pending.pk}/").content.decode()
    assert 'data-reading="approved-edit"' in page and "added by the edit" in page


def test_an_edit_with_violations_is_refused_and_shows_its_reading(pending, reviewer_client) -> None:
    body = 'import os\nemit_result(get_user("U-1").data)\n'
    response = reviewer_client.post(
        f"/reviews/{pending.pk}/edit/",
        {"body": body, "tools_seen_sent": "1", "tools_seen": ["get_orders"]},
        headers={"HX-Request": "true", "HX-Target": "decision-panel"},
    )
    html = response.content.decode()
    assert "Line 1:" in html and 'id="tools-panel" data-reading="edit"' in html
    pending.refresh_from_db()
    assert pending.status == "pending"


def test_only_members_read_edits(pending, client, outsider) -> None:
    client.force_login(outsider)
    assert client.post(f"/reviews/{pending.pk}/reading/", {"body": EDIT}).status_code == 404
