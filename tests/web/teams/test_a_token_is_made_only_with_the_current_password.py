"""Making an API token asks for the current password, checked as a login is.

A token acts as its owner past the session it was made in: someone who holds only a session
(a cookie taken, a laptop left open) made one without a word, and kept it past the owner's
password change and sign-out. The page now asks for the password, says why, refuses a wrong
one saying so, and counts it as a failed login of that username from that address: after the
limit it is locked, the right password too, as the login page and the password page are.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.teams.models import ApiToken

pytestmark = pytest.mark.django_db

OLD = "correct horse battery"  # the `user` fixture's password
PAGE = "/account/tokens/"


@pytest.fixture
def session(user) -> Client:
    """A session held without the password (force_login: no password given)."""
    client = Client()
    client.force_login(user)
    return client


def test_the_page_asks_for_the_password_and_says_why(session) -> None:
    page = session.get(PAGE).content.decode()
    assert 'type="password" name="password"' in page
    assert "making one asks for your password" in page


def test_a_session_alone_cannot_mint_a_token(session) -> None:
    response = session.post(PAGE, {"name": "backup"})
    assert response.status_code == 422
    assert "The token was not created: give your password." in response.content.decode()
    assert 'id="new-token"' not in response.content.decode()
    assert not ApiToken.objects.exists()


@pytest.mark.parametrize("htmx", [False, True], ids=["form", "htmx"])
def test_a_wrong_password_is_refused_saying_so(session, htmx) -> None:
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    response = session.post(PAGE, {"name": "backup", "password": "a guess"}, **headers)
    assert response.status_code == 422
    html = response.content.decode()
    assert "Your password was entered incorrectly: the token was not created." in html
    assert 'id="new-token"' not in html
    assert not ApiToken.objects.exists()
    right = session.post(PAGE, {"name": "backup", "password": OLD}, **headers)
    assert right.status_code == 200 and 'id="new-token"' in right.content.decode()
    assert ApiToken.objects.get().name == "backup"


def test_guessing_the_password_is_locked_like_a_login(session, settings) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT):
        # Refused; the guess that reaches the limit is told of the lock already.
        assert session.post(PAGE, {"name": "x", "password": "a guess"}).status_code in (422, 429)
    locked = session.post(PAGE, {"name": "x", "password": OLD})  # the right one, too late
    assert locked.status_code == 429
    assert "Too many wrong passwords" in locked.content.decode()
    assert not ApiToken.objects.exists()
    # The same lock as the login page's: that username from this address.
    assert Client().post("/login/", {"username": "ada", "password": OLD}).status_code == 429
