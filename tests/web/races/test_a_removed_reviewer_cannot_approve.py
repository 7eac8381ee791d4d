"""A reviewer removed from the team while their approval is in flight does not approve.

The role is read before the decision's transaction (`submission_decide_check`) and again, under
lock, in it: a removal committed between the two is seen. The pause is forced where approve
validates the reviewer's edit (`script_check`), the natural gap between the check and the
decision (milliseconds to tens of milliseconds).
"""

from __future__ import annotations

import threading

import pytest

from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import deciding, submission_approve
from jazzmine_web.teams.models import Membership, Role
from jazzmine_web.teams.services import membership_remove
from tests.web.helpers import teammate
from tests.web.reviews.conftest import submit

from .conftest import at_once

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_reviewer_removed_mid_approval_does_not_approve(api, ecommerce, team, monkeypatch):
    rev = teammate(team, Role.REVIEWER, username="leaving")
    sub = Submission.objects.get(pk=submit(api, ecommerce).json()["id"])
    checked, removed = threading.Event(), threading.Event()
    real = deciding.script_check

    def slow_check(**kwargs):
        checked.set()  # the role was read: the reviewer was still a reviewer
        removed.wait(10)
        return real(**kwargs)

    monkeypatch.setattr(deciding, "script_check", slow_check)

    def approve():
        fresh = Submission.objects.select_related("sandbox__team").get(pk=sub.pk)
        return submission_approve(submission=fresh, user=rev, body='emit_result({"x": 1})\n')

    def remove():
        checked.wait(10)
        membership_remove(team=team, user=rev)
        removed.set()

    _results, errors = at_once(approve, remove)
    assert errors[1] is None
    assert not Membership.objects.filter(team=team, user=rev).exists()
    sub.refresh_from_db()
    # Once removed, the person has no say: nothing approved, nothing runs.
    assert sub.status == "pending" and sub.run_id is None, (sub.status, sub.run_id)
