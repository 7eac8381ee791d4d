"""What a run was refused as the worker prepared it reaches the pages already watching it.

The worker writes a run's notes (secrets withheld from code no admin accepted, tools that now
need a person's approval) as it prepares the run, after the page that started it is open: the
playground's pane, a run page opened while it was queued. Those pages learn the notes with
`running`, without a reload; a reload shows them in the same place, once.

Here a member changed `send_receipt`'s code and no admin accepted it, so the run's process gets
none of the sandbox's secrets (Python tools share it), and the script never calls that tool:
only the note tells the person why a secret is missing.
"""

from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from jazzmine_web.asgi import application
from jazzmine_web.catalog.services import sandbox_update, secret_value_set
from jazzmine_web.runs.models import RunStatus
from jazzmine_web.runs.services import run_create, run_start
from jazzmine_web.teams.models import Role
from tests.web.helpers import playground_socket, teammate, tool_form_post, ws_headers

from .html import receive_until_finished, status

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

BODIES = {
    "python": 'emit_result(get_orders(status="delivered").success)\n',
    "bash": "get_orders --status delivered | jq '.orders | length'\n",
}
NOTE = re.compile(r'<p class="notice" data-run-note>([^<]*)</p>')


def notes_region(html: str, run_id: object) -> str | None:
    """Return the notes region a fragment (re)places, if it places one."""
    found = re.search(rf'<div class="run-notes" id="run-{run_id}-notes"[^>]*>(.*?)</div>', html)
    return found[1] if found else None


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def page_of(user, path: str) -> str:
    return browser(user).get(path).content.decode()


@pytest.fixture
def withheld(ecommerce, team, member):
    """The demo with a sandbox secret set by its admin, and a member's unaccepted code change."""
    admin = teammate(team, Role.ADMIN, username="root_admin")
    sandbox_update(sandbox=ecommerce, actor=admin, secrets=["SHOP_KEY"])
    secret_value_set(sandbox=ecommerce, name="SHOP_KEY", value="shop-1", user=admin, actor=admin)
    tool = ecommerce.tools.get(name="send_receipt")
    head = tool.source[: tool.source.index(":\n") + 2]
    tool_form_post(browser(member), tool, source=head + "    return ToolResponse(success=True)\n")
    return ecommerce


@pytest.mark.parametrize("language", ["python", "bash"])
async def test_a_run_page_open_while_queued_shows_the_notes_with_running(
    withheld, member, worker, language
) -> None:
    run = await database_sync_to_async(run_create)(
        sandbox=withheld, user=member, body=BODIES[language], language=language, start=False
    )
    headers = await database_sync_to_async(ws_headers)(member)
    ws = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=headers)
    assert (await ws.connect())[0]
    try:
        first = await ws.receive_from(timeout=5)
        await database_sync_to_async(run_start)(run=run)
        fragments, final = await receive_until_finished(ws)
    finally:
        await ws.disconnect()
    # Queued: nothing refused yet, and the page is told so.
    assert status(first) == RunStatus.QUEUED and notes_region(first, run.pk) == ""
    told = [(status(f), notes_region(f, run.pk)) for f in fragments]
    told = [(s, region) for s, region in told if region is not None]
    assert told and told[0][0] == RunStatus.RUNNING, told
    [note] = NOTE.findall(told[0][1])
    assert "SHOP_KEY" in note and "send_receipt" in note, note
    assert 'hx-swap-oob="true"' in next(f for f in fragments if notes_region(f, run.pk))
    # No later fragment empties them (the end's status does not tell notes again).
    assert all(NOTE.findall(region) == [note] for _s, region in told)
    assert final == RunStatus.SUCCEEDED

    # A reload shows them in the run's pane, once, as the live page did.
    page = await database_sync_to_async(page_of)(member, f"/runs/{run.pk}/")
    assert NOTE.findall(notes_region(page, run.pk) or "") == [note]
    assert len(NOTE.findall(page)) == 1


async def test_the_playground_pane_shows_the_notes_of_the_run_it_started(
    withheld, member, worker
) -> None:
    ws = await playground_socket(member)
    try:
        body = BODIES["python"]
        await ws.send_json_to({"type": "run", "sandbox": withheld.pk, "task": "t", "body": body})
        created = await ws.receive_json_from(timeout=10)
        assert created["type"] == "run_created"
        run_id = created["run_id"]
        pane = await ws.receive_json_from(timeout=10)
        assert pane["type"] == "run_pane" and notes_region(pane["html"], run_id) == ""
        notes: list[str] = []
        while True:
            message = await ws.receive_json_from(timeout=120)
            if message["type"] == "run_html":
                region = notes_region(message["html"], run_id)
                notes = NOTE.findall(region) if region is not None else notes
            elif message["status"] in RunStatus.finished():
                break
    finally:
        await ws.disconnect()
    assert message["status"] == RunStatus.SUCCEEDED
    assert len(notes) == 1 and "SHOP_KEY" in notes[0], notes


async def test_a_run_nothing_was_refused_tells_an_empty_region(ecommerce, member, worker) -> None:
    run = await database_sync_to_async(run_create)(
        sandbox=ecommerce, user=member, body=BODIES["python"], start=False
    )
    headers = await database_sync_to_async(ws_headers)(member)
    ws = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=headers)
    assert (await ws.connect())[0]
    try:
        await ws.receive_from(timeout=5)
        await database_sync_to_async(run_start)(run=run)
        fragments, final = await receive_until_finished(ws)
    finally:
        await ws.disconnect()
    regions = [notes_region(f, run.pk) for f in fragments]
    assert "" in regions and all(not region for region in regions)
    assert final == RunStatus.SUCCEEDED
