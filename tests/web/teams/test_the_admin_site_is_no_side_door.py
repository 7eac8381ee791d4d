"""The Django admin hands out no team role and revives or moves no token.

Memberships of a team are changed there by its admins (or a superuser), not by any staff user
with the model permission; tokens are shown, and revoked through the service.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from jazzmine_web.reviews.models import WebhookEndpoint
from jazzmine_web.teams.models import ApiToken, Membership, Role
from jazzmine_web.teams.services import api_token_create
from tests.web.helpers import staff_browser, teammate

pytestmark = pytest.mark.django_db


def superuser(django_user_model) -> Client:
    root = django_user_model.objects.create_superuser(username="root", password="x" * 12)
    client = Client()
    client.force_login(root)
    return client


def role_of(user, team) -> str:
    return Membership.objects.get(user=user, team=team).role


def test_a_staff_member_cannot_make_themselves_team_admin(member, team) -> None:
    mine = Membership.objects.get(user=member, team=team)
    response = staff_browser(member, "teams").post(
        f"/admin/teams/membership/{mine.pk}/change/", {"role": Role.ADMIN}
    )
    assert response.status_code == 403
    assert role_of(member, team) == Role.MEMBER


def test_a_staff_member_cannot_add_an_admin_membership(member, team, outsider) -> None:
    response = staff_browser(member, "teams").post(
        "/admin/teams/membership/add/", {"team": team.pk, "user": outsider.pk, "role": "admin"}
    )
    assert response.status_code == 403
    assert not Membership.objects.filter(user=outsider).exists()


def test_a_staff_member_cannot_do_it_on_the_teams_page(member, team) -> None:
    mine = Membership.objects.get(user=member, team=team)
    response = staff_browser(member, "teams").post(
        f"/admin/teams/team/{team.pk}/change/",
        {
            "name": team.name,
            "slug": team.slug,
            "memberships-TOTAL_FORMS": "1",
            "memberships-INITIAL_FORMS": "1",
            "memberships-0-id": mine.pk,
            "memberships-0-team": team.pk,
            "memberships-0-user": member.pk,
            "memberships-0-role": "admin",
        },
    )
    assert response.status_code in (200, 302, 403)
    assert role_of(member, team) == Role.MEMBER


def test_a_team_admin_changes_roles_in_their_team(team, member) -> None:
    admin = teammate(team, Role.ADMIN)
    theirs = Membership.objects.get(user=member, team=team)
    response = staff_browser(admin, "teams").post(
        f"/admin/teams/membership/{theirs.pk}/change/", {"role": Role.REVIEWER}
    )
    assert response.status_code == 302
    assert role_of(member, team) == Role.REVIEWER


def test_a_superuser_changes_roles_anywhere(team, member, django_user_model) -> None:
    theirs = Membership.objects.get(user=member, team=team)
    response = superuser(django_user_model).post(
        f"/admin/teams/membership/{theirs.pk}/change/", {"role": Role.ADMIN}
    )
    assert response.status_code == 302
    assert role_of(member, team) == Role.ADMIN


def test_a_token_is_neither_revived_nor_moved_to_another_user(
    member, outsider, django_user_model
) -> None:
    token = api_token_create(user=member, name="ci-bot").token
    ApiToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now())
    superuser(django_user_model).post(
        f"/admin/teams/apitoken/{token.pk}/change/",
        {"name": "ci-bot", "user": outsider.pk, "revoked_at_0": "", "revoked_at_1": ""},
    )
    token.refresh_from_db()
    assert token.user == member
    assert token.revoked_at is not None


def test_revoking_in_the_admin_goes_through_the_service(member, django_user_model) -> None:
    token = api_token_create(user=member, name="ci-bot").token
    hook = WebhookEndpoint.objects.create(
        api_token=token, url="https://agent.example/hook", secret_ciphertext="c"
    )
    response = superuser(django_user_model).post(
        "/admin/teams/apitoken/", {"action": "revoke", "_selected_action": [token.pk]}
    )
    assert response.status_code == 302
    token.refresh_from_db()
    hook.refresh_from_db()
    assert token.revoked_at is not None
    assert hook.active is False  # its webhook stopped with it
