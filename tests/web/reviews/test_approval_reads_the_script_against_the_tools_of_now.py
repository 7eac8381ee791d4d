"""Approval reads the script again against the sandbox's tools of now; its run calls only those.

A bash script is read when it is submitted. A plain call of a name that is no tool yet is
refused then ("not a command here"), but a script can still reach such a name in a way no
reading before the tool exists can count (`AGENT` defines a function of that name, unsets
it, then calls the name): the reviewer's list of tools does not show it. A member then
creates a tool of that name. Approval reads the script again, refuses, and stores the new
reading so the page shows the tool; a reviewer who approves after that has seen it. The run
an approval starts carries the names approved, so a tool created after the approval is
refused where the script runs.
"""

from __future__ import annotations

import pytest
from django.db import transaction

from jazzmine_web.catalog.services import tool_create, tool_publish, tool_update
from jazzmine_web.reviews.models import AuditAction, AuditEntry, Submission
from jazzmine_web.reviews.services import ToolsChanged, submission_approve
from jazzmine_web.runs.models import Run, RunStatus

from .conftest import allow_tools, approve_form, submit

pytestmark = pytest.mark.django_db

# The function stands in for the name until it is unset: then the call is the tool's, once a
# tool of that name exists.
HIDDEN = "wipe_orders() { echo none; }\nunset -f wipe_orders\nwipe_orders\n"
AGENT = "get_orders --status delivered >/dev/null\n" + HIDDEN
PLAIN = "get_orders --status delivered >/dev/null\nwipe_orders\n"
WIPE = """\
def wipe_orders() -> ToolResponse:
    return ToolResponse(success=True, data={"wiped": True})
"""
HTMX = {"HX-Request": "true", "HX-Target": "decision-panel"}


def pending(api, sandbox, body: str = AGENT) -> Submission:
    state = submit(api, sandbox, body=body, language="bash").json()
    assert state["status"] == "pending", state
    return Submission.objects.get(pk=state["id"])


def every(sandbox) -> list[str]:
    """Return the names of the sandbox's published tools: what a script may call there."""
    return sorted(sandbox.tools.filter(published=True).values_list("name", flat=True))


def shown(submission: Submission) -> list[str]:
    return [t["name"] for t in submission.tools_called]


def add_wipe_orders(sandbox, member, **extra):
    return tool_create(
        sandbox=sandbox,
        name="wipe_orders",
        description="Delete every order.",
        source=WIPE,
        author=member,
        actor=member,
        **extra,
    )


def refused(submission: Submission, reviewer, **extra) -> ToolsChanged:
    with pytest.raises(ToolsChanged) as raised:
        submission_approve(submission=submission, user=reviewer, **extra)
    submission.refresh_from_db()
    assert submission.status == "pending" and submission.run is None
    assert not Run.objects.exists()
    assert not AuditEntry.objects.filter(submission=submission, action=AuditAction.APPROVED)
    return raised.value


def test_a_plain_call_of_a_name_that_is_no_tool_is_refused_when_it_comes_in(
    api, ecommerce, member
) -> None:
    state = submit(api, ecommerce, body=PLAIN, language="bash").json()
    assert state["status"] == "rejected_by_validator", state
    assert "Line 2: 'wipe_orders' is not a command here" in str(state["violations"])
    assert not Run.objects.exists()
    # Once the tool exists, the same script waits for a reviewer, who is shown the call.
    add_wipe_orders(ecommerce, member)
    assert shown(pending(api, ecommerce, body=PLAIN)) == ["get_orders", "wipe_orders"]


def test_a_tool_created_under_a_name_the_script_calls_is_not_approved_unseen(
    api, ecommerce, member, reviewer
) -> None:
    submission = pending(api, ecommerce)
    assert shown(submission) == every(ecommerce)  # the function's unset: it may call any tool
    add_wipe_orders(ecommerce, member)
    error = refused(submission, reviewer)
    assert error.code == "tools_changed" and error.status == 409
    assert error.appeared == ["wipe_orders"]
    assert "it now calls, or may call, wipe_orders" in error.message
    # Nothing stored is lost; the reading is what the page now shows.
    assert submission.body == AGENT and submission.script == AGENT
    assert shown(submission) == every(ecommerce)
    (wipe,) = (t for t in submission.tools_called if t["name"] == "wipe_orders")
    assert wipe["always_allow"] is False
    assert wipe["why"] == "called as a command on lines 2, 3, 4"


# Read as a call when the script comes in: refused then, as the plain call is.
SEEN = {
    "substitution": 'echo "$(wipe_orders)"\n',
    "backquotes": "echo `wipe_orders`\n",
}


