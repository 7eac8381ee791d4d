"""A staff user who manages accounts in the admin cannot make anyone (themselves first) more than
they are: not superuser, not more permissions, directly or through a group, and cannot take
over a superuser's account by its password. A superuser passes every team check in the studio
(it approves any script), so each of these would be a way around review.

The staff user here has every permission Django's account admin offers (users, groups,
permissions): the most a superuser would ever delegate.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission
from django.test import Client

from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import membership_set

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-enough-password-1"


@pytest.fixture
def manager(django_user_model, team):
    """A staff user with every account permission, and their logged-in browser; admin of the
    team `member` (ada) is in, whose people are theirs to manage (no other team's)."""
    user = django_user_model.objects.create_user(username="manager", password=PASSWORD)
    membership_set(team=team, user=user, role=Role.ADMIN)
    user.is_staff = True
    user.save()
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="auth"))
    client = Client()
    client.force_login(user)
    return user, client


@pytest.fixture
def root(django_user_model):
    return django_user_model.objects.create_superuser(username="root", password=PASSWORD)


def change_form(user, **changes) -> dict:
    """Return the admin change form of a user as a browser would post it, with changes."""
    data = {
        "username": user.username,
        "first_name": user.first_name,
        "last_name": user.last_name,
        "email": user.email,
        "is_active": "on" if user.is_active else "",
        "is_staff": "on" if user.is_staff else "",
        "last_login_0": "",
        "last_login_1": "",
        "date_joined_0": user.date_joined.strftime("%Y-%m-%d"),
        "date_joined_1": user.date_joined.strftime("%H:%M:%S"),
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v != ""}


def every_permission() -> list[str]:
    return [str(pk) for pk in Permission.objects.values_list("pk", flat=True)]


def reloaded(user):
    user.refresh_from_db()
    return user


@pytest.mark.parametrize(
    "changes",
    [
        {"is_superuser": "on"},
        {"is_superuser": "true"},
        {"is_superuser": "1"},
        {"user_permissions": "every"},
        {"groups": "powerful"},
        {"is_superuser": "on", "user_permissions": "every", "groups": "powerful"},
    ],
    ids=["superuser", "superuser-true", "superuser-1", "permissions", "group", "all-at-once"],
)
def test_a_staff_user_cannot_raise_their_own_account(manager, changes) -> None:
    user, client = manager
    powerful = Group.objects.create(name="powerful")
    granted_before = set(user.user_permissions.values_list("pk", flat=True))
    data = change_form(user, **changes)
    if "user_permissions" in changes:
        data["user_permissions"] = every_permission()
    if "groups" in changes:
        data["groups"] = [str(powerful.pk)]
    response = client.post(f"/admin/auth/user/{user.pk}/change/", data)
    assert response.status_code in (200, 302)
    user = reloaded(user)
    assert not user.is_superuser
    assert set(user.user_permissions.values_list("pk", flat=True)) == granted_before
    assert not user.groups.exists()


def test_a_staff_user_cannot_raise_another_account(manager, member) -> None:
    _user, client = manager
    data = change_form(member, is_superuser="on", is_staff="on")
    data["user_permissions"] = every_permission()
    assert client.post(f"/admin/auth/user/{member.pk}/change/", data).status_code in (200, 302)
    member = reloaded(member)
    assert not member.is_superuser and not member.is_staff
    assert not member.user_permissions.exists()


def test_a_staff_user_cannot_give_a_group_they_are_in_more_permissions(manager) -> None:
    user, client = manager
    group = Group.objects.create(name="managers")
    user.groups.add(group)  # as a superuser made it
    response = client.post(
        f"/admin/auth/group/{group.pk}/change/",
        {"name": "managers", "permissions": every_permission()},
    )
    assert response.status_code in (200, 302)
    assert not group.permissions.exists()
    response = client.post(
        "/admin/auth/group/add/", {"name": "fresh", "permissions": every_permission()}
    )
    assert response.status_code in (200, 302)
    assert not Group.objects.get(name="fresh").permissions.exists()


def test_a_staff_user_cannot_take_over_a_superusers_account(manager, root) -> None:
    _user, client = manager
    response = client.post(
        f"/admin/auth/user/{root.pk}/password/",
        {"password1": "taken-over-password-9", "password2": "taken-over-password-9"},
    )
    assert response.status_code == 403
    assert reloaded(root).check_password(PASSWORD)
    response = client.post(
        f"/admin/auth/user/{root.pk}/change/",
        change_form(root, email="attacker@example.com", is_active=""),
    )
    assert response.status_code == 403
    root = reloaded(root)
    assert root.is_active and root.email == ""


def test_a_staff_user_cannot_delete_a_superuser_one_by_one_or_in_bulk(
    manager, root, django_user_model
) -> None:
    _user, client = manager
    assert client.post(f"/admin/auth/user/{root.pk}/delete/", {"post": "yes"}).status_code == 403
    response = client.post(
        "/admin/auth/user/",
        {"action": "delete_selected", "_selected_action": [str(root.pk)], "post": "yes"},
    )
    assert response.status_code in (200, 302, 403)
    assert django_user_model.objects.filter(pk=root.pk).exists()


def test_staff_still_manage_ordinary_accounts(manager, member, django_user_model) -> None:
    _user, client = manager
    response = client.post(
        f"/admin/auth/user/{member.pk}/change/",
        change_form(member, email="ada@example.com", is_active=""),
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    member = reloaded(member)
    assert member.email == "ada@example.com" and not member.is_active
    response = client.post(
        f"/admin/auth/user/{member.pk}/password/",
        {"password1": "a-new-password-for-ada-7", "password2": "a-new-password-for-ada-7"},
    )
    assert response.status_code == 302
    assert reloaded(member).check_password("a-new-password-for-ada-7")
    response = client.post(
        "/admin/auth/user/add/",
        {
            "username": "newcomer",
            "password1": PASSWORD,
            "password2": PASSWORD,
            "usable_password": "true",
        },
    )
    assert response.status_code == 302
    assert django_user_model.objects.filter(username="newcomer", is_superuser=False).exists()


def test_a_superuser_still_grants_powers(root, member) -> None:
    client = Client()
    client.force_login(root)
    data = change_form(member, is_superuser="on", is_staff="on")
    assert client.post(f"/admin/auth/user/{member.pk}/change/", data).status_code == 302
    member = reloaded(member)
    assert member.is_superuser and member.is_staff
