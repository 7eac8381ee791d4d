"""The Django admin changes a review policy only as the review page does: admins, audited.

Submissions, the audit trail and webhooks are records there: nobody edits them in the admin.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.reviews.models import (
    AuditEntry,
    ReviewPolicy,
    SandboxReviewSettings,
    Submission,
    WebhookDelivery,
    WebhookEndpoint,
)
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import membership_set, team_create
from tests.web.helpers import staff_browser, teammate

from .conftest import set_policy, submit

pytestmark = pytest.mark.django_db

SETTINGS = "/admin/reviews/sandboxreviewsettings/"


def superuser_client(django_user_model) -> tuple[Client, object]:
    root = django_user_model.objects.create_superuser(username="root", password="x" * 12)
    client = Client()
    client.force_login(root)
    return client, root


def turn_review_off(client: Client, sandbox):
    return client.post(
        f"{SETTINGS}{sandbox.pk}/change/", {"policy": ReviewPolicy.NEVER, "timeout_seconds": 60}
    )


def policy_changes(sandbox) -> list[tuple[str, dict]]:
    entries = AuditEntry.objects.filter(sandbox=sandbox, action="policy_changed")
    return [(e.actor_label, e.data) for e in entries]


def test_a_staff_member_who_is_no_team_admin_cannot_turn_review_off(member, ecommerce) -> None:
    set_policy(ecommerce, ReviewPolicy.ALWAYS)
    response = turn_review_off(staff_browser(member, "reviews"), ecommerce)
    assert response.status_code == 403
    row = SandboxReviewSettings.objects.get(sandbox=ecommerce)
    assert (row.policy, row.timeout_seconds) == (ReviewPolicy.ALWAYS, 3600)
    assert policy_changes(ecommerce) == []


def test_a_staff_reviewer_cannot_either(team, ecommerce) -> None:
    set_policy(ecommerce, ReviewPolicy.ALWAYS)
    reviewer = teammate(team, Role.REVIEWER, username="rita")
    assert turn_review_off(staff_browser(reviewer, "reviews"), ecommerce).status_code == 403
    assert SandboxReviewSettings.objects.get(sandbox=ecommerce).policy == ReviewPolicy.ALWAYS


def test_an_admin_of_another_team_cannot_either(outsider, ecommerce) -> None:
    set_policy(ecommerce, ReviewPolicy.ALWAYS)
    membership_set(team=team_create(name="Other", slug="other"), user=outsider, role=Role.ADMIN)
    assert turn_review_off(staff_browser(outsider, "reviews"), ecommerce).status_code == 403
    assert SandboxReviewSettings.objects.get(sandbox=ecommerce).policy == ReviewPolicy.ALWAYS


def test_a_staff_member_cannot_create_the_row_that_turns_review_off(member, ecommerce) -> None:
    client = staff_browser(member, "reviews")
    response = client.post(
        f"{SETTINGS}add/",
        {"sandbox": ecommerce.pk, "policy": ReviewPolicy.NEVER, "timeout_seconds": 60},
    )
    assert response.status_code in (200, 403)  # the form refuses the sandbox, or the service
    assert not SandboxReviewSettings.objects.filter(sandbox=ecommerce).exists()
    assert policy_changes(ecommerce) == []


def test_a_staff_member_cannot_delete_the_row(member, ecommerce) -> None:
    set_policy(ecommerce, ReviewPolicy.UNLISTED_TOOLS)
    client = staff_browser(member, "reviews")
    response = client.post(f"{SETTINGS}{ecommerce.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    assert SandboxReviewSettings.objects.get(sandbox=ecommerce).policy == "unlisted_tools"


def test_a_team_admins_change_in_the_admin_is_made_and_audited(team_admin, ecommerce) -> None:
    set_policy(ecommerce, ReviewPolicy.ALWAYS)
    response = turn_review_off(staff_browser(team_admin, "reviews"), ecommerce)
    assert response.status_code == 302
    row = SandboxReviewSettings.objects.get(sandbox=ecommerce)
    assert (row.policy, row.updated_by) == (ReviewPolicy.NEVER, team_admin)
    assert policy_changes(ecommerce) == [("grace", {"policy": "never", "timeout_seconds": 60})]


def test_a_superusers_change_in_the_admin_is_audited(django_user_model, ecommerce) -> None:
    set_policy(ecommerce, ReviewPolicy.ALWAYS)
    client, root = superuser_client(django_user_model)
    assert turn_review_off(client, ecommerce).status_code == 302
    row = SandboxReviewSettings.objects.get(sandbox=ecommerce)
    assert (row.policy, row.updated_by) == (ReviewPolicy.NEVER, root)
    assert policy_changes(ecommerce) == [("root", {"policy": "never", "timeout_seconds": 60})]


def test_a_superuser_adding_the_row_goes_through_the_service(django_user_model, ecommerce) -> None:
    client, _ = superuser_client(django_user_model)
    response = client.post(
        f"{SETTINGS}add/",
        {"sandbox": ecommerce.pk, "policy": ReviewPolicy.UNLISTED_TOOLS, "timeout_seconds": 120},
    )
    assert response.status_code == 302
    assert policy_changes(ecommerce) == [
        ("root", {"policy": "unlisted_tools", "timeout_seconds": 120})
    ]


def test_a_timeout_out_of_bounds_is_a_form_error(django_user_model, ecommerce) -> None:
    set_policy(ecommerce, ReviewPolicy.ALWAYS)
    client, _ = superuser_client(django_user_model)
    response = client.post(
        f"{SETTINGS}{ecommerce.pk}/change/", {"policy": ReviewPolicy.NEVER, "timeout_seconds": 1}
    )
    assert response.status_code == 200
    assert b"between 10 seconds and 30 days" in response.content
    assert SandboxReviewSettings.objects.get(sandbox=ecommerce).policy == ReviewPolicy.ALWAYS


@pytest.fixture
def pending(api, ecommerce) -> Submission:
    set_policy(ecommerce, ReviewPolicy.ALWAYS)
    response = submit(api, ecommerce)
    assert response.status_code == 201, response.content
    return Submission.objects.get(pk=response.json()["id"])


@pytest.mark.parametrize("who", ["staff member", "superuser"])
def test_nobody_edits_a_pending_submissions_script_or_status(
    who, pending, member, django_user_model
) -> None:
    client = (
        staff_browser(member, "reviews")
        if who == "staff member"
        else superuser_client(django_user_model)[0]
    )
    response = client.post(
        f"/admin/reviews/submission/{pending.pk}/change/",
        {
            "sandbox": pending.sandbox_id,
            "task": pending.task,
            "body": "emit_result(open('/etc/passwd').read())",
            "script": "emit_result(open('/etc/passwd').read())",
            "status": "approved",
            "policy": pending.policy,
            "attempt": 1,
            "language": "python",
        },
    )
    assert response.status_code == 403
    fresh = Submission.objects.get(pk=pending.pk)
    assert (fresh.status, fresh.body, fresh.script) == ("pending", pending.body, pending.script)
    # Nor is it deleted, which would take its audit trail with it.
    response = client.post(f"/admin/reviews/submission/{pending.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    assert AuditEntry.objects.filter(submission=pending).exists()


@pytest.mark.parametrize("who", ["staff member", "superuser"])
def test_nobody_writes_or_erases_the_audit_trail(who, pending, member, django_user_model) -> None:
    client = (
        staff_browser(member, "reviews")
        if who == "staff member"
        else superuser_client(django_user_model)[0]
    )
    before = AuditEntry.objects.count()
    response = client.post(
        "/admin/reviews/auditentry/add/",
        {"sandbox": pending.sandbox_id, "action": "approved", "actor_label": "rita"},
    )
    assert response.status_code == 403
    entry = AuditEntry.objects.filter(submission=pending).first()
    response = client.post(f"/admin/reviews/auditentry/{entry.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    assert AuditEntry.objects.count() == before


def test_a_revoked_tokens_webhook_is_not_brought_back_or_moved(
    api, issued, member, django_user_model
) -> None:
    endpoint = WebhookEndpoint.objects.create(
        api_token=issued.token,
        url="https://agent.example/hook",
        secret_ciphertext="c",
        active=False,
    )
    client, _ = superuser_client(django_user_model)
    response = client.post(
        f"/admin/reviews/webhookendpoint/{endpoint.pk}/change/",
        {"api_token": issued.token.pk, "url": "http://169.254.169.254/", "active": "on"},
    )
    assert response.status_code == 403
    endpoint.refresh_from_db()
    assert (endpoint.url, endpoint.active) == ("https://agent.example/hook", False)


def test_nobody_adds_a_delivery_to_send_a_signed_body_anywhere(issued, django_user_model) -> None:
    endpoint = WebhookEndpoint.objects.create(
        api_token=issued.token, url="https://agent.example/hook", secret_ciphertext="c"
    )
    client, _ = superuser_client(django_user_model)
    response = client.post(
        "/admin/reviews/webhookdelivery/add/",
        {"endpoint": endpoint.pk, "event": "x", "url": "http://10.0.0.1/", "body": "{}"},
    )
    assert response.status_code == 403
    assert not WebhookDelivery.objects.exists()