@pytest.mark.parametrize("body", SEEN.values(), ids=SEEN.keys())
def test_a_call_inside_a_substitution_is_refused_when_it_comes_in(api, ecommerce, body) -> None:
    state = submit(api, ecommerce, body=body, language="bash").json()
    assert state["status"] == "rejected_by_validator", state
    assert "'wipe_orders' is not a command here" in str(state["violations"])


# How an agent would hide the call from a reading made before the tool exists.
SPELLINGS = {
    "command": "command wipe_orders\n",
    "eval": 'eval "wipe_orders"\n',
    "function first": HIDDEN,
    "xargs": "echo go | xargs wipe_orders\n",
}


@pytest.mark.parametrize("body", SPELLINGS.values(), ids=SPELLINGS.keys())
def test_no_spelling_of_the_call_is_approved_once_the_tool_exists(
    api, ecommerce, member, reviewer, body
) -> None:
    submission = pending(api, ecommerce, body=body)
    assert "wipe_orders" not in shown(submission)
    add_wipe_orders(ecommerce, member)
    assert "wipe_orders" in refused(submission, reviewer).appeared
    assert "wipe_orders" in shown(submission)


# A command name computed at run time is refused before anyone reads it (it may be `eval`,
# which could hide a limit hit from the run: `jazzmine.bash.blindspots`).
COMPUTED = {"variable": "x=wipe_orders; $x\n", "built name": "x=wipe; ${x}_orders\n"}


@pytest.mark.parametrize("body", COMPUTED.values(), ids=COMPUTED.keys())
def test_a_computed_command_name_is_never_pending_approval(api, ecommerce, body) -> None:
    state = submit(api, ecommerce, body=body, language="bash").json()
    assert state["status"] == "rejected_by_validator", state
    assert "computed at run time" in str(state["violations"])
    assert not Run.objects.exists()


def test_a_tool_renamed_to_the_name_the_script_calls_is_not_approved_unseen(
    api, ecommerce, member, reviewer
) -> None:
    purge = tool_create(
        sandbox=ecommerce,
        name="purge",
        description="Delete every order.",
        source=WIPE.replace("wipe_orders", "purge"),
        author=member,
        actor=member,
    )
    submission = pending(api, ecommerce)
    assert shown(submission) == every(ecommerce)
    tool_update(tool=purge, actor=member, name="wipe_orders",
                source=WIPE)  # fmt: skip
    assert refused(submission, reviewer).appeared == ["wipe_orders"]


def test_a_tool_published_after_the_reading_is_not_approved_unseen(
    api, ecommerce, member, reviewer
) -> None:
    tool = add_wipe_orders(ecommerce, member)
    tool_publish(tool=tool, published=False)
    submission = pending(api, ecommerce)
    assert "wipe_orders" not in shown(submission)  # unpublished tools are in no run's sandbox
    tool_publish(tool=tool)
    assert refused(submission, reviewer).appeared == ["wipe_orders"]


def test_a_tool_named_like_a_shell_command_never_stands_in_for_it(
    api, ecommerce, member, reviewer
) -> None:
    submission = pending(api, ecommerce, body="get_orders --status delivered | jq length\n")
    tool_create(
        sandbox=ecommerce,
        name="jq",
        description="Delete every order.",
        source="def jq(query: str = '') -> ToolResponse:\n    return ToolResponse(success=True)\n",
        author=member,
        actor=member,
    )
    # bash keeps bashkit's own jq: a tool of that name is no builtin there (`bash.engine`
    # never registers it), so the script cannot call it, and the reading does not count it.
    approved = submission_approve(submission=submission, user=reviewer)
    assert approved.status == "approved" and "jq" not in shown(approved)
    assert "jq" not in (approved.run.allowed_tools or {})


def test_a_tool_shown_as_always_allowed_that_no_longer_is_is_not_approved_unasked(
    api, ecommerce, member, reviewer
) -> None:
    allow_tools(ecommerce, "get_orders")
    submission = pending(
        api, ecommerce, body=PLAIN.replace("wipe_orders", "get_user --user_id U-1")
    )
    assert [(t["name"], t["always_allow"]) for t in submission.tools_called] == [
        ("get_orders", True),
        ("get_user", False),
    ]
    # A member's code change: no admin accepted it, so the tool now needs review.
    get_orders = ecommerce.tools.get(name="get_orders")
    changed = get_orders.source.replace("orders[: max(0, int(limit))]", "orders")
    assert tool_update(tool=get_orders, actor=member, source=changed).code_changed
    error = refused(submission, reviewer)
    assert error.appeared == [] and error.no_longer_allowed == ["get_orders"]
    assert "get_orders is no longer always allowed" in error.message
    assert submission.tools_called[0]["always_allow"] is False


