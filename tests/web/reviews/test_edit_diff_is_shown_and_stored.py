"""After edit-and-approve, the change from the agent's script is on the page, in the audit, on the run."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string

from jazzmine_web.reviews.models import AuditAction, AuditEntry, Submission
from jazzmine_web.reviews.services import submission_approve_edit

from .conftest import BODY, submit

pytestmark = pytest.mark.django_db

EDIT = BODY.replace('emit_result({"total": total})', 'emit_result({"total": round(total, 2)})')


@pytest.fixture
def edited(api, ecommerce, reviewer):
    state = submit(api, ecommerce).json()
    submission = Submission.objects.get(pk=state["id"])
    return submission_approve_edit(
        submission=submission, user=reviewer, body=EDIT, tools_seen=["get_orders"]
    )


def test_the_audit_entry_stores_the_diff(edited) -> None:
    entry = AuditEntry.objects.get(submission=edited, action=AuditAction.EDITED)
    diff = entry.data["diff"]
    assert "--- agent's script" in diff and "+++ reviewer's edit" in diff
    assert '-emit_result({"total": total})' in diff
    assert '+emit_result({"total": round(total, 2)})' in diff


def test_the_review_page_shows_the_diff_once_approved(edited, reviewer_client) -> None:
    html = reviewer_client.get(f"/reviews/{edited.pk}/").content.decode()
    assert "data-edit-diff" in html and "The reviewer's edit" in html
    assert '<span class="gd">-emit_result' in html and '<span class="gi">+emit_result' in html


def test_the_audit_page_shows_the_diff(edited, reviewer_client) -> None:
    html = reviewer_client.get("/reviews/audit/?decision=edited").content.decode()
    assert 'class="audit-diff"' in html and '<span class="gi">+emit_result' in html


def test_the_run_shows_the_diff(edited) -> None:
    html = render_to_string("reviews/_run_edit.html", {"run": edited.run})
    assert "data-edit-diff" in html and "Edited by grace before it ran" in html
    assert '<span class="gi">+emit_result' in html


def test_a_run_without_a_review_shows_nothing(edited, ecommerce, member) -> None:
    from jazzmine_web.runs.services import run_create

    run = run_create(sandbox=ecommerce, user=member, body=BODY, task="t", source="playground")
    assert render_to_string("reviews/_run_edit.html", {"run": run}).strip() == ""


def test_an_unchanged_edit_is_a_plain_approval(api, ecommerce, reviewer) -> None:
    state = submit(api, ecommerce).json()
    submission = Submission.objects.get(pk=state["id"])
    approved = submission_approve_edit(
        submission=submission,
        user=reviewer,
        body=BODY.replace("\n", "\r\n"),
        tools_seen=["get_orders"],
    )
    assert approved.status == "approved"
    assert not AuditEntry.objects.filter(submission=approved, action=AuditAction.EDITED).exists()
