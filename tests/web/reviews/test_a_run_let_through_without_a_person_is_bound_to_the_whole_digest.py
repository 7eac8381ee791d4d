"""A run the policy let through without a person is bound to the whole digest of each tool's code.

The run recorded {tool: the checksum an admin had accepted}, 16 hex chars, and the worker
compared that. Two codes of one checksum take some 2^32 tries to find: a member could swap an
always-allowed tool's code for other code of its checksum while the run waited, and once an
admin accepted that code (for scripts submitted later, as the tool page asks), the run called
code no decision that let it through had named. Now the run records each tool's whole
`code_digest`, and the worker compares that.

A collision cannot be ground in test time: the test writes the row state saving one leaves,
the tool's source changed while its checksum column stays the one the run recorded.
"""

from __future__ import annotations

import pytest

from jazzmine_web.catalog.models import Tool
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create
from tests.web.helpers import migrate, tool_accept_post

from .test_auto_approval_is_bound_to_the_accepted_code import (
    ORDERS_ONLY,
    SLIPPED,
    browser,
    prepare,
    queued_auto_approved,
)


@pytest.mark.django_db
def test_an_admin_accepting_other_code_of_the_same_checksum_does_not_widen_a_queued_run(
    api, auto, admin
) -> None:
    run = queued_auto_approved(api, auto)
    tool = auto.tools.get(name="get_orders")
    head = tool.source[: tool.source.index(":\n") + 2]
    Tool.objects.filter(pk=tool.pk).update(source=head + SLIPPED)  # the checksum column stays
    tool_accept_post(browser(admin), tool)  # for scripts submitted from now on
    tool.refresh_from_db()
    assert tool.is_always_allowed

    assert prepare(run).allowed_tools == frozenset()
    assert "its code changed since this run was let through" in run.notes[0]
    # A script submitted now is let through for the code accepted now.
    assert prepare(queued_auto_approved(api, auto)).allowed_tools == frozenset({"get_orders"})


@pytest.mark.django_db(transaction=True)
def test_runs_waiting_with_the_checksum_of_todays_code_keep_it_after_the_upgrade(
    auto, member
) -> None:
    """As catalog migration 0008 kept acceptances: a run not finished, bound to the checksum
    a tool has now, is bound to the digest of its code now; one bound to the checksum of
    other code stays unmatched, and a finished run keeps what decided it."""
    tool = auto.tools.get(name="get_orders")

    def let_through(checksum: str) -> Run:
        """A run as the policy let it through before runs carried digests (never started:
        this test's database is committed, and a worker would take it)."""
        pins = {"get_orders": checksum}
        return run_create(sandbox=auto, user=member, body=ORDERS_ONLY, start=False,
                          allowed_tools=pins)  # fmt: skip

    today, other = let_through(tool.checksum), let_through("0123456789abcdef")
    finished = let_through(tool.checksum)
    Run.objects.filter(pk=finished.pk).update(status=RunStatus.SUCCEEDED)
    try:
        migrate(("runs", "0006_run_allowed_by_reviewer"))
    finally:
        migrate()

    for run in (today, other, finished):
        run.refresh_from_db()
    assert today.allowed_tools == {"get_orders": tool.code_digest}
    assert other.allowed_tools == {"get_orders": "0123456789abcdef"}
    assert finished.allowed_tools == {"get_orders": tool.checksum}
    assert prepare(today).allowed_tools == frozenset({"get_orders"}) and today.notes == []
    assert prepare(other).allowed_tools == frozenset()
    assert "its code changed since this run was let through" in other.notes[0]
