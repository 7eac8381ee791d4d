"""The run page's Cancel stops the run for its author and its team's admins, and no one else.

An admin must be able to stop what a member started (a run gone wrong, a member gone); a
reviewer or another member only sees it.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import membership_set, team_create
from tests.waiting import wait_until
from tests.web.helpers import SPIN, teammate, until_spinning

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def spinning(ecommerce, member) -> Run:
    run = run_create(sandbox=ecommerce, user=member, body=SPIN)
    until_spinning(run.pk)
    return run


def test_the_author_cancels_a_running_run_from_its_page(ecommerce, member, worker):
    run = spinning(ecommerce, member)
    author = logged_in(member)
    page = author.get(f"/runs/{run.pk}/").content.decode()
    assert "data-run-cancel" in page and f"/runs/{run.pk}/cancel/" in page
    answer = author.post(f"/runs/{run.pk}/cancel/")
    assert answer.status_code == 302 and answer["Location"] == f"/runs/{run.pk}/"
    ended = wait_until(
        lambda: Run.objects.filter(pk=run.pk, status=RunStatus.FAILED).first(), timeout=10
    )
    assert ended.outcome == "cancelled" and f"cancelled by {member.username}" in ended.message
    # Once it has ended the page offers no cancel, and asking again changes nothing.
    assert "data-run-cancel" not in author.get(f"/runs/{run.pk}/").content.decode()
    again = author.post(f"/runs/{run.pk}/cancel/", follow=True)
    assert Run.objects.get(pk=run.pk).message == ended.message
    # A page left open past the end said nothing of why its Cancel changed nothing.
    assert "The run had already ended (failed): nothing to cancel." in again.content.decode()


@pytest.mark.django_db
def test_a_second_cancel_while_the_first_is_under_way_says_so(ecommerce, member) -> None:
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, cancel_reason="asked")
    page = logged_in(member).post(f"/runs/{run.pk}/cancel/", follow=True).content.decode()
    assert "A stop was asked already" in page


@pytest.mark.parametrize("role", [Role.MEMBER, Role.REVIEWER])
def test_a_teammate_sees_no_cancel_and_cannot_post_one(ecommerce, member, team, worker, role):
    run = spinning(ecommerce, member)
    colleague = logged_in(teammate(team, role))
    assert "data-run-cancel" not in colleague.get(f"/runs/{run.pk}/").content.decode()
    assert colleague.post(f"/runs/{run.pk}/cancel/").status_code == 403
    assert Run.objects.get(pk=run.pk).status == RunStatus.RUNNING
    logged_in(member).post(f"/runs/{run.pk}/cancel/")


def test_a_team_admin_cancels_a_members_run(ecommerce, member, admin, worker):
    run = spinning(ecommerce, member)
    boss = logged_in(admin)
    assert "data-run-cancel" in boss.get(f"/runs/{run.pk}/").content.decode()
    assert boss.post(f"/runs/{run.pk}/cancel/").status_code == 302
    ended = wait_until(
        lambda: Run.objects.filter(pk=run.pk, status=RunStatus.FAILED).first(), timeout=10
    )
    # The run says who stopped it: not its author.
    assert ended.outcome == "cancelled" and f"cancelled by {admin.username}" in ended.message


def test_an_admin_of_another_team_cannot_cancel(ecommerce, member, django_user_model):
    other = team_create(name="Elsewhere", slug="elsewhere")
    stranger = django_user_model.objects.create_user(username="stranger", password="x" * 12)
    membership_set(team=other, user=stranger, role=Role.ADMIN)
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    assert logged_in(stranger).post(f"/runs/{run.pk}/cancel/").status_code == 404
    assert Run.objects.get(pk=run.pk).status == RunStatus.QUEUED


def test_cancel_is_a_post_and_unknown_runs_are_not_found(ecommerce, member, outsider):
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    assert logged_in(member).get(f"/runs/{run.pk}/cancel/").status_code == 405
    assert logged_in(outsider).post(f"/runs/{run.pk}/cancel/").status_code == 404
    missing = "00000000-0000-0000-0000-000000000000"
    assert logged_in(member).post(f"/runs/{missing}/cancel/").status_code == 404
    assert Client().post(f"/runs/{run.pk}/cancel/").status_code in (302, 403)  # to the login
    assert Run.objects.get(pk=run.pk).status == RunStatus.QUEUED


@pytest.mark.django_db
def test_a_stop_waiting_for_its_worker_is_said_on_the_page_and_not_offered_again(
    ecommerce, member
) -> None:
    # Its worker is dead: nobody stops the sandbox until the reaper finds it gone. The page
    # showed "Running" and the same Cancel again, saying nothing, after the press.
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, worker="gone@host")
    author = logged_in(member)
    for page in (
        author.post(f"/runs/{run.pk}/cancel/", follow=True).content.decode(),
        author.get(f"/runs/{run.pk}/").content.decode(),  # and after a reload
    ):
        assert f"A stop was asked (cancelled by {member.username})" in page
        assert "data-run-cancel" not in page
    # The notice is the pane's, asked for again while the run is live: gone once it ends
    # (it stayed above "Cancelled" until a reload).
    wait = f"/runs/{run.pk}/wait/"
    assert "A stop was asked" in author.get(wait).content.decode()
    Run.objects.filter(pk=run.pk).update(status=RunStatus.FAILED, outcome="cancelled")
    ended = author.get(wait).content.decode()
    assert "A stop was asked" not in ended and "hx-trigger" not in ended
