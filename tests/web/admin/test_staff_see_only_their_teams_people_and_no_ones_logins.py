"""The admin's people and login pages are no side door around teams, nor around a password.

- Django's form for setting another person's password asks for no current one, and it took
  one's own account too: a session left open (or stolen) set a new password, locked the owner
  out, and minted API tokens with it. One's own password is changed on the page that asks for
  the current one (and counts the guesses), for staff and superusers alike.
- The people list, its filters, each account's page and the people picker of memberships
  named every account of every team, superusers included (`?is_superuser__exact=1`), to any
  team's staff; and a staff admin of one team enlisted another team's reviewer as admin of a
  new team of theirs. A staff user sees their own account, their teams' people and people of
  no team.
- The login throttle's rows (every login of every team, and the locks) were any staff user's
  with the model permissions: a staff user of one team lifted the lock on another team's
  reviewer, and the guessing went on. They are a superuser's alone.
"""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt, AccessLog
from django.contrib.auth.models import Permission
from django.utils import timezone

from jazzmine_web.teams.models import Membership, Role
from jazzmine_web.teams.services import membership_set, team_create
from tests.web.helpers import signed_in

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-enough-password-1"
TAKEN = "taken-over-password-9"


@pytest.fixture
def people(django_user_model):
    """Team Shop, whose admin is staff with every account, team and login permission; team
    Ledger with its admin and reviewer; someone of no team; a superuser."""
    shop, ledger = team_create(name="Shop", slug="shop"), team_create(name="Ledger", slug="ledger")

    def person(name: str, *memberships: tuple, **flags) -> object:
        user = django_user_model.objects.create_user(username=name, password=PASSWORD, **flags)
        for team, role in memberships:
            membership_set(team=team, user=user, role=role)
        return user

    staff = person("manager", (shop, Role.ADMIN), is_staff=True)
    staff.user_permissions.add(
        *Permission.objects.filter(content_type__app_label__in=["auth", "teams", "axes"])
    )
    return {
        "staff": staff,
        "shop member": person("sam", (shop, Role.MEMBER)),
        "no team": person("nat"),
        "ledger admin": person("lea", (ledger, Role.ADMIN)),
        "ledger reviewer": person("rex", (ledger, Role.REVIEWER)),
        "superuser": person("root", is_superuser=True, is_staff=True),
        "shop": shop,
    }


@pytest.mark.parametrize("who", ["staff", "superuser"])
def test_ones_own_password_is_not_set_without_the_current_one(people, who) -> None:
    me = people[who]
    client = signed_in(me)
    url = f"/admin/auth/user/{me.pk}/password/"
    for _ in range(2):
        response = client.post(url, {"password1": TAKEN, "password2": TAKEN})
        assert response.status_code == 302 and response["Location"] == "/account/password/"
        assert client.get(url)["Location"] == "/account/password/"
    me.refresh_from_db()
    assert me.check_password(PASSWORD)


def test_a_superuser_still_sets_another_persons_password(people) -> None:
    person = people["ledger reviewer"]
    url = f"/admin/auth/user/{person.pk}/password/"
    assert signed_in(people["superuser"]).post(url, {"password1": TAKEN, "password2": TAKEN}).status_code == 302  # fmt: skip
    person.refresh_from_db()
    assert person.check_password(TAKEN)


def test_staff_list_only_their_teams_people_and_people_of_no_team(people) -> None:
    client = signed_in(people["staff"])
    for query in ("", "?is_superuser__exact=1", "?q=e", "?q=root"):
        page = client.get(f"/admin/auth/user/{query}").content.decode()
        for hidden in ("lea", "rex", "root"):
            assert f">{hidden}<" not in page, (query, hidden)
    page = client.get("/admin/auth/user/").content.decode()
    for shown in ("manager", "sam", "nat"):
        assert f">{shown}<" in page
    for hidden in ("ledger admin", "ledger reviewer", "superuser"):
        account = people[hidden]
        assert client.get(f"/admin/auth/user/{account.pk}/change/").status_code == 403
    picker = client.get(
        "/admin/autocomplete/",
        {"app_label": "teams", "model_name": "membership", "field_name": "user", "term": ""},
    ).json()
    assert {r["text"] for r in picker["results"]} == {"manager", "sam", "nat"}


def test_staff_enlist_no_other_teams_person(people) -> None:
    client = signed_in(people["staff"])
    reviewer = people["ledger reviewer"]
    response = client.post(
        "/admin/teams/membership/add/",
        {"team": people["shop"].pk, "user": reviewer.pk, "role": Role.ADMIN},
    )
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert not Membership.objects.filter(user=reviewer, team=people["shop"]).exists()
    # Someone of no team is still theirs to add.
    added = client.post(
        "/admin/teams/membership/add/",
        {"team": people["shop"].pk, "user": people["no team"].pk, "role": Role.MEMBER},
    )
    assert added.status_code == 302


def test_the_login_throttles_rows_are_a_superusers_alone(people) -> None:
    lock = AccessAttempt.objects.create(
        username="rex", ip_address="10.0.0.9", user_agent="x", get_data="", post_data="",
        http_accept="", path_info="/login/", failures_since_start=9,
    )  # fmt: skip
    AccessLog.objects.create(username="rex", ip_address="10.0.0.9", attempt_time=timezone.now())
    staff = signed_in(people["staff"])
    for url in ("/admin/axes/accessattempt/", "/admin/axes/accesslog/",
                f"/admin/axes/accessattempt/{lock.pk}/change/"):  # fmt: skip
        assert staff.get(url).status_code == 403, url
    action = {"action": "delete_selected", "_selected_action": [lock.pk], "post": "yes"}
    staff.post("/admin/axes/accessattempt/", action)
    assert staff.post(f"/admin/axes/accessattempt/{lock.pk}/delete/", {"post": "yes"}).status_code == 403  # fmt: skip
    assert AccessAttempt.objects.filter(pk=lock.pk).exists()
    root = signed_in(people["superuser"])
    assert root.get("/admin/axes/accessattempt/").status_code == 200
    root.post(f"/admin/axes/accessattempt/{lock.pk}/delete/", {"post": "yes"})
    assert not AccessAttempt.objects.filter(pk=lock.pk).exists()
