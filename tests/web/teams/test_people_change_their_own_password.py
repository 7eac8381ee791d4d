"""Anyone signed in changes their own password at /account/password/ (their name in the top bar
leads there): the current password first, a new one the validators accept, twice. The session
that changed it stays signed in; every other one is signed out, its open sockets included."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from jazzmine_web.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)

OLD = "correct horse battery"  # the `user` fixture's password
NEW = "violet-harbour-57-kettles"
PAGE = "/account/password/"


def signed_in(password: str = OLD) -> Client:
    client = Client()
    response = client.post("/login/", {"username": "ada", "password": password})
    assert response.status_code == 302, response.status_code
    return client


def change(client: Client, old: str, new: str, again: str | None = None):
    form = {"old_password": old, "new_password1": new, "new_password2": again or new}
    return client.post(PAGE, form)


def can_log_in(password: str) -> bool:
    return Client().post("/login/", {"username": "ada", "password": password}).status_code == 302


def test_the_top_bar_leads_to_the_page_and_strangers_are_sent_to_log_in(user) -> None:
    assert f'href="{PAGE}"' in signed_in().get("/").content.decode()
    response = Client().get(PAGE)
    assert response.status_code == 302 and response["Location"].startswith("/login/")


@pytest.mark.parametrize(
    ("old", "new", "again", "why"),
    [
        ("not my password", NEW, None, "Your old password was entered incorrectly"),
        (OLD, "password", None, "This password is too common"),
        (OLD, "  Password  ", None, "This password is too common"),
        (OLD, "12345678901", None, "This password is entirely numeric"),
        (OLD, NEW, NEW + "x", "The two password fields didn"),
        (OLD, "", None, "This field is required"),
        (OLD, OLD, None, "The new password is the current one"),
    ],
    ids=["wrong-old", "common", "common-spaced", "numeric", "mismatch", "empty", "unchanged"],
)
def test_a_refused_change_says_why_and_changes_nothing(user, old, new, again, why) -> None:
    client = signed_in()
    response = change(client, old, new, again)
    assert response.status_code == 200
    assert why in response.content.decode()
    assert can_log_in(OLD)
    assert client.get("/").status_code == 200


def test_a_change_keeps_this_session_and_signs_out_the_others(user) -> None:
    here, elsewhere = signed_in(), signed_in()
    response = change(here, OLD, NEW)
    assert response.status_code == 302 and response["Location"] == PAGE
    assert "Password changed." in here.get(PAGE).content.decode()
    assert here.get("/").status_code == 200
    gone = elsewhere.get("/")
    assert gone.status_code == 302 and gone["Location"].startswith("/login/")
    assert can_log_in(NEW) and not can_log_in(OLD)

    # And again, with the new one as the current password.
    assert change(here, NEW, NEW + "-2")["Location"] == PAGE
    assert can_log_in(NEW + "-2") and not can_log_in(NEW)


async def test_an_open_socket_of_another_session_closes_after_the_change(user) -> None:
    elsewhere = await database_sync_to_async(signed_in)()
    cookie = f"sessionid={elsewhere.cookies['sessionid'].value}".encode()
    headers = [(b"cookie", cookie), (b"origin", b"http://localhost")]
    ws = WebsocketCommunicator(application, "/ws/playground/", headers=headers)
    assert (await ws.connect(timeout=5))[0]
    try:
        here = await database_sync_to_async(signed_in)()
        response = await database_sync_to_async(change)(here, OLD, NEW)
        assert response.status_code == 302
        await asyncio.sleep(1.1)  # the socket relies on its last check for up to a second
        await ws.send_json_to({"type": "check", "body": "emit_result(1)\n"})
        assert await ws.receive_output(timeout=5) == {"type": "websocket.close", "code": 4403}
    finally:
        await ws.disconnect()