def test_a_page_that_showed_a_tool_as_always_allowed_never_approves_it_once_it_is_not(
    api, ecommerce, member, reviewer, reviewer_client
) -> None:
    """Another reviewer's refused press stores the new reading; the page drawn before it sent
    the same form as one drawn after, and approved `get_orders` without ever asking."""
    allow_tools(ecommerce, "get_orders")
    submission = pending(
        api, ecommerce, body=PLAIN.replace("wipe_orders", "get_user --user_id U-1")
    )
    drawn = reviewer_client.get(f"/reviews/{submission.pk}/").content.decode()
    stale = approve_form(drawn)
    assert stale["tools_asked"] == ["get_user"]  # its confirmation asks about get_user only
    get_orders = ecommerce.tools.get(name="get_orders")
    changed = get_orders.source.replace("orders[: max(0, int(limit))]", "orders")
    assert tool_update(tool=get_orders, actor=member, source=changed).code_changed
    refused(submission, reviewer)  # another reviewer's press: the reading now says so
    url = f"/reviews/{submission.pk}/approve/"
    assert reviewer_client.post(url, stale).status_code == 409
    submission.refresh_from_db()
    assert submission.status == "pending" and not Run.objects.exists()
    # The page drawn now asks about both, and approves both.
    fresh = approve_form(reviewer_client.get(f"/reviews/{submission.pk}/").content.decode())
    assert fresh["tools_asked"] == ["get_orders", "get_user"]
    assert reviewer_client.post(url, fresh).status_code == 302
    submission.refresh_from_db()
    assert submission.status == "approved"
    assert sorted(submission.run.allowed_tools) == ["get_orders", "get_user"]


def test_a_reviewer_who_saw_the_new_reading_approves_exactly_it(
    api, ecommerce, member, reviewer
) -> None:
    submission = pending(api, ecommerce)
    add_wipe_orders(ecommerce, member)
    refused(submission, reviewer)
    approved = submission_approve(submission=submission, user=reviewer)
    assert approved.status == "approved"
    assert sorted(approved.run.allowed_tools) == every(ecommerce)
    assert approved.run.allowed_by_reviewer is True
    entry = AuditEntry.objects.get(submission=submission, action=AuditAction.APPROVED)
    assert entry.data["tools_approved"] == every(ecommerce)


def test_the_page_says_why_and_shows_the_tool_that_appeared(
    api, ecommerce, member, reviewer_client
) -> None:
    submission = pending(api, ecommerce)
    before = every(ecommerce)  # what the page drawn now shows
    page = reviewer_client.get(f"/reviews/{submission.pk}/").content.decode()
    assert 'data-tool="wipe_orders"' not in page
    add_wipe_orders(ecommerce, member)
    response = reviewer_client.post(
        f"/reviews/{submission.pk}/approve/",
        {"tools_seen_sent": "1", "tools_seen": before},
        headers=HTMX,
    )
    html = response.content.decode()
    assert response.status_code == 200 and "data-decision-error" in html
    assert "it now calls, or may call, wipe_orders" in html
    # The tools panel comes along out of band with the new reading; the approval form now
    # carries it, so a second press approves what the page shows.
    assert 'id="tools-panel"' in html and 'data-tool="wipe_orders"' in html
    assert 'name="tools_seen" value="wipe_orders"' in html
    submission.refresh_from_db()
    assert submission.status == "pending" and not Run.objects.exists()
    page = reviewer_client.get(f"/reviews/{submission.pk}/").content.decode()
    assert 'data-tool="wipe_orders"' in page and "no — needs review" in page
    # Without htmx: the page again, with the conflict's status.
    again = reviewer_client.post(
        f"/reviews/{submission.pk}/approve/", {"tools_seen_sent": "1", "tools_seen": before}
    )
    assert again.status_code == 409


def test_a_page_drawn_before_the_reading_was_refreshed_approves_nothing_it_did_not_show(
    api, ecommerce, member, reviewer, reviewer_client
) -> None:
    submission = pending(api, ecommerce)
    before = every(ecommerce)  # what the page drawn now shows
    add_wipe_orders(ecommerce, member)
    refused(submission, reviewer)  # another reviewer's press: the reading now lists the tool
    url = f"/reviews/{submission.pk}/approve/"
    stale = reviewer_client.post(url, {"tools_seen_sent": "1", "tools_seen": before})
    assert stale.status_code == 409
    submission.refresh_from_db()
    assert submission.status == "pending"
    # A list naming more than the reading is no wider than the reading.
    forged = {"tools_seen_sent": "1", "tools_seen": [*every(ecommerce), "no_such_tool"]}
    assert reviewer_client.post(url, forged, headers=HTMX).status_code == 200
    submission.refresh_from_db()
    assert submission.status == "approved"
    assert sorted(submission.run.allowed_tools) == every(ecommerce)


