"""The password page asks for the current password: the gate that keeps someone who only holds
a session (a cookie taken, a laptop left open) from making the account theirs. It was an
oracle with no limit: guess after guess at full speed, then the right one changed the password
and signed the owner out everywhere. Its wrong guesses now count as failed logins of that
username from that address: the login lock stops them as it stops guesses on the login page."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

OLD = "correct horse battery"  # the `user` fixture's password
NEW = "violet-harbour-57-kettles"
PAGE = "/account/password/"


def change(client: Client, old: str):
    return client.post(PAGE, {"old_password": old, "new_password1": NEW, "new_password2": NEW})


def test_guessing_the_current_password_is_locked_like_a_login(user, settings) -> None:
    assert settings.AXES_FAILURE_LIMIT == 5
    client = Client()
    client.force_login(user)  # a session someone holds, without the password
    for _ in range(settings.AXES_FAILURE_LIMIT):
        assert change(client, "a wrong guess").status_code in (200, 422, 429)
    locked = change(client, OLD)  # the right one, after the limit
    assert locked.status_code == 429
    assert "Too many wrong passwords" in locked.content.decode()
    user.refresh_from_db()
    assert user.check_password(OLD) and not user.check_password(NEW)
    # The same lock as the login page's: that username from this address.
    login = Client().post("/login/", {"username": "ada", "password": OLD})
    assert login.status_code == 429


def test_a_wrong_current_password_still_says_so_and_the_right_one_works(user) -> None:
    client = Client()
    client.force_login(user)
    wrong = change(client, "not it")
    assert "Your old password was entered incorrectly" in wrong.content.decode()
    assert change(client, OLD).status_code == 302
    user.refresh_from_db()
    assert user.check_password(NEW)


def test_the_new_password_field_is_no_oracle_of_the_current_one(user) -> None:
    # "The new password is the current one" answered a guess typed as the new password,
    # whatever was typed as the current one, and nothing counted those.
    client = Client()
    client.force_login(user)
    form = {"old_password": "a wrong guess", "new_password1": OLD, "new_password2": OLD}
    page = client.post(PAGE, form).content.decode()
    assert "Your old password was entered incorrectly" in page
    assert "is the current one" not in page
    # With the right current password, the page still says why a new one is refused.
    right = {"old_password": OLD, "new_password1": OLD, "new_password2": OLD}
    assert "is the current one" in client.post(PAGE, right).content.decode()


def test_the_admin_sites_own_password_form_leads_to_the_counted_one(user) -> None:
    user.is_staff = True
    user.save()
    client = Client()
    client.force_login(user)
    response = client.post(
        "/admin/password_change/",
        {"old_password": OLD, "new_password1": NEW, "new_password2": NEW},
    )
    assert response.status_code == 302 and response["Location"] == PAGE
    user.refresh_from_db()
    assert user.check_password(OLD)
