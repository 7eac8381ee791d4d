"""A run goes on only while the person who let it through still may.

A run carries its person's decision: a member's Run in the playground (every tool), an agent's
script under its owner's token, a reviewer's approval. That authority can end while the run
waits or runs: the person is removed from the team, demoted below the role the decision
needed, deactivated, deleted. A queued run whose person left used to start anyway, with every
tool and the sandbox's secrets, and nobody else could stop it.

Now the worker's claim asks again before anything starts (whatever changed the membership or
the account, a bulk update included), and a change made through the models stops the
person's live runs at once: a queued one ends, a running one's sandbox is killed.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction
from django.test import Client

from jazzmine_web.runs import receivers
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.preparation import run_claim_prepare
from jazzmine_web.runs.services import run_create
from jazzmine_web.teams.models import Membership, Role
from jazzmine_web.teams.services import membership_remove, membership_set
from tests.waiting import wait_until
from tests.web.helpers import SPIN, teammate, until_spinning

pytestmark = pytest.mark.django_db(transaction=True)


def queued(sandbox, user, *, source: str = "playground") -> Run:
    return run_create(
        sandbox=sandbox, user=user, body="emit_result(1)\n", start=False, source=source
    )


def claim(run: Run):
    return run_claim_prepare(run_id=run.pk, worker="w1@test", known_images=frozenset())


def ended_cancelled(run: Run, *words: str) -> Run:
    run.refresh_from_db()
    assert (run.status, run.outcome) == (RunStatus.FAILED, "cancelled"), run.message
    assert run.worker == "" and run.started_at is None  # no worker had it: nothing ran
    for word in words:
        assert word in run.message, run.message
    return run


# The claim asks again, for changes nothing told the runs of (a bulk update, a database
# edited by hand, a receiver that failed): here the receivers hear nothing.


@pytest.fixture
def unheard(monkeypatch):
    monkeypatch.setattr(receivers, "runs_of_person_recheck", lambda **_kwargs: 0)
    monkeypatch.setattr(receivers, "runs_live_of_person", lambda **_kwargs: [])


def test_a_queued_run_of_a_member_no_longer_in_the_team_does_not_start(
    unheard, ecommerce, member, team
):
    run = queued(ecommerce, member)
    membership_remove(team=team, user=member)
    assert claim(run) is None
    ended_cancelled(run, "cancelled before it started", member.username, "no longer in")


def test_a_queued_run_of_a_deactivated_account_does_not_start(unheard, ecommerce, member):
    run = queued(ecommerce, member)
    get_user_model().objects.filter(pk=member.pk).update(is_active=False)
    assert claim(run) is None
    ended_cancelled(run, "cancelled before it started", "deactivated")


def test_a_queued_run_of_a_deleted_account_does_not_start(unheard, ecommerce, member):
    run = queued(ecommerce, member)
    Run.objects.filter(pk=run.pk).update(created_by=None)  # what deleting the account leaves
    assert claim(run) is None
    ended_cancelled(run, "cancelled before it started", "deleted")


def test_a_reviewers_approval_needs_a_reviewer_still(unheard, ecommerce, team):
    reviewer = teammate(team, Role.REVIEWER)
    approved = queued(ecommerce, reviewer, source="review")
    Membership.objects.filter(user=reviewer, team=team).update(role=Role.MEMBER)
    assert claim(approved) is None
    ended_cancelled(approved, "no longer a reviewer")


@pytest.mark.parametrize("role", [Role.REVIEWER, Role.ADMIN])
def test_a_reviewers_approval_starts_while_they_review(ecommerce, team, role):
    reviewer = teammate(team, role)
    approved = queued(ecommerce, reviewer, source="review")
    prepared = claim(approved)
    assert prepared is not None
    approved.refresh_from_db()
    assert approved.worker == "w1@test"


def test_a_members_own_run_needs_only_membership(ecommerce, member):
    # A member's playground run and an agent's (source "api") need no more than membership.
    for source in ("playground", "api"):
        run = queued(ecommerce, member, source=source)
        assert claim(run) is not None


# A change made through the models stops the person's live runs at once.


def test_removing_a_member_ends_their_queued_runs(ecommerce, member, team):
    first, second = queued(ecommerce, member), queued(ecommerce, member)
    membership_remove(team=team, user=member)
    for run in (first, second):
        ended_cancelled(run, "cancelled: ", "no longer in the sandbox's team")


def test_deactivating_an_account_ends_its_queued_runs(ecommerce, member):
    run = queued(ecommerce, member)
    member.is_active = False
    member.save()
    ended_cancelled(run, "deactivated")


def test_deleting_an_account_ends_its_queued_runs(ecommerce, member):
    run = queued(ecommerce, member)
    member.delete()
    run = ended_cancelled(run, "deleted")
    assert run.created_by is None


def test_a_reviewer_demoted_ends_the_runs_they_approved_not_their_own(ecommerce, team):
    reviewer = teammate(team, Role.REVIEWER)
    approved = queued(ecommerce, reviewer, source="review")
    own = queued(ecommerce, reviewer)
    membership_set(team=team, user=reviewer, role=Role.MEMBER)
    ended_cancelled(approved, "no longer a reviewer")
    own.refresh_from_db()
    assert own.status == RunStatus.QUEUED  # a member may still run their own


def test_signing_in_or_staying_a_member_stops_nothing(ecommerce, member, team):
    run = queued(ecommerce, member)
    member.set_password("a-new-long-password")
    member.save()  # a save of the whole account, still active
    assert Client().login(username=member.username, password="a-new-long-password")
    membership_set(team=team, user=member, role=Role.REVIEWER)  # promoted
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED and run.cancel_reason == ""


def test_a_change_rolled_back_stops_nothing(ecommerce, member, team):
    run = queued(ecommerce, member)
    with pytest.raises(RuntimeError), transaction.atomic():
        membership_remove(team=team, user=member)
        raise RuntimeError("the admin's save failed")
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED and run.cancel_reason == ""


@pytest.mark.docker
def test_removing_a_member_kills_their_running_sandbox(ecommerce, member, team, worker):
    run = run_create(sandbox=ecommerce, user=member, body=SPIN)
    until_spinning(run.pk)
    membership_remove(team=team, user=member)
    ended = wait_until(
        lambda: Run.objects.filter(pk=run.pk, status=RunStatus.FAILED).first(), timeout=10
    )
    assert ended.outcome == "cancelled"
    assert "no longer in the sandbox's team" in ended.message
