"""A reviewer's approval covers each tool at the code it had when the page read it.

Found by trying it: an approval bound tool names only. A member who changed a tool's code
after the reviewer pressed Approve (the run waiting behind busy workers) had the new code run
in a script labelled "approved by reviewer", its notes silent; one who changed it between the
page being drawn and the press had the approval go through on code the reviewer never had in
front of them. Now the press is refused when a tool's code is no longer what the page read,
and the run drops a tool whose code changes while it waits, saying why.
"""

from __future__ import annotations

import pytest

from jazzmine_web.catalog.services import tool_update
from jazzmine_web.reviews.models import Submission
from jazzmine_web.runs.models import Run, RunEvent, RunStatus
from tests.waiting import wait_until

from .conftest import approve_form, set_policy, submit

pytestmark = pytest.mark.django_db(transaction=True)

BODY = 'r = update_order_status(order_id="ORD-1003", status="shipped")\nemit_result(r)\n'
MARK = "CODE NOBODY APPROVED RAN"


def recode(sandbox, member) -> None:
    """A member rewrites update_order_status: it prints, and refunds whatever it is asked."""
    tool = sandbox.tools.get(name="update_order_status")
    head, _, body = tool.source.partition(":\n")
    source = f'{head}:\n    print("{MARK}")\n    status = "refunded"\n{body}'
    assert tool_update(tool=tool, actor=member, source=source).code_changed


def test_a_page_drawn_before_a_tools_code_changed_approves_nothing(
    api, ecommerce, member, reviewer_client
):
    set_policy(ecommerce)
    state = submit(api, ecommerce, body=BODY).json()
    url = f"/reviews/{state['id']}/"
    stale = approve_form(reviewer_client.get(url).content.decode())
    assert any(v.startswith("update_order_status=") for v in stale["tools_digest"])
    recode(ecommerce, member)

    refused = reviewer_client.post(f"{url}approve/", stale)
    assert refused.status_code == 409
    assert "the code of update_order_status was changed since" in refused.content.decode()
    submission = Submission.objects.get(pk=state["id"])
    assert submission.status == "pending" and not Run.objects.exists()
    # Pressed again from the same page: still refused (it still read the old code); and so
    # is a form whose digests are unreadable or name no tool: it said nothing of the code.
    assert reviewer_client.post(f"{url}approve/", stale).status_code == 409
    for spelled in ("update_order_status", " update_order_status=x", ""):
        assert (
            reviewer_client.post(f"{url}approve/", {**stale, "tools_digest": [spelled]}).status_code
            == 409
        ), spelled

    # The page drawn now reads the new code, and approves it, bound to it.
    fresh = approve_form(reviewer_client.get(url).content.decode())
    assert fresh["tools_digest"] != stale["tools_digest"]
    assert reviewer_client.post(f"{url}approve/", fresh).status_code == 302
    run = Submission.objects.get(pk=state["id"]).run
    tool = ecommerce.tools.get(name="update_order_status")
    assert run.allowed_tools["update_order_status"] == tool.code_digest


def test_code_changed_while_an_approved_run_waits_never_runs(
    api, ecommerce, member, reviewer_client, no_worker, celery_workers
):
    set_policy(ecommerce)
    state = submit(api, ecommerce, body=BODY).json()
    url = f"/reviews/{state['id']}/"
    form = approve_form(reviewer_client.get(url).content.decode())
    assert reviewer_client.post(f"{url}approve/", form).status_code == 302
    run = Submission.objects.get(pk=state["id"]).run
    assert run.status == RunStatus.QUEUED  # no worker yet: it waits, as behind busy ones
    recode(ecommerce, member)

    celery_workers.running()
    wait_until(lambda: Run.objects.get(pk=run.pk).status in RunStatus.finished(), timeout=120)
    run.refresh_from_db()
    said = " ".join(
        str(data) for data in RunEvent.objects.filter(run=run).values_list("data", flat=True)
    )
    assert MARK not in said and "refunded" not in said
    assert "update_order_status" in said and "approval" in said  # its call refused, saying why
    assert any(
        "update_order_status (its code changed since its reviewer approved this run)" in note
        for note in run.notes
    )
