"""An edit is approved only for what its page asked about, as the agent's script is.

A tool marked always allowed is called without a person reading it, so the review page asks
about the other tools only, and an approval holds only for what the page showed: a tool it
showed as always allowed that is not any more (a member changed its code, an admin took the
mark away) was never asked about, and the approval is refused (409) for the reviewer to look
again. "Edit, then approve" is held to the same check: its page shows the reading of the text
typed (read again as it is typed) and sends which of those tools it showed as needing review
(`tools_asked`). A form that sends no such list is taken to have asked only what the reading
stored with the submission asked; a tool it may not have asked about is refused.

Before, the edit went around the check: one comment line, and the run could call a tool the
reviewer was never asked about.
"""

from __future__ import annotations

import re

import pytest

from jazzmine_web.catalog.services import tool_update
from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_edit_read
from jazzmine_web.runs.models import Run

from .conftest import BODY, allow_tools, submit

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true", "HX-Target": "decision-panel"}
COMMENTED = "# checked by a reviewer\n" + BODY
# The edit adds a call to get_user, a tool the agent's script did not call.
WITH_USER = BODY + 'emit_result(get_user("U-1").data)\n'


def _member_changes_get_orders(sandbox, member) -> None:
    get_orders = sandbox.tools.get(name="get_orders")
    changed = get_orders.source.replace("orders[: max(0, int(limit))]", "orders")
    assert tool_update(tool=get_orders, actor=member, source=changed).code_changed
    get_orders.refresh_from_db()
    assert not get_orders.is_always_allowed


def _member_changes_get_user(sandbox, member) -> None:
    get_user = sandbox.tools.get(name="get_user")
    changed = get_user.source.replace('"Ada Lovelace"', '"Ada King"')
    assert tool_update(tool=get_user, actor=member, source=changed).code_changed
    get_user.refresh_from_db()
    assert not get_user.is_always_allowed


def _fields(html: str) -> dict[str, list[str]]:
    """Return the hidden tool fields the edit form in `html` sends, as a browser would."""
    form = html[html.index('data-decision="edit"') :]
    form = form[: form.index("</form>")]
    fields: dict[str, list[str]] = {"tools_seen": [], "tools_asked": []}
    for name, value in re.findall(r'<input type="hidden" name="(tools_\w+)" value="([^"]*)"', form):
        fields.setdefault(name, []).append(value)
    return fields


def _listed(html: str) -> dict[str, list[str]]:
    """Return the tool fields of the form's list (`#tools-seen`), swapped in by a reading."""
    span = html[html.index('id="tools-seen"') :]
    span = span[: span.index("</span>")]
    fields: dict[str, list[str]] = {"tools_seen": [], "tools_asked": [], "tools_digest": []}
    for name, value in re.findall(
        r'name="(tools_seen|tools_asked|tools_digest)" value="([^"]*)"', span
    ):
        fields[name].append(value)
    return fields


def _edit_form(client, submission: Submission, body: str) -> dict[str, list[str] | str]:
    """Return what the page's edit form sends once its panel shows the reading of `body`."""
    page = client.get(f"/reviews/{submission.pk}/").content.decode()
    reading = client.post(
        f"/reviews/{submission.pk}/reading/",
        {"body": body},
        headers={"HX-Request": "true", "HX-Target": "tools-panel"},
    )
    assert reading.status_code == 200
    return {**_fields(page), **_listed(reading.content.decode()), "body": body}


def _error(html: str) -> str:
    """Return the decision panel's error, as the reviewer reads it."""
    found = re.search(r"<p class=\"error\" data-decision-error>(.*?)</p>", html, re.S)
    assert found, "no error shown"
    return found.group(1)


def _still_pending(submission: Submission) -> None:
    submission.refresh_from_db()
    assert submission.status == "pending" and submission.run is None
    assert not Run.objects.exists()


@pytest.fixture
def pending(api, gated) -> Submission:
    """The agent's script, waiting: it calls get_orders, shown as always allowed."""
    submission = Submission.objects.get(pk=submit(api, gated).json()["id"])
    assert [(t["name"], t["always_allow"]) for t in submission.tools_called] == [
        ("get_orders", True)
    ]
    return submission


def test_an_unedited_approval_of_a_tool_no_longer_always_allowed_is_refused(
    pending, gated, member, reviewer_client
) -> None:
    """What the edit is held to (this one held before too): the page never asked about it."""
    assert reviewer_client.get(f"/reviews/{pending.pk}/").status_code == 200
    _member_changes_get_orders(gated, member)
    form = {"tools_seen_sent": "1", "tools_seen": ["get_orders"], "tools_asked_sent": "1"}
    assert reviewer_client.post(f"/reviews/{pending.pk}/approve/", form).status_code == 409
    _still_pending(pending)


def test_an_edited_approval_of_a_tool_no_longer_always_allowed_is_refused_too(
    pending, gated, member, reviewer_client
) -> None:
    """The audit's reproduction: a comment line made the approval skip the check. A form that
    sends no list of tools asked is held to the stored reading, which showed get_orders as
    always allowed."""
    reading = submission_edit_read(submission=pending, body=COMMENTED)
    assert [(t["name"], t["always_allow"]) for t in reading.tools_called] == [("get_orders", True)]
    _member_changes_get_orders(gated, member)
    form = {"body": COMMENTED, "tools_seen_sent": "1", "tools_seen": ["get_orders"]}
    response = reviewer_client.post(f"/reviews/{pending.pk}/edit/", form)
    assert response.status_code == 409
    assert "get_orders is no longer always allowed" in response.content.decode()
    _still_pending(pending)


