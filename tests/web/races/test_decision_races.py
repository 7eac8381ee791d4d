"""Races of deciding: two approvals, approve vs reject/withdraw/expiry/edit, at the same moment."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from jazzmine_web.reviews.models import AuditEntry, Submission
from jazzmine_web.reviews.services import (
    ReviewError,
    submission_approve,
    submission_approve_edit,
    submission_reject,
    submission_withdraw,
    submissions_expire_overdue,
)
from jazzmine_web.runs.models import Run
from jazzmine_web.teams.models import Role
from tests.web.helpers import teammate
from tests.web.reviews.conftest import submit

from .conftest import at_once

pytestmark = pytest.mark.django_db(transaction=True)
ROUNDS = 6


def pending(api, sandbox) -> Submission:
    response = submit(api, sandbox)
    assert response.status_code == 201, response.content
    return Submission.objects.get(pk=response.json()["id"])


def fresh(pk):
    return Submission.objects.select_related("sandbox", "sandbox__team").get(pk=pk)


def check_invariants(sub: Submission) -> None:
    sub = Submission.objects.get(pk=sub.pk)
    runs = Run.objects.filter(task=sub.task, created_at__gte=sub.created_at)
    if sub.status in ("approved", "edited_and_approved"):
        assert sub.run is not None
        assert sub.run.code_sha256 == sub.approved_sha256
        assert sub.run.body == sub.approved_body and sub.run.script == sub.approved_script
    else:
        assert sub.run_id is None
    approvals = AuditEntry.objects.filter(
        submission=sub, action__in=["approved", "edited_and_approved"]
    ).count()
    started = AuditEntry.objects.filter(submission=sub, action="run_started").count()
    assert approvals == (1 if sub.run_id else 0), (sub.status, approvals)
    assert started == approvals
    return runs


def test_many_reviewers_approve_at_once_one_run(api, ecommerce, team):
    reviewers = [teammate(team, Role.REVIEWER, username=f"rev{i}") for i in range(4)]
    for _ in range(ROUNDS):
        sub = pending(api, ecommerce)
        before = Run.objects.count()
        results, errors = at_once(
            *[lambda r=r: submission_approve(submission=fresh(sub.pk), user=r) for r in reviewers]
        )
        ok = [r for r in results if r is not None]
        assert len(ok) == 1, errors
        assert all(isinstance(e, ReviewError) for e in errors if e is not None), [
            getattr(e, "_tb_text", e) for e in errors
        ]
        assert Run.objects.count() == before + 1
        check_invariants(sub)


def test_approve_vs_reject(api, ecommerce, team):
    a = teammate(team, Role.REVIEWER, username="a")
    b = teammate(team, Role.REVIEWER, username="b")
    for _ in range(ROUNDS):
        sub = pending(api, ecommerce)
        before = Run.objects.count()
        results, errors = at_once(
            lambda: submission_approve(submission=fresh(sub.pk), user=a),
            lambda: submission_reject(submission=fresh(sub.pk), user=b, feedback="no"),
        )
        assert sum(r is not None for r in results) == 1, errors
        assert all(isinstance(e, ReviewError) for e in errors if e is not None), errors
        sub = fresh(sub.pk)
        assert (sub.status == "rejected") == (Run.objects.count() == before)
        check_invariants(sub)


def test_approve_vs_withdraw(api, ecommerce, team, member):
    a = teammate(team, Role.REVIEWER, username="a")
    for _ in range(ROUNDS):
        sub = pending(api, ecommerce)
        before = Run.objects.count()
        results, errors = at_once(
            lambda: submission_approve(submission=fresh(sub.pk), user=a),
            lambda: submission_withdraw(submission=fresh(sub.pk), user=member, reason="x"),
        )
        assert sum(r is not None for r in results) == 1, errors
        assert all(isinstance(e, ReviewError) for e in errors if e is not None), [
            getattr(e, "_tb_text", e) for e in errors
        ]
        sub = fresh(sub.pk)
        assert (sub.status == "withdrawn") == (Run.objects.count() == before)
        check_invariants(sub)


def test_approve_vs_expiry(api, ecommerce, team):
    a = teammate(team, Role.REVIEWER, username="a")
    for i in range(ROUNDS):
        sub = pending(api, ecommerce)
        soon = timezone.now() + datetime.timedelta(milliseconds=30 + 5 * i)
        Submission.objects.filter(pk=sub.pk).update(expires_at=soon)
        before = Run.objects.count()

        def sweep():
            # The last sweep always comes after the deadline: a thread started late on a
            # loaded machine (past the deadline already) must still sweep once.
            while True:
                late = timezone.now() >= soon + datetime.timedelta(milliseconds=50)
                submissions_expire_overdue()
                if late:
                    return True

        _results, errors = at_once(
            lambda: submission_approve(submission=fresh(sub.pk), user=a), sweep
        )
        assert errors[1] is None, errors[1]
        assert errors[0] is None or isinstance(errors[0], ReviewError), errors[0]
        sub = fresh(sub.pk)
        assert sub.status in ("approved", "expired")
        assert (sub.status == "expired") == (Run.objects.count() == before)
        check_invariants(sub)


def test_approve_vs_edit_approve_runs_the_winner_text(api, ecommerce, team):
    a = teammate(team, Role.REVIEWER, username="a")
    b = teammate(team, Role.REVIEWER, username="b")
    edit = 'emit_result({"edited": True})\n'
    for _ in range(ROUNDS):
        sub = pending(api, ecommerce)
        results, errors = at_once(
            lambda: submission_approve(submission=fresh(sub.pk), user=a),
            lambda: submission_approve_edit(
                submission=fresh(sub.pk), user=b, body=edit, tools_seen=[]
            ),
        )
        assert sum(r is not None for r in results) == 1, errors
        assert all(isinstance(e, ReviewError) for e in errors if e is not None), [
            getattr(e, "_tb_text", e) for e in errors
        ]
        sub = fresh(sub.pk)
        check_invariants(sub)
        if sub.status == "edited_and_approved":
            assert sub.run.body == edit and sub.decided_by_id == b.pk
        else:
            assert sub.run.body == sub.body and sub.decided_by_id == a.pk


def test_two_http_approvals_at_once(api, ecommerce, team):
    from django.test import Client

    clients = []
    for i in range(3):
        user = teammate(team, Role.REVIEWER, username=f"h{i}")
        c = Client()
        c.force_login(user)
        clients.append(c)
    for _ in range(ROUNDS):
        sub = pending(api, ecommerce)
        before = Run.objects.count()
        results, errors = at_once(
            *[lambda c=c: c.post(f"/reviews/{sub.pk}/approve/").status_code for c in clients]
        )
        assert errors == [None] * 3, errors
        assert all(code < 500 for code in results), results
        assert Run.objects.count() == before + 1
        check_invariants(sub)