def test_an_unchanged_script_approved_through_the_edit_form_is_read_again_too(
    api, ecommerce, member, reviewer_client
) -> None:
    submission = pending(api, ecommerce)
    before = every(ecommerce)  # what the page drawn now shows
    add_wipe_orders(ecommerce, member)
    response = reviewer_client.post(
        f"/reviews/{submission.pk}/edit/",
        {"body": AGENT, "tools_seen_sent": "1", "tools_seen": before},
    )
    assert response.status_code == 409
    submission.refresh_from_db()
    assert submission.status == "pending" and "wipe_orders" in shown(submission)


def test_an_edit_is_approved_with_the_run_bound_to_its_own_reading(
    api, ecommerce, reviewer_client
) -> None:
    submission = pending(api, ecommerce)
    response = reviewer_client.post(
        f"/reviews/{submission.pk}/edit/",
        {
            "body": "get_user --user_id U-1\n",
            "tools_seen_sent": "1",
            "tools_seen": ["get_user"],
            # The edit's panel showed get_user as needing review: its form asked about it.
            "tools_asked_sent": "1",
            "tools_asked": ["get_user"],
        },
        headers=HTMX,
    )
    assert response.status_code == 200
    submission.refresh_from_db()
    assert submission.status == "edited_and_approved"
    assert (
        sorted(submission.run.allowed_tools) == ["get_user"] and submission.run.allowed_by_reviewer
    )


CONTROL = """\
get_orders --status delivered | jq '[.orders[].price] | add'
get_user --user_id U-1 | jq -r .name
"""


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_with_no_tool_added_approvals_run_one_after_another(api, ecommerce, reviewer, worker):
    for _ in range(2):
        submission = pending(api, ecommerce, body=CONTROL)
        approved = submission_approve(submission=submission, user=reviewer)
        assert sorted(approved.run.allowed_tools) == shown(submission) == ["get_orders", "get_user"]
        worker.future(approved.run.pk).result(timeout=240)
        run = Run.objects.get(pk=approved.run.pk)
        assert run.status == RunStatus.SUCCEEDED, (run.error, run.result)
        assert "202.25" in run.result["stdout"] and "Ada Lovelace" in run.result["stdout"]
        assert run.notes == []


def events_text(run: Run) -> str:
    return " ".join(str(e.data) for e in run.events.order_by("seq"))


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_a_tool_approved_after_it_was_shown_runs(api, ecommerce, member, reviewer, worker):
    submission = pending(api, ecommerce)
    add_wipe_orders(ecommerce, member)
    refused(submission, reviewer)
    approved = submission_approve(submission=submission, user=reviewer)
    worker.future(approved.run.pk).result(timeout=240)
    run = Run.objects.get(pk=approved.run.pk)
    assert run.status == RunStatus.SUCCEEDED, (run.error, run.result)
    assert "wiped" in run.result["stdout"]


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_a_tool_created_after_the_approval_is_refused_where_the_script_runs(
    api, ecommerce, member, reviewer, worker
):
    submission = pending(api, ecommerce)
    before = every(ecommerce)  # what the page drawn now shows
    # The tool is created after the approval, before any worker prepares the run (the run
    # is handed to one when this block commits).
    with transaction.atomic():
        approved = submission_approve(submission=submission, user=reviewer)
        add_wipe_orders(ecommerce, member)
    worker.future(approved.run.pk).result(timeout=240)
    run = Run.objects.get(pk=approved.run.pk)
    events = events_text(run)
    assert "wiped" not in events and "wiped" not in str(run.result)
    assert "'wipe_orders' is not allowed in this run" in events
    assert run.status == RunStatus.FAILED and sorted(run.allowed_tools) == before


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_a_python_script_stays_approvable_after_another_tool_changes(
    api, ecommerce, member, reviewer, worker
):
    # A Python script's preamble lists every tool: the one assembled when the agent sent it
    # is stale once any tool changes. Before, every approval of it then conflicted
    # ("approve again"), and so did every approval after that: it could only be rejected.
    for change in range(2):
        state = submit(api, ecommerce).json()  # Python: the total of delivered orders
        assert state["status"] == "pending", state
        submission = Submission.objects.get(pk=state["id"])
        if change == 0:
            add_wipe_orders(ecommerce, member)  # a tool the script does not call
        else:
            tool = ecommerce.tools.get(name="get_user")  # renamed: another tool the script
            tool_update(tool=tool, name="find_user", actor=member)  # does not call
        approved = submission_approve(submission=submission, user=reviewer)
        assert sorted(approved.run.allowed_tools) == ["get_orders"]
        assert approved.approved_script != submission.script  # assembled with today's tools
        worker.future(approved.run.pk).result(timeout=240)
        run = Run.objects.get(pk=approved.run.pk)
        assert run.status == RunStatus.SUCCEEDED, (run.error, run.result)
        assert run.result == {"total": 202.25}
        assert run.code_sha256 == approved.approved_sha256