def test_the_edit_page_that_showed_a_tool_as_always_allowed_never_approves_it_once_it_is_not(
    pending, gated, member, reviewer_client
) -> None:
    """The page's own form, read from the edit's reading: it asked about nothing. Refused, the
    answer shows the edit's reading of now, and a form sent from that approves it."""
    form = _edit_form(reviewer_client, pending, COMMENTED)
    assert form["tools_seen"] == ["get_orders"] and form["tools_asked"] == []
    assert form["tools_asked_sent"] == ["1"]
    _member_changes_get_orders(gated, member)
    url = f"/reviews/{pending.pk}/edit/"
    answer = reviewer_client.post(url, form, headers=HTMX).content.decode()
    assert "data-decision-error" in answer and "get_orders is no longer always allowed" in answer
    _still_pending(pending)
    # The stored reading is the agent's script's, not the edit's: the refusal left it as it was.
    assert pending.tools_called[0]["always_allow"] is True
    # The answer shows the edit's reading, the text kept, and its form now asks about get_orders.
    assert 'id="tools-panel" data-reading="edit"' in answer and "no — needs review" in answer
    assert "# checked by a reviewer" in answer
    again = {**_fields(answer), "body": COMMENTED}
    assert again["tools_asked"] == ["get_orders"]
    assert reviewer_client.post(url, again, headers=HTMX).status_code == 200
    pending.refresh_from_db()
    assert pending.status == "edited_and_approved"
    assert sorted(pending.run.allowed_tools) == ["get_orders"] and pending.run.allowed_by_reviewer


def test_an_admin_taking_always_allowed_away_refuses_the_edit_as_a_code_change_does(
    pending, gated, admin, reviewer_client
) -> None:
    """No code changed, so no digest differs: only the mark did, after the page was drawn."""
    form = _edit_form(reviewer_client, pending, COMMENTED)
    get_orders = gated.tools.get(name="get_orders")
    tool_update(tool=get_orders, actor=admin, always_allow=False)
    get_orders.refresh_from_db()
    assert not get_orders.is_always_allowed
    response = reviewer_client.post(f"/reviews/{pending.pk}/edit/", form)
    assert response.status_code == 409
    assert "get_orders is no longer always allowed" in response.content.decode()
    _still_pending(pending)


def test_a_tool_the_edit_adds_is_refused_once_it_needs_review_the_page_never_asked_for(
    pending, gated, member, reviewer_client
) -> None:
    """A tool only the edit calls is in no stored reading: what its page showed is what it
    sent. It showed get_user as always allowed; then a member changed get_user's code."""
    allow_tools(gated, "get_user")
    form = _edit_form(reviewer_client, pending, WITH_USER)
    assert form["tools_seen"] == ["get_orders", "get_user"] and form["tools_asked"] == []
    _member_changes_get_user(gated, member)
    response = reviewer_client.post(f"/reviews/{pending.pk}/edit/", form)
    assert response.status_code == 409
    assert "get_user is no longer always allowed" in response.content.decode()
    _still_pending(pending)


def test_a_list_of_tools_seen_naming_more_than_the_page_showed_approves_nothing_it_did_not_ask(
    pending, gated, reviewer_client
) -> None:
    """The page read an edit calling get_orders only; the text sent calls get_user as well
    (not always allowed), and the list of tools seen names every tool of the sandbox."""
    form = _edit_form(reviewer_client, pending, COMMENTED)
    every_tool = sorted(gated.tools.values_list("name", flat=True))
    assert "get_user" in every_tool
    forged = {**form, "body": WITH_USER, "tools_seen": every_tool}
    response = reviewer_client.post(f"/reviews/{pending.pk}/edit/", forged)
    assert response.status_code == 409
    assert "get_user" in _error(response.content.decode())
    _still_pending(pending)
    assert not Submission.objects.filter(status="edited_and_approved").exists()


def test_an_edit_form_without_the_list_of_tools_asked_is_refused_what_it_may_not_have_asked(
    pending, reviewer_client
) -> None:
    """Without `tools_asked_sent` the server cannot tell what the page asked about a tool only
    the edit calls: it fails closed, and says to look again. The page's form then approves."""
    url = f"/reviews/{pending.pk}/edit/"
    unlisted = {"body": WITH_USER, "tools_seen_sent": "1", "tools_seen": ["get_orders", "get_user"]}
    response = reviewer_client.post(url, unlisted)
    assert response.status_code == 409
    message = response.content.decode()
    assert "get_user needs a person&#x27;s review" in message
    assert "the approval did not say which tools you were asked about" in message
    assert "Look again at the tools it calls" in message
    _still_pending(pending)
    form = _edit_form(reviewer_client, pending, WITH_USER)
    assert form["tools_asked"] == ["get_user"]
    assert reviewer_client.post(url, form).status_code == 302
    pending.refresh_from_db()
    assert pending.status == "edited_and_approved"
    assert sorted(pending.run.allowed_tools) == ["get_orders", "get_user"]
