"""A websocket lives no longer than the login it was opened with.

A browser's socket is authenticated once, at its handshake, from the session cookie. Whoever
holds that cookie (a stolen one too) must lose the socket where Django would refuse the cookie
on the next page: the session logged out (by its owner, in another tab), its user's password
changed, the user deactivated, the session expired. Until then an open playground socket went
on starting runs, and an open review queue went on streaming the team's new submissions.

The socket relies on a check for at most a second (a check per message would be two queries
per keystroke of the editor), so each sign-out here is followed by a wait of that second.
"""

from __future__ import annotations

import asyncio
import datetime

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.test import Client

from jazzmine_web.asgi import application
from jazzmine_web.reviews.services import submission_create
from jazzmine_web.runs.models import Run, RunEvent
from jazzmine_web.runs.services import run_create, run_record_event
from jazzmine_web.studio import live
from jazzmine_web.teams.models import Role
from tests.web.helpers import teammate

pytestmark = pytest.mark.django_db(transaction=True)

# The longest the socket relies on its last check (studio.session_bound), and a margin.
RELIED_ON_SECONDS = 1.0 + 0.1
SIGNED_OUT = 4403  # the code a socket refused at its handshake gets too: the page stops
RUN_NOT_FOUND = 4404  # a run page's socket closes as for a run one may not see
BODY = "emit_result(1)\n"


@database_sync_to_async
def signed_in_browser(user) -> tuple[Client, list[tuple[bytes, bytes]]]:
    """Log in through the login page; return the browser and its socket handshake headers."""
    client = Client()
    response = client.post("/login/", {"username": user.username, "password": "x" * 12})
    assert response.status_code == 302
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    return client, [(b"cookie", cookie.encode()), (b"origin", b"http://localhost")]


@database_sync_to_async
def logged_out(user, browser: Client) -> None:
    assert browser.post("/logout/").status_code == 302


@database_sync_to_async
def password_changed(user, browser: Client) -> None:
    user.set_password("a new password nobody else has")
    user.save()


@database_sync_to_async
def deactivated(user, browser: Client) -> None:
    get_user_model().objects.filter(pk=user.pk).update(is_active=False)


@database_sync_to_async
def expired(user, browser: Client) -> None:
    past = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
    Session.objects.filter(session_key=browser.cookies["sessionid"].value).update(expire_date=past)


async def open_socket(path: str, headers) -> WebsocketCommunicator:
    ws = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await ws.connect(timeout=5)
    assert connected
    return ws


async def closed_with(ws: WebsocketCommunicator, code: int) -> bool:
    """Tell whether the socket's next output is its close, with this code (nothing sent first)."""
    return await ws.receive_output(timeout=5) == {"type": "websocket.close", "code": code}


def runs_of(user) -> int:
    return Run.objects.filter(created_by=user).count()


@pytest.fixture
def signed_in(ecommerce):
    """A team member who logged in through the login page (password 'xxxxxxxxxxxx')."""
    return teammate(ecommerce.team, Role.MEMBER, username="eve")


@pytest.mark.parametrize("sign_out", [logged_out, password_changed, deactivated, expired])
async def test_a_signed_out_playground_socket_starts_no_run(sign_out, ecommerce, signed_in):
    browser, headers = await signed_in_browser(signed_in)
    ws = await open_socket("/ws/playground/", headers)
    try:
        await sign_out(signed_in, browser)
        await asyncio.sleep(RELIED_ON_SECONDS)
        await ws.send_json_to({"type": "run", "sandbox": ecommerce.pk, "body": BODY, "task": "t"})
        assert await closed_with(ws, SIGNED_OUT)
        assert await database_sync_to_async(runs_of)(signed_in) == 0
    finally:
        await ws.disconnect()


@pytest.mark.docker
async def test_a_signed_in_playground_socket_still_runs(ecommerce, signed_in, worker):
    _browser, headers = await signed_in_browser(signed_in)
    ws = await open_socket("/ws/playground/", headers)
    try:
        await asyncio.sleep(RELIED_ON_SECONDS)
        await ws.send_json_to({"type": "run", "sandbox": ecommerce.pk, "body": BODY, "task": "t"})
        assert (await ws.receive_json_from(timeout=5))["type"] == "run_created"
        assert await database_sync_to_async(runs_of)(signed_in) == 1
    finally:
        await ws.disconnect()


@pytest.mark.parametrize("sign_out", [logged_out, password_changed, deactivated])
async def test_a_signed_out_review_queue_hears_of_no_new_submission(sign_out, ecommerce, member):
    reviewer = await database_sync_to_async(teammate)(ecommerce.team, Role.REVIEWER)
    browser, headers = await signed_in_browser(reviewer)
    ws = await open_socket("/ws/reviews/queue/", headers)
    try:
        assert '<table id="queue-table"' in await ws.receive_from(timeout=5)
        await sign_out(reviewer, browser)
        await asyncio.sleep(RELIED_ON_SECONDS)
        await database_sync_to_async(submission_create)(
            sandbox=ecommerce, user=member, token=None, task="Refund every order", body=BODY
        )
        assert await closed_with(ws, SIGNED_OUT)
    finally:
        await ws.disconnect()


@pytest.mark.parametrize("sign_out", [logged_out, password_changed])
async def test_a_signed_out_run_socket_streams_no_more_events(sign_out, ecommerce, signed_in):
    run = await database_sync_to_async(run_create)(
        sandbox=ecommerce, user=signed_in, body=BODY, start=False
    )
    browser, headers = await signed_in_browser(signed_in)
    ws = await open_socket(f"/ws/runs/{run.pk}/", headers)
    try:
        await ws.receive_from(timeout=5)  # the stored events and the status the run has now
        await sign_out(signed_in, browser)
        await asyncio.sleep(RELIED_ON_SECONDS)
        event = {"seq": 1, "type": "log", "data": {"message": "secret"}, "ts": 0.0}
        await database_sync_to_async(run_record_event)(run_id=run.pk, event=event)
        assert await closed_with(ws, RUN_NOT_FOUND)
    finally:
        await ws.disconnect()


async def test_a_signed_out_run_socket_sends_nothing_its_catch_up_read_finds(
    ecommerce, signed_in, monkeypatch
):
    # Not a message the socket handles but a read of its own after a silence, then a send.
    monkeypatch.setattr(live, "SILENCE_SECONDS", 0.3)
    run = await database_sync_to_async(run_create)(
        sandbox=ecommerce, user=signed_in, body=BODY, start=False
    )
    browser, headers = await signed_in_browser(signed_in)
    ws = await open_socket(f"/ws/runs/{run.pk}/", headers)
    try:
        await ws.receive_from(timeout=5)
        await logged_out(signed_in, browser)
        await asyncio.sleep(RELIED_ON_SECONDS)
        event = {"seq": 1, "type": "log", "data": {"message": "secret"}, "ts": 0.0}
        # Stored with no live message: only the read after the silence would show it.
        await database_sync_to_async(RunEvent.objects.create)(run=run, **event)
        assert await closed_with(ws, RUN_NOT_FOUND)
    finally:
        await ws.disconnect()
