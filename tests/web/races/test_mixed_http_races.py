"""Everything at once through HTTP: approve, edit-approve, reject, withdraw, expiry, policy."""

from __future__ import annotations

import datetime

import pytest
from django.test import Client
from django.utils import timezone

from jazzmine_web.reviews.models import AuditEntry, Submission
from jazzmine_web.reviews.services import review_settings_set, submissions_expire_overdue
from jazzmine_web.runs.models import Run
from jazzmine_web.teams.models import Role
from tests.web.helpers import teammate
from tests.web.reviews.conftest import submit

from .conftest import at_once

pytestmark = pytest.mark.django_db(transaction=True)


def test_every_decision_at_once(api, issued, ecommerce, team, team_admin):
    people = []
    for name in ("r1", "r2", "r3"):
        c = Client()
        c.force_login(teammate(team, Role.REVIEWER, username=name))
        people.append(c)
    agent = Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}")
    edit = 'emit_result({"edited": 1})\n'
    for i in range(8):
        review_settings_set(sandbox=ecommerce, user=team_admin, policy="always", timeout_seconds=60)
        sub = Submission.objects.get(pk=submit(api, ecommerce).json()["id"])
        Submission.objects.filter(pk=sub.pk).update(
            expires_at=timezone.now() + datetime.timedelta(milliseconds=40)
        )
        before = Run.objects.count()
        calls = [
            lambda: people[0].post(f"/reviews/{sub.pk}/approve/").status_code,
            lambda: (
                people[1]
                .post(f"/reviews/{sub.pk}/edit/", {"body": edit, "tools_seen": []})
                .status_code
            ),
            lambda: people[2].post(f"/reviews/{sub.pk}/reject/", {"feedback": "no"}).status_code,
            lambda: (
                agent.post(
                    f"/api/v1/submissions/{sub.pk}/withdraw/", {}, content_type="application/json"
                ).status_code
            ),
            lambda: [submissions_expire_overdue() for _ in range(30)] and 0,
            lambda: (
                review_settings_set(
                    sandbox=ecommerce,
                    user=team_admin,
                    policy=("never", "always")[i % 2],
                    timeout_seconds=60,
                )
                and 0
            ),
        ]
        results, errors = at_once(*calls)
        assert errors == [None] * len(calls), [getattr(e, "_tb_text", e) for e in errors if e]
        assert all(code < 500 for code in results), results
        sub = Submission.objects.get(pk=sub.pk)
        decided = AuditEntry.objects.filter(
            submission=sub,
            action__in=["approved", "edited_and_approved", "rejected", "withdrawn", "expired"],
        ).count()
        assert decided == 1, (sub.status, decided)
        runs = Run.objects.count() - before
        if sub.status in ("approved", "edited_and_approved"):
            assert runs == 1 and sub.run.code_sha256 == sub.approved_sha256
            assert sub.run.body == (edit if sub.status == "edited_and_approved" else sub.body)
        else:
            assert runs == 0 and sub.run_id is None
