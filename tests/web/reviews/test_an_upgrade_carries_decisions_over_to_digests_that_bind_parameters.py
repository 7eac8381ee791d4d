"""Upgrading to digests that bind a Python tool's documented parameters keeps every decision.

`Tool.code_digest` of a Python tool now names the parameters a script may pass (catalog
0013). What was decided on a tool's code as it is today (an admin's acceptance, a waiting
run's pins, a pending submission's reading) is carried over to the new digest, so nothing
is withheld or refused as "recoded" by the upgrade alone; a digest of other code stays
unmatched, as it was.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from jazzmine_web.catalog.models import Tool
from jazzmine_web.reviews.models import Submission
from jazzmine_web.runs.models import Run
from jazzmine_web.runs.services import run_create
from tests.web.helpers import migrate

from .conftest import set_policy, submit

OTHER = "f" * 64


def before(tool: Tool) -> str:
    """The digest of a Python tool's code as the releases before this one wrote it."""
    text = json.dumps(
        ["python", tool.source, sorted(set(tool.dependencies))], sort_keys=True, ensure_ascii=True
    )
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.django_db(transaction=True)
def test_acceptances_pins_and_readings_of_todays_code_are_carried_over(api, ecommerce, member):
    set_policy(ecommerce)
    tool = ecommerce.tools.get(name="get_orders")
    other = ecommerce.tools.get(name="get_user")
    assert tool.code_digest != before(tool)  # the formula did change
    Tool.objects.filter(pk=tool.pk).update(accepted_code_digest=before(tool))
    Tool.objects.filter(pk=other.pk).update(accepted_code_digest=OTHER)
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False,
                     allowed_tools={"get_orders": before(tool), "get_user": OTHER})  # fmt: skip
    pending = submit(api, ecommerce).json()
    assert pending["status"] == "pending", pending
    submission = Submission.objects.get(pk=pending["id"])
    listed = [
        {**t, "code_digest": before(tool) if t["name"] == "get_orders" else OTHER}
        for t in submission.tools_called
    ]
    Submission.objects.filter(pk=submission.pk).update(tools_called=listed)
    try:
        migrate(
            ("catalog", "0012_build_status_built"),
            ("runs", "0009_approvals_name_the_code"),
            ("reviews", "0010_review_settings_plural"),
        )
    finally:
        migrate()

    tool.refresh_from_db()
    other.refresh_from_db()
    assert tool.accepted_code_digest == tool.code_digest and tool.code_accepted
    assert other.accepted_code_digest == OTHER
    assert Run.objects.get(pk=run.pk).allowed_tools == {
        "get_orders": tool.code_digest, "get_user": OTHER
    }  # fmt: skip
    read = {
        t["name"]: t["code_digest"] for t in Submission.objects.get(pk=submission.pk).tools_called
    }
    assert read["get_orders"] == tool.code_digest
    assert all(d == OTHER for name, d in read.items() if name != "get_orders")
