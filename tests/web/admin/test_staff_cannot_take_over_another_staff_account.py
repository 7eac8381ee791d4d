"""A staff user who manages accounts cannot take over another staff account.

Only a superuser grants permissions. A staff user given the account permissions could set the
password of another staff user who holds more (the catalog's, the teams'), sign in as them and
use those: a grant of permissions in all but name. Ordinary accounts and one's own stay theirs
to manage (see tests/web/teams/test_staff_cannot_make_anyone_more_than_staff.py).
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-enough-password-1"
TAKEN = "taken-over-password-9"


@pytest.fixture
def manager(django_user_model) -> Client:
    """A staff user with every account permission (users, groups), and their browser."""
    user = django_user_model.objects.create_user(username="manager", password=PASSWORD)
    user.is_staff = True
    user.save()
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="auth"))
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def operator(django_user_model):
    """A staff user a superuser gave the catalog's and the teams' permissions."""
    user = django_user_model.objects.create_user(username="operator", password=PASSWORD)
    user.is_staff = True
    user.save()
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label__in=["catalog", "teams"])
    )
    return user


def test_a_staff_user_cannot_set_another_staff_users_password(manager, operator) -> None:
    response = manager.post(
        f"/admin/auth/user/{operator.pk}/password/", {"password1": TAKEN, "password2": TAKEN}
    )
    assert response.status_code == 403
    operator.refresh_from_db()
    assert operator.check_password(PASSWORD)


def test_a_staff_user_cannot_change_or_delete_another_staff_account(manager, operator) -> None:
    response = manager.post(
        f"/admin/auth/user/{operator.pk}/change/",
        {
            "username": "operator",
            "email": "attacker@example.com",
            "is_staff": "on",
            "date_joined_0": "2024-01-01",
            "date_joined_1": "00:00:00",
        },
    )
    assert response.status_code == 403
    assert (
        manager.post(f"/admin/auth/user/{operator.pk}/delete/", {"post": "yes"}).status_code == 403
    )
    operator.refresh_from_db()
    assert operator.email == "" and operator.is_active


# --- Ordinary accounts in teams: their team's admins' to manage ------------------------------


@pytest.fixture
def teams(django_user_model, manager):
    """Team Shop (the manager administers it) and team Ledger (they are not in it)."""
    from jazzmine_web.teams.models import Role
    from jazzmine_web.teams.services import membership_set, team_create

    shop, ledger = team_create(name="Shop", slug="shop"), team_create(name="Ledger", slug="ledger")
    staff = django_user_model.objects.get(username="manager")
    membership_set(team=shop, user=staff, role=Role.ADMIN)

    def person(name: str, *memberships: tuple) -> object:
        user = django_user_model.objects.create_user(username=name, password=PASSWORD)
        for team, role in memberships:
            membership_set(team=team, user=user, role=role)
        return user

    return {
        "ledger admin": person("lea", (ledger, Role.ADMIN)),
        "ledger reviewer": person("rex", (ledger, Role.REVIEWER)),
        "in both": person("bo", (shop, Role.MEMBER), (ledger, Role.MEMBER)),
        "shop member": person("sam", (shop, Role.MEMBER)),
        "no team": person("nat"),
    }


@pytest.mark.parametrize("who", ["ledger admin", "ledger reviewer", "in both"])
def test_a_staff_user_cannot_take_over_a_person_of_a_team_they_do_not_administer(
    manager, teams, who
) -> None:
    """Setting their password and signing in as them was their team role in all but name: a
    team admin accepts code and sets secrets, a reviewer approves scripts."""
    victim = teams[who]
    url = f"/admin/auth/user/{victim.pk}/password/"
    assert manager.post(url, {"password1": TAKEN, "password2": TAKEN}).status_code == 403
    assert manager.post(f"/admin/auth/user/{victim.pk}/delete/", {"post": "yes"}).status_code == 403
    action = {"action": "delete_selected", "_selected_action": [victim.pk], "post": "yes"}
    manager.post("/admin/auth/user/", action)
    victim.refresh_from_db()
    assert victim.check_password(PASSWORD)


@pytest.mark.parametrize("who", ["shop member", "no team"])
def test_a_staff_user_still_resets_the_password_of_their_own_teams_people_and_of_no_team(
    manager, teams, who
) -> None:
    person = teams[who]
    url = f"/admin/auth/user/{person.pk}/password/"
    assert manager.post(url, {"password1": TAKEN, "password2": TAKEN}).status_code == 302
    person.refresh_from_db()
    assert person.check_password(TAKEN)
