from __future__ import annotations

import pytest

from jazzmine_web.reviews.models import ReviewPolicy, Submission
from jazzmine_web.runs.models import Run

from .conftest import BODY, allow_tools, set_policy, submit

pytestmark = pytest.mark.django_db


def test_by_default_every_script_waits_for_a_reviewer(api, ecommerce) -> None:
    assert submit(api, ecommerce).json()["status"] == "pending"
    assert Run.objects.count() == 0


def test_never_review_runs_at_once_as_an_api_run(api, ecommerce) -> None:
    set_policy(ecommerce, ReviewPolicy.NEVER)
    state = submit(api, ecommerce).json()
    assert state["status"] == "auto_approved"
    run = Run.objects.get()
    assert run.source == "api"
    assert state["run"]["id"] == str(run.pk)
    assert state["approved_sha256"] == run.code_sha256


def test_a_script_calling_only_always_allowed_tools_skips_review(api, ecommerce) -> None:
    set_policy(ecommerce, ReviewPolicy.UNLISTED_TOOLS)
    allow_tools(ecommerce, "get_orders")
    assert submit(api, ecommerce).json()["status"] == "auto_approved"


def test_a_script_calling_a_tool_that_is_not_always_allowed_waits(api, ecommerce) -> None:
    set_policy(ecommerce, ReviewPolicy.UNLISTED_TOOLS)
    allow_tools(ecommerce, "get_orders")
    body = BODY + 'emit_log(get_user("U-1").message)\n'
    state = submit(api, ecommerce, body=body).json()
    assert state["status"] == "pending"
    flags = {t["name"]: t["always_allow"] for t in state["tools_called"]}
    assert flags == {"get_orders": True, "get_user": False}


def test_a_script_with_violations_never_runs_whatever_the_policy(api, ecommerce) -> None:
    set_policy(ecommerce, ReviewPolicy.NEVER)
    assert submit(api, ecommerce, body="import os\n").json()["status"] == "rejected_by_validator"
    assert Run.objects.count() == 0


def test_only_team_admins_change_the_policy(reviewer_client, reviewer, ecommerce, team) -> None:
    url = f"/reviews/sandboxes/{ecommerce.pk}/policy/"
    response = reviewer_client.post(url, {"policy": "never", "timeout_seconds": "60"})
    assert response.status_code == 403  # nothing they send would do
    from jazzmine_web.teams.services import membership_set

    membership_set(team=team, user=reviewer, role="admin")
    response = reviewer_client.post(url, {"policy": "never", "timeout_seconds": "60"})
    assert response.status_code == 302
    assert ecommerce.review_settings.policy == "never"
    assert ecommerce.review_audit.filter(action="policy_changed").count() == 1


def test_the_policy_in_force_is_kept_on_the_submission(api, ecommerce) -> None:
    state = submit(api, ecommerce).json()
    set_policy(ecommerce, ReviewPolicy.NEVER)
    assert Submission.objects.get(pk=state["id"]).policy == ReviewPolicy.ALWAYS
