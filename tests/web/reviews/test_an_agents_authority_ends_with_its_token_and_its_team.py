"""What an agent sent goes on its token and on its owner's place in the team: when either ends,
however it ends, nothing more of it runs.

A revoke, a delete (the admin's "delete" of a leaked token, or of its owner's account), a
removal from the team: each withdraws what still waits for a reviewer, and an approval that
comes anyway is refused. A run a policy let through on the token, with no person reading it,
stops with it.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.utils import timezone

from jazzmine_web.reviews.models import ReviewPolicy, Submission, SubmissionStatus
from jazzmine_web.runs.lifecycle import TOKEN_ENDED, run_decider_refusal
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.teams.models import ApiToken, Membership
from jazzmine_web.teams.services import api_token_revoke, membership_remove
from tests.waiting import wait_until
from tests.web.helpers import SPIN, until_spinning

from .conftest import set_policy, submit

pytestmark = pytest.mark.django_db(transaction=True)


def pending(api, sandbox) -> Submission:
    created = submit(api, sandbox)
    assert created.status_code == 201, created.content
    submission = Submission.objects.get(pk=created.json()["id"])
    assert submission.status == SubmissionStatus.PENDING
    return submission


def approve(client: Client, submission: Submission) -> tuple[int, str]:
    response = client.post(f"/reviews/{submission.pk}/approve/")
    submission.refresh_from_db()
    assert submission.run_id is None or response.status_code == 302
    return response.status_code, submission.status


def superuser_client() -> Client:
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "pw-root-1")
    client = Client()
    client.force_login(admin)
    return client


def test_a_token_deleted_in_the_admin_takes_its_pending_scripts_with_it(
    api, issued, gated, reviewer_client
) -> None:
    submission = pending(api, gated)
    response = superuser_client().post(
        f"/admin/teams/apitoken/{issued.token.pk}/delete/", {"post": "yes"}
    )
    assert response.status_code == 302 and not ApiToken.objects.exists()
    assert approve(reviewer_client, submission) == (409, SubmissionStatus.WITHDRAWN)
    assert "its API token was deleted" in submission.feedback


def test_an_account_deleted_with_its_tokens_leaves_nothing_to_approve(
    api, member, gated, reviewer_client
) -> None:
    submission = pending(api, gated)
    member.delete()  # its tokens go with it, and its memberships
    assert approve(reviewer_client, submission) == (409, SubmissionStatus.WITHDRAWN)
    assert Run.objects.count() == 0


def test_a_submission_whose_token_is_gone_by_sql_is_never_approved(
    api, issued, gated, reviewer_client
) -> None:
    # A delete that sent no signal (the link cleared as a delete clears it): the submission
    # still waits, and the approval refuses it.
    submission = pending(api, gated)
    Submission.objects.filter(pk=submission.pk).update(api_token=None)
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.PENDING
    response = reviewer_client.post(f"/reviews/{submission.pk}/approve/")
    submission.refresh_from_db()
    assert response.status_code == 409 and submission.status == SubmissionStatus.PENDING
    assert "no longer opens the API" in response.content.decode()
    assert Run.objects.count() == 0


def test_a_member_removed_from_the_team_takes_their_pending_scripts_with_them(
    api, member, team, gated, reviewer_client
) -> None:
    submission = pending(api, gated)
    membership_remove(team=team, user=member)
    assert approve(reviewer_client, submission) == (409, SubmissionStatus.WITHDRAWN)
    assert "left the team" in submission.feedback


def test_a_removal_that_sent_no_signal_is_refused_at_the_approval(
    api, member, team, gated, reviewer_client
) -> None:
    submission = pending(api, gated)
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM teams_membership WHERE user_id = %s AND team_id = %s",
            [member.pk, team.pk],
        )
    response = reviewer_client.post(f"/reviews/{submission.pk}/approve/")
    submission.refresh_from_db()
    assert response.status_code == 409 and submission.status == SubmissionStatus.PENDING
    assert "no longer in this team" in response.content.decode()
    assert Run.objects.count() == 0


@pytest.mark.parametrize("end", ["revoke", "delete"])
def test_a_queued_run_a_policy_let_through_ends_with_its_token(
    api, issued, member, ecommerce, no_worker, end
) -> None:
    set_policy(ecommerce, ReviewPolicy.NEVER)
    runs = [Run.objects.get(pk=submit(api, ecommerce).json()["run"]["id"]) for _ in range(3)]
    assert {run.status for run in runs} == {RunStatus.QUEUED}
    assert {run.api_token_id for run in runs} == {issued.token.pk}
    if end == "revoke":
        api_token_revoke(user=member, token_id=issued.token.pk)
    else:
        ApiToken.objects.filter(pk=issued.token.pk).delete()
    for run in runs:
        run.refresh_from_db()
        assert (run.status, run.outcome) == (RunStatus.FAILED, "cancelled")
        assert TOKEN_ENDED in run.message


def test_a_token_ended_without_a_signal_is_refused_at_the_claim(
    api, issued, ecommerce, no_worker
) -> None:
    set_policy(ecommerce, ReviewPolicy.NEVER)
    run = Run.objects.get(pk=submit(api, ecommerce).json()["run"]["id"])
    assert run_decider_refusal(run=run, team_id=ecommerce.team_id) == ""
    ApiToken.objects.filter(pk=issued.token.pk).update(revoked_at=timezone.now())
    assert run_decider_refusal(run=run, team_id=ecommerce.team_id) == TOKEN_ENDED
    ApiToken.objects.filter(pk=issued.token.pk).delete()  # the run keeps the id of a token gone
    assert run_decider_refusal(run=run, team_id=ecommerce.team_id) == TOKEN_ENDED


def test_a_run_a_reviewer_approved_goes_on_the_reviewers_authority(
    api, issued, member, gated, reviewer_client, no_worker
) -> None:
    submission = pending(api, gated)
    assert approve(reviewer_client, submission)[0] == 302
    run = Run.objects.get(pk=submission.run_id)
    assert run.api_token_id is None  # a person read it: the agent's token is not its authority
    api_token_revoke(user=member, token_id=issued.token.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED


@pytest.mark.docker
def test_a_running_script_stops_when_its_token_is_revoked(api, issued, member, ecommerce, worker):
    set_policy(ecommerce, ReviewPolicy.NEVER)
    run_id = submit(api, ecommerce, SPIN).json()["run"]["id"]
    until_spinning(run_id)
    api_token_revoke(user=member, token_id=issued.token.pk)
    run = wait_until(
        lambda: Run.objects.filter(pk=run_id, status=RunStatus.FAILED).first(), timeout=10
    )
    assert run.outcome == "cancelled" and TOKEN_ENDED in run.message
    assert Membership.objects.filter(user=member).exists()  # the person still may run things
