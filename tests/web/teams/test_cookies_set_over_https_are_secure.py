"""A cookie set over HTTPS is marked Secure, so the browser never sends it over plain HTTP.

Without the flag, a session cookie that a team's HTTPS studio set would go out in clear text to
any `http://` URL of the same host an attacker on the network makes the browser open. The
studio also runs over plain HTTP on loopback (`scripts/run.sh`, development), where a Secure
cookie would not be stored at all: the flag follows the request's scheme.
"""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

RIGHT = "correct horse battery"  # the `user` fixture's password


def logged_in_cookies(*, secure: bool, path: str = "/login/") -> dict:
    client = Client()
    client.get(path, secure=secure)  # the login page sets the CSRF cookie
    response = client.post(path, {"username": "ada", "password": RIGHT}, secure=secure)
    assert response.status_code == 302
    return {**client.cookies, **response.cookies}


@pytest.mark.parametrize("path", ["/login/", "/admin/login/"])
def test_the_session_and_csrf_cookies_set_over_https_are_secure(user, path) -> None:
    user.is_staff = True
    user.save()
    cookies = logged_in_cookies(secure=True, path=path)
    session, csrf = cookies["sessionid"], cookies["csrftoken"]
    assert session["secure"] is True and csrf["secure"] is True
    assert session["httponly"] is True and session["samesite"] == "Lax"


def test_over_plain_http_the_cookies_still_work(user) -> None:
    cookies = logged_in_cookies(secure=False)
    assert not cookies["sessionid"]["secure"] and not cookies["csrftoken"]["secure"]


def test_a_forwarded_proto_header_from_the_client_is_not_believed(user) -> None:
    client = Client(headers={"X-Forwarded-Proto": "https"})
    client.post("/login/", {"username": "ada", "password": RIGHT})
    assert not client.cookies["sessionid"]["secure"]
