"""A request header or cookie holding a NUL character is refused (400) naming it, before
anything reads it; nothing is stored.

Headers are stored (an agent's User-Agent on its submission, a login's User-Agent and Accept
in django-axes' log) and cookies looked up (the session's key), and PostgreSQL can do neither
with a NUL: each was a 500 there. The web process refuses a NUL byte in a header itself
(Twisted answers 400), but not a cookie quoted `"a\\000b"`, plain ASCII on the wire, which
Django unquotes to a NUL: every page and socket of such a browser was a 500.
"""

from __future__ import annotations

import socket

import pytest
from axes.models import AccessAttempt, AccessLog
from channels.testing import WebsocketCommunicator
from django.test import Client

from jazzmine_web.asgi import application
from jazzmine_web.reviews.models import Submission
from jazzmine_web.teams.services import api_token_create
from tests.web.reviews.conftest import BODY
from tests.workers import web_on_test_database

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"


def _refused(response, field: str) -> bool:
    assert response.status_code == 400, (response.status_code, response.content[:300])
    assert f"'{field}' contains a NUL character" in response.content.decode()
    return True


def test_an_agents_user_agent_with_a_nul_is_refused(member, ecommerce) -> None:
    issued = api_token_create(user=member, name="ci-bot")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}", raise_request_exception=False)
    payload = {"sandbox": ecommerce.pk, "task": "t", "body": BODY}
    response = api.post(
        "/api/v1/submissions/", payload, content_type="application/json",
        HTTP_USER_AGENT="bot/1\x00",
    )  # fmt: skip
    assert _refused(response, "the User-Agent header")
    assert response.json()["error"]["code"] == "invalid_field"
    assert not Submission.objects.exists()


@pytest.mark.parametrize("password", [PASSWORD, "wrong"], ids=["login", "failed-login"])
def test_a_login_with_a_nul_in_a_header_is_refused(user, password) -> None:
    browser = Client(raise_request_exception=False)
    form = {"username": user.username, "password": password}
    assert _refused(browser.post("/login/", form, HTTP_ACCEPT="text/html\x00"), "the Accept header")
    assert not AccessLog.objects.exists() and not AccessAttempt.objects.exists()


def test_a_session_cookie_with_a_nul_is_refused(member) -> None:
    browser = Client(raise_request_exception=False)
    browser.cookies["sessionid"] = "abcdefgh\x00ijklmnop"  # sent quoted: "abcdefgh\000ijklmnop"
    assert _refused(browser.get("/runs/"), "the sessionid cookie")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "cookie", [b"sessionid=abcdefgh\x00ijkl", b'sessionid="abcdefgh\\000ijkl"']
)
async def test_a_socket_handshake_with_a_nul_in_a_cookie_is_refused(member, cookie) -> None:
    nul = [(b"cookie", cookie), (b"origin", b"http://localhost")]
    ws = WebsocketCommunicator(application, "/ws/playground/", headers=nul)
    connected, _ = await ws.connect(timeout=5)
    assert not connected
    await ws.disconnect()


@pytest.fixture(scope="module")
def web(django_db_setup, tmp_path_factory):
    """The web process as the Procfile starts it, on the test database."""
    with web_on_test_database(tmp_path_factory.mktemp("web-log")) as web:
        yield int(web.url.rsplit(":", 1)[1])


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "header",
    [b"User-Agent: bot\x00", b"Cookie: sessionid=abcdefgh\x00ijkl", b"Accept: \x00"],
    ids=["user-agent", "cookie", "accept"],
)
def test_the_web_process_refuses_a_nul_in_a_header_itself(web, header) -> None:
    with socket.create_connection(("127.0.0.1", web), timeout=10) as sock:
        sock.sendall(b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n" + header + b"\r\n\r\n")
        answer = b""
        while data := sock.recv(65536):
            answer += data
    # The web server's own answer: no Django page, so no view, session or throttle read the
    # header; it says what is wrong (a bare 400 said nothing).
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n"), answer[:300]
    assert b"could not be read as HTTP" in answer and b"with a NUL" in answer


@pytest.mark.django_db(transaction=True)
def test_the_web_process_refuses_a_cookie_that_unquotes_to_a_nul(web) -> None:
    # Plain ASCII on the wire, so Twisted lets it through; Django's cookie parser unquotes
    # Python's way, and `\000` is a NUL in the session key it looks up.
    with socket.create_connection(("127.0.0.1", web), timeout=10) as sock:
        sock.sendall(
            b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            b'Cookie: sessionid="abcdefgh\\000ijkl"\r\n\r\n'
        )
        answer = b""
        while data := sock.recv(65536):
            answer += data
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:300]
    assert b"'the sessionid cookie' contains a NUL character" in answer
